// fa2_pipe_overlap: two measurements behind the Hopper forward's schedule
// (backends/cuda/NOTES.md, 2026-12-03), on 132 CTAs of two warpgroups, no
// global memory traffic, CUDA events (mean of five launches).
//
// 1. pipes: each warpgroup runs one loop of 4000 iterations, or idles:
//      gemm  the d64 forward's two GEMMs of a block (S = Q K^T, m64n128k64
//            from shared memory; O += P V, m64n64k128 with P from
//            registers), then one P bit from S, so both GEMMs stay live
//      ex2   64 ex2 a thread (a register each, so 64 independent chains)
//      smx   the same ex2 with a max, a scale and a sum around each
//    Side by side, two loops that use different pipes finish sooner than
//    one after the other only where those pipes overlap.
// 2. schedules: the d64 forward's block loop (both GEMMs, the softmax of S
//    into P, the rescale of O) in both warpgroups, 4000 blocks, timed with
//    P V's A operand from registers (rs) or from shared memory (ss, P
//    stored there with stmatrix) and three schedules: free (both start
//    together), offset (warpgroup 1 starts 1000 clocks late), pingpong
//    (named barriers: a warpgroup issues its GEMMs after the other has).
#include <cstdio>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "sm80/tile_ops.cuh"
#include "sm90/hopper_ops.cuh"
#include "sm90/wgmma.cuh"

namespace {

using fa2::cuda::Element;
using fa2::cuda::FastExp2;
using fa2::cuda::smem_address;
using fa2::cuda::stmatrix_x4;
namespace sm90 = fa2::cuda::sm90;
using T = __nv_bfloat16;

constexpr int kIterations = 4000;
constexpr int kSmemBytes = 5 * 16384;  // Q | K | V tiles, then a P tile a warpgroup
enum Role { idle, gemm, ex2, smx };
enum Schedule { free_start, offset_start, pingpong };

__device__ inline void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ void fill_tiles(unsigned char *smem) {
  for (int i = threadIdx.x; i < kSmemBytes / 2; i += blockDim.x)
    reinterpret_cast<T *>(smem)[i] = __float2bfloat16(0.001f * (i % 13));
  __syncthreads();
}

__global__ void __launch_bounds__(256, 1) pipes_kernel(float *sink, int role0, int role1) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) unsigned char smem[];
  fill_tiles(smem);
  const uint32_t tiles = smem_address(smem);
  const int role = threadIdx.x < 128 ? role0 : role1;
  float result = 0.f;
  if (role == gemm) {
    float s[64], o[32] = {};
    uint32_t p[8][4];
#pragma unroll
    for (int k = 0; k < 8; ++k)
#pragma unroll
      for (int e = 0; e < 4; ++e) p[k][e] = 0x3c003c00u;
    for (int it = 0; it < kIterations; ++it) {
      sm90::wgmma_fence();
      sm90::wgmma_chain_ss<T, 128, 4>(s, tiles, 64, tiles + 16384, 128);
      sm90::wgmma_commit();
      sm90::wgmma_chain_rs<T, 64, 8>(o, p, tiles + 32768, 128);
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
      sm90::pin_registers(s);
      sm90::pin_registers(o);
      p[0][0] ^= __float_as_uint(s[0]) & 1u;
    }
#pragma unroll
    for (int j = 0; j < 32; ++j) result += o[j];
  } else if (role == ex2 || role == smx) {
    float v[64], row_max[4] = {}, row_sum[4] = {};
#pragma unroll
    for (int j = 0; j < 64; ++j) v[j] = 0.01f * (threadIdx.x + j);
    for (int it = 0; it < kIterations; ++it)
#pragma unroll
      for (int j = 0; j < 64; ++j) {
        float x = v[j];
        if (role == smx) {
          row_max[j % 4] = fmaxf(row_max[j % 4], x);
          x = fmaf(x, 0.5f, -row_max[j % 4]);
        }
        v[j] = FastExp2{}(-x);
        if (role == smx) row_sum[j % 4] += v[j];
      }
#pragma unroll
    for (int j = 0; j < 64; ++j) result += v[j];
    result += row_sum[0] + row_sum[1] + row_sum[2] + row_sum[3];
  }
  if (result == 12345.f) sink[threadIdx.x] = result;  // keeps the work
