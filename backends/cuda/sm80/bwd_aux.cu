// The two small kernels around the backward's main kernel, per element
// type, and the device query that picks the main kernel's plan.
#include <algorithm>
#include <cstdlib>

#include "dependent_launch.cuh"
#include "sm80/launch.cuh"

namespace fa2::cuda {

cudaError_t device_smem_per_block(int &bytes) {
  int device = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (const char *limit = std::getenv("FA2_CUDA_SMEM_LIMIT"))
    bytes = std::min(bytes, int(std::strtol(limit, nullptr, 10)));
  return error;
}
namespace {

// One CTA of kRowKernelThreads per kRowBlock rows of a (batch, head); rows
// a head: p.seqlen_q, or its block statistics' padded count.
fa2_status_t row_grid(const core::AttnParams &p, int64_t head_rows, unsigned &row_blocks,
                      unsigned &grid, std::string &why) {
  const int64_t blocks = (head_rows + kRowBlock - 1) / kRowBlock;
  row_blocks = unsigned(blocks);
  return grid_size(int64_t(p.batch) * p.heads_q * blocks, grid, why);
}

}  // namespace

template <class T>
fa2_status_t launch_bwd_delta(const core::AttnParams &p, const BwdScratch &scratch,
                              cudaStream_t stream, std::string &why) {
  unsigned row_blocks = 0, grid = 0;
  const int64_t head_rows = scratch.block_stats != nullptr
                                ? block_stat_head_blocks(p) * kStatBlockRows
                                : int64_t(p.seqlen_q);
  const fa2_status_t status = row_grid(p, head_rows, row_blocks, grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  bwd_delta_kernel<T><<<grid, kRowKernelThreads, 0, stream>>>(p, scratch, row_blocks);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

template <class T>
fa2_status_t launch_bwd_dq_convert(const core::AttnParams &p, const BwdScratch &scratch,
                                   cudaStream_t stream, std::string &why) {
  unsigned row_blocks = 0, grid = 0;
  const fa2_status_t status = row_grid(p, p.seqlen_q, row_blocks, grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  // As the main kernel's programmatic dependent where the code waits (sm_90
  // on): its CTAs take the SMs that the main kernel's last ones leave
  // (bwd_dq_convert_kernel).
  bool waits = false;
  if (const fa2_status_t asked = code_waits<bwd_dq_convert_kernel<T>>(waits, why);
      asked != FA2_SUCCESS)
    return asked;
  return launch_kernel(bwd_dq_convert_kernel<T>, grid, kRowKernelThreads, 0, stream, waits, why,
                       p, scratch.dq_accum, scratch.dq_pair_cols, scratch.kv_done, row_blocks);
}

template fa2_status_t launch_bwd_delta<__half>(const core::AttnParams &, const BwdScratch &,
                                               cudaStream_t, std::string &);
template fa2_status_t launch_bwd_delta<__nv_bfloat16>(const core::AttnParams &, const BwdScratch &,
                                                      cudaStream_t, std::string &);
template fa2_status_t launch_bwd_dq_convert<__half>(const core::AttnParams &, const BwdScratch &,
                                                    cudaStream_t, std::string &);
template fa2_status_t launch_bwd_dq_convert<__nv_bfloat16>(const core::AttnParams &,
                                                           const BwdScratch &, cudaStream_t,
                                                           std::string &);

}  // namespace fa2::cuda
