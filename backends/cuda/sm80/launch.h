// Host-side entry points of the sm80 kernels. launch_fwd / launch_bwd are
// explicitly instantiated once per (element type, head-dim bucket), each in
// its own generated translation unit (see CMakeLists.txt); dispatch.cpp is
// the one place that picks an instantiation.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

#include "core/params.h"
#include "fa2/fa2.h"

namespace fa2::cuda {

struct BwdScratch;

template <class T, int kHeadDim>
fa2_status_t launch_fwd(const core::AttnParams &p, cudaStream_t stream, std::string &why);

// The forward that walks the causal diagonal's blind later key block last
// (fwd_kernel's kBlindLast), which launch_fwd calls where sm80_fwd_blind_last
// says, for the head dims whose plan can (FwdKernel::kCanWalkBlindLast). Its
// own translation units (fwd_blind_last_*), where launch_fwd's declare it
// extern: compiled beside the plain kernel, it changed that kernel's code
// (d192: its main loop's schedule, -0.7% without a mask; H100, 2026-12-05).
template <class T, int kHeadDim>
fa2_status_t launch_fwd_blind_last(const core::AttnParams &p, cudaStream_t stream,
                                   std::string &why);

// Decoding (decode_kernel.cuh; where, dispatch.cpp's fwd_route): the
// forward split into p.kv_splits parts over each item's key blocks,
// then, with more than one, the combine of the parts (launch_fwd_combine,
// fwd_combine.cu) into out and lse. Translation units of their own
// (fwd_decode_*); fwd_decode_ctas_per_sm is the occupancy of the kernel of
// `slabs` slabs an item (sm80_fwd_decode_slabs), from which dispatch sizes
// the split.
template <class T, int kHeadDim>
fa2_status_t launch_fwd_decode(const core::AttnParams &p, cudaStream_t stream, std::string &why);
template <class T, int kHeadDim>
fa2_status_t fwd_decode_ctas_per_sm(int slabs, int &ctas, std::string &why);
template <class T>
fa2_status_t launch_fwd_combine(const core::AttnParams &p, cudaStream_t stream, std::string &why);

template <class T, int kHeadDim>
fa2_status_t launch_bwd(const core::AttnParams &p, const BwdScratch &scratch, cudaStream_t stream,
                        std::string &why);

// The current device's opt-in shared memory per block, or less where
// FA2_CUDA_SMEM_LIMIT (bytes, read per call) says so: a test on a Hopper
// GPU then runs the plans an A100 would (sm80/tile_plan.h, SmemBudget).
cudaError_t device_smem_per_block(int &bytes);

// D = rowsum(dO * O) before (where bwd_scratch.h says), dQ = scale *
// accumulator after the main kernel.
template <class T>
fa2_status_t launch_bwd_delta(const core::AttnParams &p, const BwdScratch &scratch,
                              cudaStream_t stream, std::string &why);
template <class T>
fa2_status_t launch_bwd_dq_convert(const core::AttnParams &p, const BwdScratch &scratch,
                                   cudaStream_t stream, std::string &why);

}  // namespace fa2::cuda