#endif
}

template <bool kPvFromSmem>
__global__ void __launch_bounds__(256, 1) schedule_kernel(float *sink, int schedule) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) unsigned char smem[];
  fill_tiles(smem);
  const uint32_t tiles = smem_address(smem);
  const int wg = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const uint32_t p_tile = tiles + 49152 + wg * 16384;  // 64 queries x 128 keys
  if (schedule == offset_start && wg == 1) {
    const long long start = clock64();
    while (clock64() - start < 1000) {
    }
  }
  if (schedule == pingpong && wg == 1) named_barrier_arrive(1, 256);  // warpgroup 0 first
  float s[64], o[32] = {}, row_max[2] = {-1e30f, -1e30f}, row_sum[2] = {};
  uint32_t p[8][4];
#pragma unroll
  for (int k = 0; k < 8; ++k)
#pragma unroll
    for (int e = 0; e < 4; ++e) p[k][e] = 0x3c003c00u;
  const float scale_log2 = 0.125f * 1.4426950f;
  for (int it = 0; it < kIterations; ++it) {
    if (schedule == pingpong) sm90::named_barrier_sync(1 + wg, 256);
    if constexpr (kPvFromSmem) sm90::named_barrier_sync(3 + wg, 128);  // the warpgroup's P is in
    sm90::wgmma_fence();
    sm90::wgmma_chain_ss<T, 128, 4>(s, tiles, 64, tiles + 16384, 128);
    sm90::wgmma_commit();
    if constexpr (kPvFromSmem)
      sm90::wgmma_chain_ss<T, 64, 8, 0, 1, true>(o, p_tile, 64, tiles + 32768, 128);
    else
      sm90::wgmma_chain_rs<T, 64, 8>(o, p, tiles + 32768, 128);
    sm90::wgmma_commit();
    if (schedule == pingpong) named_barrier_arrive(2 - wg, 256);
    sm90::wgmma_wait<1>();
    sm90::pin_registers(s);
    float correction[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float m = row_max[h];
#pragma unroll
      for (int j = 0; j < 16; ++j) m = fmaxf(m, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
      correction[h] = FastExp2{}((row_max[h] - m) * scale_log2);
      row_max[h] = m;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        const int c = 4 * (j / 2) + 2 * h + j % 2;
        s[c] = FastExp2{}(fmaf(s[c], scale_log2, -m * scale_log2));
        sum += s[c];
      }
      row_sum[h] = row_sum[h] * correction[h] + sum;
    }
    sm90::wgmma_wait<0>();
    sm90::pin_registers(o);
    sm90::pin_registers(p);
#pragma unroll
    for (int c = 0; c < 32; ++c) o[c] *= correction[(c / 2) % 2];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      p[k][0] = Element<T>::pack(s[8 * k], s[8 * k + 1]);
      p[k][1] = Element<T>::pack(s[8 * k + 2], s[8 * k + 3]);
      p[k][2] = Element<T>::pack(s[8 * k + 4], s[8 * k + 5]);
      p[k][3] = Element<T>::pack(s[8 * k + 6], s[8 * k + 7]);
    }
    if constexpr (kPvFromSmem) {
      const int matrix = lane / 8, row = 16 * warp + 8 * (matrix % 2) + lane % 8;
#pragma unroll
      for (int k = 0; k < 8; ++k)
        stmatrix_x4(p_tile + (k / 4) * 8192 + row * 128 +
                        (((2 * (k % 4) + matrix / 2) ^ (lane % 8)) * 16),
                    p[k][0], p[k][1], p[k][2], p[k][3]);
      sm90::fence_smem_to_async();
    }
  }
  float result = row_sum[0] + row_sum[1];
