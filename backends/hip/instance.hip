// One kernel instantiation per translation unit: CMake compiles this file
// once per (pass, dtype, head dim bucket) with
//   -DFA2_HIP_PASS_FWD or -DFA2_HIP_PASS_BWD, -DFA2_HIP_DTYPE=f16|bf16,
//   -DFA2_HIP_HEAD_DIM=<bucket>.
#include <hip/hip_runtime.h>

#include "launch.h"
#include "mfma_ops.h"

#if defined(FA2_HIP_PASS_FWD)
#  include "fwd_kernel.h"
#elif defined(FA2_HIP_PASS_BWD)
#  include "bwd_kernel.h"
#else
#  error "compile with -DFA2_HIP_PASS_FWD or -DFA2_HIP_PASS_BWD"
#endif

namespace fa2::hip {

constexpr core::Dtype kDtype = core::Dtype::FA2_HIP_DTYPE;
constexpr int kHeadDim = FA2_HIP_HEAD_DIM;
using Elem = typename ElemOf<kDtype>::type;

#if defined(FA2_HIP_PASS_FWD)
template <>
hipError_t launch_fwd<kDtype, kHeadDim>(const core::AttnParams &p, uint32_t workgroups,
                                        hipStream_t stream) {
  constexpr int kWaves = fwd_waves(kHeadDim);
  static_assert(fwd_plan(kHeadDim).block_m == kWaves * Mfma32x32x8::kN, "grid = tile plan");
  hipLaunchKernelGGL((fwd_kernel<Elem, kHeadDim, kWaves>), dim3(workgroups),
                     dim3(kWaves * Mfma32x32x8::kWaveSize), 0, stream, p);
  return hipGetLastError();
}
#else
template <>
hipError_t launch_bwd<kDtype, kHeadDim>(const core::AttnParams &p, uint32_t workgroups,
                                        float *dq_accum, const float *delta,
                                        hipStream_t stream) {
  using Layout = BwdLayout<kHeadDim>;
  constexpr int kWaves = bwd_waves(kHeadDim);
  static_assert(bwd_plan<kHeadDim>().block_n == kWaves * Layout::kN, "grid = tile plan");
  hipLaunchKernelGGL((bwd_kernel<Elem, Layout, kHeadDim, kWaves>), dim3(workgroups),
                     dim3(kWaves * Layout::kWaveSize), 0, stream, p, dq_accum, delta);
  return hipGetLastError();
}
#endif

}  // namespace fa2::hip
