// Host-side entry points of the Hopper kernels (built with FA2_CUDA_SM90).
// launch_fwd / launch_bwd are explicitly instantiated once per (element
// type, head-dim bucket, forward plan or backward kind) in their own
// generated translation units;
// dispatch.cpp picks one.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

#include "core/params.h"
#include "fa2/fa2.h"

namespace fa2::cuda {
struct BwdScratch;
}

namespace fa2::cuda::sm90 {

// A varlen forward's workspace: its tile counter (zeroed before each
// launch), then the sequence maps (sequence_maps_bytes).
inline constexpr uint64_t kFwdTileCounterBytes = 16;

// The forward's kernels: standard and wide key blocks (sm90_fwd_plan), and
// for varlen calls (and only those) the standard plan with handed tiles
// (fwd_kernel.cuh).
enum class FwdPlan { standard, wide, varlen };
template <class T, int kHeadDim, FwdPlan kPlan>
fa2_status_t launch_fwd(const core::AttnParams &p, cudaStream_t stream, std::string &why);

// The main backward kernel; D and the dQ conversion are the sm80 path's.
// kVarlen: for varlen calls (and only those), a kernel of its own.
template <class T, int kHeadDim, bool kVarlen>
fa2_status_t launch_bwd(const core::AttnParams &p, const BwdScratch &scratch, cudaStream_t stream,
                        std::string &why);

}  // namespace fa2::cuda::sm90
