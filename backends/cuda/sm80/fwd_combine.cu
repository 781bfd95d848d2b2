// The split-KV forward's last step (fwd_kernel.cuh, FwdWalk::decode): the
// parts' normalised outputs O_s and logsumexps lse_s of each query row
// merged into
//     lse = log sum_s exp(lse_s),   out = sum_s exp(lse_s - lse) O_s,
// which is the softmax over all the row's keys. A part whose keys the row
// does not see (lse_s = -inf, its O_s never written) weighs 0 and is left
// out; a row that sees no key in any part gets out 0 and lse -inf.
#include <cmath>

#include "sm80/launch.cuh"

namespace fa2::cuda {
namespace {

constexpr int kCombineWarps = 4;  // a warp per row, four rows a CTA

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

template <class T>
__global__ void __launch_bounds__(kCombineWarps * 32) fwd_combine_kernel(const core::AttnParams p) {
  const int64_t rows = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int64_t index = int64_t(blockIdx.x) * kCombineWarps + threadIdx.x / 32;
  if (index >= rows) return;
  const int lane = threadIdx.x % 32;
  const core::StatRow at = core::stat_row(p, index);
  const core::SeqInfo seq = core::seq_info(p, at.batch);
  if (at.row >= seq.seqlen_q) return;  // past a varlen sequence's end: another's rows

  float top = -INFINITY;
  for (int s = lane; s < p.kv_splits; s += 32) top = fmaxf(top, p.lse_partial[s * rows + index]);
  top = warp_max(top);
  float sum = 0.f;
  if (top != -INFINITY)
    for (int s = lane; s < p.kv_splits; s += 32) sum += expf(p.lse_partial[s * rows + index] - top);
  const float lse = top == -INFINITY ? -INFINITY : top + logf(warp_sum(sum));

  T *out = static_cast<T *>(p.out.data) +
           core::row_offset(p.out, at.batch, seq.q_row0, at.row, at.head_q);
  for (int col = 4 * lane; col < p.head_dim; col += 4 * 32) {  // head_dim: a multiple of 8
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int s = 0; s < p.kv_splits; ++s) {
      const float part_lse = p.lse_partial[s * rows + index];
      if (part_lse == -INFINITY) continue;
      const float w = expf(part_lse - lse);
      const float4 o =
          *reinterpret_cast<const float4 *>(p.out_partial + (s * rows + index) * p.head_dim + col);
      acc.x += w * o.x, acc.y += w * o.y, acc.z += w * o.z, acc.w += w * o.w;
    }
    *reinterpret_cast<uint2 *>(out + col) =
        make_uint2(Element<T>::pack(acc.x, acc.y), Element<T>::pack(acc.z, acc.w));
  }
  if (lane == 0) p.lse[index] = lse;
}

}  // namespace

template <class T>
fa2_status_t launch_fwd_combine(const core::AttnParams &p, cudaStream_t stream, std::string &why) {
  const int64_t rows = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  unsigned grid = 0;
  const fa2_status_t status = grid_size((rows + kCombineWarps - 1) / kCombineWarps, grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  fwd_combine_kernel<T><<<grid, kCombineWarps * 32, 0, stream>>>(p);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

template fa2_status_t launch_fwd_combine<__half>(const core::AttnParams &, cudaStream_t,
                                                 std::string &);
template fa2_status_t launch_fwd_combine<__nv_bfloat16>(const core::AttnParams &, cudaStream_t,
                                                        std::string &);

}  // namespace fa2::cuda