#pragma unroll
  for (int c = 0; c < 32; ++c) result += o[c];
  if (result == 12345.f) sink[threadIdx.x] = result;
#endif
}

bool ok(cudaError_t status, const char *what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "fa2_pipe_overlap: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

// Mean milliseconds of five launches after one warm-up.
template <class Launch>
float time_ms(Launch launch) {
  cudaEvent_t start, stop;
  float ms = -1.f;
  if (!ok(cudaEventCreate(&start), "event") || !ok(cudaEventCreate(&stop), "event")) return ms;
  launch();
  cudaEventRecord(start);
  for (int n = 0; n < 5; ++n) launch();
  cudaEventRecord(stop);
  if (ok(cudaEventSynchronize(stop), "kernel") && ok(cudaGetLastError(), "launch"))
    cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 5;
}

}  // namespace

int main() {
  cudaDeviceProp prop;
  if (!ok(cudaGetDeviceProperties(&prop, 0), "device")) return 1;
  if (prop.major != 9) {
    std::printf("fa2_pipe_overlap: needs an sm_90 GPU (device 0 is sm_%d%d); skipped\n",
                prop.major, prop.minor);
    return 0;
  }
  float *sink;
  if (!ok(cudaMalloc(&sink, 256 * sizeof(float)), "cudaMalloc") ||
      !ok(cudaFuncSetAttribute(pipes_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kSmemBytes), "attribute") ||
      !ok(cudaFuncSetAttribute(schedule_kernel<false>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes),
          "attribute") ||
      !ok(cudaFuncSetAttribute(schedule_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kSmemBytes), "attribute"))
    return 1;
  const int ctas = prop.multiProcessorCount;
  int clock_khz = 0;
  if (!ok(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "clock")) return 1;
  std::printf("%s, %d SMs; one loop: %d x 512 clocks at peak = %.3f ms at %.2f GHz\n", prop.name,
              ctas, kIterations, kIterations * 512 / (clock_khz * 1e3) * 1e3, clock_khz / 1e6);
  const char *names[] = {"idle", "gemm", "ex2", "smx"};
  const int pairs[][2] = {{gemm, idle}, {gemm, gemm}, {ex2, idle}, {ex2, ex2}, {gemm, ex2},
                          {smx, idle},  {smx, smx},   {gemm, smx}};
  std::printf("\npipes (warpgroup 0 | warpgroup 1): ms a launch\n");
  for (const auto &pair : pairs) {
    const float ms = time_ms([&] {
      pipes_kernel<<<ctas, 256, kSmemBytes>>>(sink, pair[0], pair[1]);
    });
    std::printf("  %-4s | %-4s %8.3f\n", names[pair[0]], names[pair[1]], ms);
  }
  const char *schedules[] = {"free", "offset", "pingpong"};
  std::printf("\nschedules of the d64 block loop: ms a launch, TFLOP/s of both GEMMs\n");
  for (int pv_from_smem = 0; pv_from_smem < 2; ++pv_from_smem)
    for (int schedule = free_start; schedule <= pingpong; ++schedule) {
      const float ms = time_ms([&] {
        if (pv_from_smem)
          schedule_kernel<true><<<ctas, 256, kSmemBytes>>>(sink, schedule);
        else
          schedule_kernel<false><<<ctas, 256, kSmemBytes>>>(sink, schedule);
      });
      const double flops = 2.0 * kIterations * 2.0 * (64.0 * 128 * 64 * 2) * ctas;
      std::printf("  %s %-8s %8.3f  %6.1f\n", pv_from_smem ? "ss" : "rs", schedules[schedule], ms,
                  flops / (ms * 1e-3) / 1e12);
    }
  cudaFree(sink);
  return 0;
}
