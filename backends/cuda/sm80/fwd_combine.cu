// The split-KV forward's last step (decode_kernel.cuh): the
// parts' normalised outputs O_s and logsumexps lse_s of each query row
// merged into
//     lse = log sum_s exp(lse_s),   out = sum_s exp(lse_s - lse) O_s,
// which is the softmax over all the row's keys. A part whose keys the row
// does not see has lse_s = -inf and O_s = 0 (decode_kernel writes both, also
// for an empty part) and weighs 0; a row that sees no key in any part gets
// out 0 and lse -inf.
#include <cmath>

#include "dependent_launch.cuh"
#include "sm80/launch.cuh"

namespace fa2::cuda {
namespace {

// A CTA a row: warp w sums the parts w, w + 4, ... over all columns, a
// lane four columns at a time, and the four sums meet in shared memory.
// Each warp first issues the loads of its first kAhead parts' columns and
// of every part's lse, then works out the parts' weights itself while they
// arrive: one trip to L2 before the sums rather than two in a row (lse,
// then the parts) with a barrier between. At batch 1 a step has 32 rows of
// 16-64 parts; a warp a row that walked its parts one by one took 4.6-6.4
// us, four warps 2.6-2.8 us (torch.profiler, H100, 2026-12-05; cuDNN's
// reduction 2.0-2.9).
constexpr int kCombineWarps = 4;
constexpr int kAhead = 4;                   // parts a warp loads before the weights
constexpr int kLaneColumns = 256 / 4 / 32;  // float4 columns a lane, largest head dim

__device__ inline float warp_max(float x) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, d));
  return x;
}
__device__ inline float warp_sum(float x) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) x += __shfl_xor_sync(0xffffffffu, x, d);
  return x;
}
__device__ inline void add_scaled(float4 &acc, float w, const float4 &o) {
  acc.x += w * o.x, acc.y += w * o.y, acc.z += w * o.z, acc.w += w * o.w;
}

template <class T>
__global__ void __launch_bounds__(kCombineWarps * 32) fwd_combine_kernel(const core::AttnParams p) {
  __shared__ float weight[kCombineWarps][kMaxKvSplits];
  __shared__ float4 warp_sums[kCombineWarps][kLaneColumns * 32];
  const int64_t rows = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int64_t index = blockIdx.x;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const core::StatRow at = core::stat_row(p, index);
  const core::SeqInfo seq = core::seq_info(p, at.batch);
  if (at.row >= seq.seqlen_q) return;  // past a varlen sequence's end: another's rows
  // Launched as the decode kernel's programmatic dependent: its parts are
  // complete and visible only past this wait (a no-op for a plain launch).
  grid_dependency_wait();

  const int columns4 = p.head_dim / 4;  // head_dim: a multiple of 8
  const float4 *parts = reinterpret_cast<const float4 *>(p.out_partial) + index * columns4;
  const int64_t part_stride = rows * columns4;  // float4s from one part of a row to the next
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  float4 ahead[kAhead][kLaneColumns];
#pragma unroll
  for (int a = 0; a < kAhead; ++a) {
    const int s = warp + kCombineWarps * a;
#pragma unroll
    for (int i = 0; i < kLaneColumns; ++i) {
      const int c = lane + 32 * i;
      ahead[a][i] = s < p.kv_splits && c < columns4 ? parts[s * part_stride + c] : zero;
    }
  }

  float part_lse[kMaxKvSplits / 32];
  float top = -INFINITY;
#pragma unroll
  for (int j = 0; j < kMaxKvSplits / 32; ++j) {
    const int s = lane + 32 * j;
    part_lse[j] = s < p.kv_splits ? p.lse_partial[s * rows + index] : -INFINITY;
    top = fmaxf(top, part_lse[j]);
  }
  top = warp_max(top);
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kMaxKvSplits / 32; ++j)
    if (part_lse[j] != -INFINITY) sum += expf(part_lse[j] - top);
  const float lse = top == -INFINITY ? -INFINITY : top + logf(warp_sum(sum));
  float *const w = weight[warp];  // this warp's copy: no barrier between the warps
#pragma unroll
  for (int j = 0; j < kMaxKvSplits / 32; ++j)
    w[lane + 32 * j] = part_lse[j] == -INFINITY ? 0.f : expf(part_lse[j] - lse);
  if (threadIdx.x == 0) p.lse[index] = lse;
  __syncwarp();

  float4 acc[kLaneColumns];
#pragma unroll
  for (int i = 0; i < kLaneColumns; ++i) {
    acc[i] = zero;
#pragma unroll
    for (int a = 0; a < kAhead; ++a)  // parts past kv_splits weigh 0 and loaded 0
      add_scaled(acc[i], w[warp + kCombineWarps * a], ahead[a][i]);
  }
  // More parts than kCombineWarps x kAhead: the rest four at a time a warp.
#pragma unroll
  for (int i = 0; i < kLaneColumns; ++i) {
    const int c = lane + 32 * i;
    if (c >= columns4) break;
#pragma unroll 4
    for (int s = warp + kCombineWarps * kAhead; s < p.kv_splits; s += kCombineWarps)
      add_scaled(acc[i], w[s], parts[s * part_stride + c]);
    warp_sums[warp][c] = acc[i];
  }
  __syncthreads();

  T *out = static_cast<T *>(p.out.data) +
           core::query_row_offset(p, p.out, at.batch, seq.q_row0, at.row, at.head_q);
  for (int c = threadIdx.x; c < columns4; c += kCombineWarps * 32) {
    float4 total = warp_sums[0][c];
#pragma unroll
    for (int v = 1; v < kCombineWarps; ++v) {
      const float4 x = warp_sums[v][c];
      total.x += x.x, total.y += x.y, total.z += x.z, total.w += x.w;
    }
    *reinterpret_cast<uint2 *>(out + 4 * c) =
        make_uint2(Element<T>::pack(total.x, total.y), Element<T>::pack(total.z, total.w));
  }
}

}  // namespace

template <class T>
fa2_status_t launch_fwd_combine(const core::AttnParams &p, cudaStream_t stream, std::string &why) {
  static_assert(kMaxKvSplits % 32 == 0 && kCombineWarps * kAhead <= kMaxKvSplits,
                "a warp's lanes over the parts");
  unsigned grid = 0;
  const fa2_status_t status = grid_size(int64_t(p.batch) * p.heads_q * p.seqlen_q, grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  // From sm90 on the combine launches while the decode kernel still runs
  // (programmatic dependent launch), so its launch and its first lines
  // hide behind that kernel (decode grid at batch 1, 1k keys: 14.1 -> 12.7
  // us, H100, 2026-12-06). Older GPUs launch it after.
  bool waits = false;
  if (const fa2_status_t asked = code_waits<fwd_combine_kernel<T>>(waits, why);
      asked != FA2_SUCCESS)
    return asked;
  return launch_kernel(fwd_combine_kernel<T>, grid, kCombineWarps * 32, 0, stream, waits, why, p);
}

template fa2_status_t launch_fwd_combine<__half>(const core::AttnParams &, cudaStream_t,
                                                 std::string &);
template fa2_status_t launch_fwd_combine<__nv_bfloat16>(const core::AttnParams &, cudaStream_t,
                                                        std::string &);

}  // namespace fa2::cuda
