// The one place that maps (dtype, head dim) to compiled kernels.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/params.h"
#include "fa2/fa2.h"

namespace fa2::cuda {

struct BwdScratch;

struct KernelSet {
  int head_dim_bucket = 0;  // the kernel's head dim
  fa2_status_t (*fwd)(const core::AttnParams &, cudaStream_t, std::string &) = nullptr;
  fa2_status_t (*bwd)(const core::AttnParams &, const BwdScratch &, cudaStream_t,
                      std::string &) = nullptr;
  fa2_status_t (*bwd_delta)(const core::AttnParams &, float *, cudaStream_t,
                            std::string &) = nullptr;
  fa2_status_t (*bwd_dq_convert)(const core::AttnParams &, const float *, cudaStream_t,
                                 std::string &) = nullptr;
};

// FA2_SUCCESS and the kernels, or FA2_ERROR_UNSUPPORTED_HEAD_DIM when the
// bucket was left out of this build (FA2_CUDA_HEAD_DIMS) and `why` says so.
fa2_status_t kernels_for(core::Dtype dtype, int head_dim, KernelSet &out, std::string &why);

}  // namespace fa2::cuda
