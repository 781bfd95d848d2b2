// The one place that maps (dtype, head dim) to compiled kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/params.h"
#include "fa2/fa2.h"
#include "sm80/tile_plan.h"

namespace fa2::cuda {

struct BwdScratch;

using FwdLauncher = fa2_status_t (*)(const core::AttnParams &, cudaStream_t, std::string &);
using BwdLauncher = fa2_status_t (*)(const core::AttnParams &, const BwdScratch &, cudaStream_t,
                                     std::string &);

struct KernelSet {
  int head_dim_bucket = 0;  // the kernel's head dim
  FwdLauncher fwd = nullptr;
  FwdLauncher fwd_decode = nullptr;  // sm80/launch.h: the split forward and its combine
  fa2_status_t (*fwd_decode_ctas_per_sm)(int slabs, int &, std::string &) = nullptr;
  BwdLauncher bwd = nullptr;
  fa2_status_t (*bwd_delta)(const core::AttnParams &, const BwdScratch &, cudaStream_t,
                            std::string &) = nullptr;
  fa2_status_t (*bwd_dq_convert)(const core::AttnParams &, const BwdScratch &, cudaStream_t,
                                 std::string &) = nullptr;
};

// FA2_SUCCESS and the kernels, or FA2_ERROR_UNSUPPORTED_HEAD_DIM when the
// bucket was left out of this build (FA2_CUDA_HEAD_DIMS) and `why` says so.
fa2_status_t kernels_for(core::Dtype dtype, int head_dim, KernelSet &out, std::string &why);

// How a forward runs: `params` as the caller's, or for decoding (few query
// rows an item, and too few items to fill the GPU or query heads that share
// K / V) folded (core::fold_query_groups) and split over the keys
// (core::kv_splits), to run on KernelSet::fwd_decode on every device.
struct FwdRoute {
  core::AttnParams params;
  bool decode = false;
  // Partial outputs and lse of the parts (params.kv_splits > 1): their
  // bytes in the workspace, and the lse's offset there.
  uint64_t partial_bytes = 0;
  uint64_t lse_partial_offset = 0;
};
// `slots[s - 1]`: the CTAs of the decoding kernel of s slabs an item that
// the device runs at once (SMs x KernelSet::fwd_decode_ctas_per_sm).
FwdRoute fwd_route(const core::AttnParams &p, const KernelSet &kernels,
                   const int64_t (&slots)[kDecodeMaxSlabs]);

// The Hopper kernel for this call when the build has one and the TMA can
// read its operands (sm90::tma_covers), else nullptr: the caller then runs
// the sm80 kernel, which covers everything. Only for sm90 devices. The
// backward's D and dQ conversion kernels are the same on both paths.
FwdLauncher hopper_fwd_for(const core::AttnParams &p);
BwdLauncher hopper_bwd_for(const core::AttnParams &p);
// Whether the Hopper backward kernel of this call counts the keys whose dQ
// it has added (bwd_scratch.h's kv_done), so that the conversion of a
// head's dQ may start before the main grid's end (sm90_bwd_counts_keys).
bool hopper_bwd_counts_keys(const core::AttnParams &p);
// Workspace the Hopper kernels need beyond the sm80 path's for this call:
// for varlen calls, the per-sequence tensor maps (and the forward's tile
// counter); 0 in a build without them.
uint64_t hopper_fwd_workspace_bytes(const core::AttnParams &p);
uint64_t hopper_bwd_workspace_bytes(const core::AttnParams &p);

}  // namespace fa2::cuda
