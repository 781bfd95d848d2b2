// The two small kernels around the backward's main kernel, per element type.
#include "sm80/launch.cuh"

namespace fa2::cuda {
namespace {

// CTAs of kRowKernelThreads for every row's group of row_lanes threads.
int64_t row_ctas(const core::AttnParams &p, int per_lane) {
  const int64_t rows = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int64_t rows_per_cta = kRowKernelThreads / row_lanes(p.head_dim, per_lane);
  return (rows + rows_per_cta - 1) / rows_per_cta;
}

}  // namespace

template <class T>
fa2_status_t launch_bwd_delta(const core::AttnParams &p, const BwdScratch &scratch,
                              cudaStream_t stream, std::string &why) {
  unsigned grid = 0;
  const fa2_status_t status = grid_size(row_ctas(p, kDeltaPerLane), grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  bwd_delta_kernel<T><<<grid, kRowKernelThreads, 0, stream>>>(p, scratch);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

template <class T>
fa2_status_t launch_bwd_dq_convert(const core::AttnParams &p, const float *dq_accum,
                                   cudaStream_t stream, std::string &why) {
  unsigned grid = 0;
  const fa2_status_t status = grid_size(row_ctas(p, kConvertPerLane), grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  bwd_dq_convert_kernel<T><<<grid, kRowKernelThreads, 0, stream>>>(p, dq_accum);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

template fa2_status_t launch_bwd_delta<__half>(const core::AttnParams &, const BwdScratch &,
                                               cudaStream_t, std::string &);
template fa2_status_t launch_bwd_delta<__nv_bfloat16>(const core::AttnParams &, const BwdScratch &,
                                                      cudaStream_t, std::string &);
template fa2_status_t launch_bwd_dq_convert<__half>(const core::AttnParams &, const float *,
                                                    cudaStream_t, std::string &);
template fa2_status_t launch_bwd_dq_convert<__nv_bfloat16>(const core::AttnParams &,
                                                           const float *, cudaStream_t,
                                                           std::string &);

}  // namespace fa2::cuda
