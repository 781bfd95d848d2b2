// Launchers of the backward's preprocessing and dQ conversion passes.
#include <hip/hip_runtime.h>

#include <algorithm>

#include "bwd_aux_kernels.h"
#include "launch.h"

namespace fa2::hip {
namespace {

constexpr int kRowWaves = 4;  // plain loops, no MFMA: any size does
constexpr int kRowThreads = kRowWaves * Mfma32x32x8::kWaveSize;

// The kernels stride over the rows; the grid stays well inside the
// 2^32 work-item limit of a dispatch.
constexpr int64_t kMaxRowGroups = int64_t(1) << 20;

dim3 row_grid(const core::AttnParams &p) {
  const int64_t rows = int64_t(p.batch) * p.seqlen_q * p.heads_q;
  return dim3(uint32_t(std::min((rows + kRowThreads - 1) / kRowThreads, kMaxRowGroups)));
}

}  // namespace

hipError_t launch_bwd_preprocess(const core::AttnParams &p, float *delta, hipStream_t stream) {
  if (p.dtype == core::Dtype::bf16)
    hipLaunchKernelGGL(bwd_preprocess_kernel<BF16>, row_grid(p), dim3(kRowThreads), 0, stream, p,
                       delta);
  else
    hipLaunchKernelGGL(bwd_preprocess_kernel<F16>, row_grid(p), dim3(kRowThreads), 0, stream, p,
                       delta);
  return hipGetLastError();
}

hipError_t launch_dq_convert(const core::AttnParams &p, const float *dq_accum,
                             hipStream_t stream) {
  if (p.dtype == core::Dtype::bf16)
    hipLaunchKernelGGL(dq_convert_kernel<BF16>, row_grid(p), dim3(kRowThreads), 0, stream, p,
                       dq_accum);
  else
    hipLaunchKernelGGL(dq_convert_kernel<F16>, row_grid(p), dim3(kRowThreads), 0, stream, p,
                       dq_accum);
  return hipGetLastError();
}

}  // namespace fa2::hip
