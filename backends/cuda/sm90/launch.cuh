// Definition of the Hopper launcher declared in launch.h, included only by
// the generated per-instantiation translation units.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda_check.h"
#include "dependent_launch.cuh"
#include "sm90/bwd_kernel.cuh"
#include "sm90/bwd_split_kernel.cuh"
#include "sm90/fwd_kernel.cuh"
#include "sm90/launch.h"
#include "sm90/tensor_map.h"
#include "sm90/tile_plan.h"

namespace fa2::cuda::sm90 {

template <class T, int kHeadDim, FwdPlan kPlan>
fa2_status_t launch_fwd(const core::AttnParams &p, cudaStream_t stream, std::string &why) {
  constexpr bool kHandedTiles = kPlan == FwdPlan::varlen;
  constexpr core::TilePlan plan = sm90_fwd_plan(kHeadDim, kPlan == FwdPlan::wide);
  static_assert(plan.head_dim == kHeadDim, "no Hopper forward plan for this head dim");
  using K = FwdKernel<T, kHeadDim, plan.block_n, plan.workers, plan.stages, kHandedTiles>;
  const auto kernel =
      fwd_kernel<T, kHeadDim, plan.block_n, plan.workers, plan.stages, kHandedTiles>;
  const int64_t tiles = core::fwd_items(p, K::kBlockM);
  if (tiles == 0) return FA2_SUCCESS;
  // One CTA per SM (its shared memory allows no more), each walking tiles.
  int device = 0, sms = 0;
  FA2_CUDA_CHECK(cudaGetDevice(&device));
  FA2_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned grid = unsigned(tiles < sms ? tiles : sms);
  // Handed tiles: the tile counter leads the workspace, zeroed for each
  // launch, and the sequence maps follow it. Tickets count up from 0 past
  // the tiles: keep them in an int.
  unsigned *tile_counter = nullptr;
  void *maps_workspace = p.workspace;
  if constexpr (kHandedTiles) {
    if (tiles > INT32_MAX - int64_t(grid)) {
      why = "batch * heads_q * query blocks does not fit in int32 (the Hopper varlen "
            "forward's tiles)";
      return FA2_ERROR_SIZE_OVERFLOW;
    }
    if (p.workspace == nullptr || p.workspace_bytes < kFwdTileCounterBytes) {
      why = "the Hopper varlen forward got no room for its tile counter in the workspace";
      return FA2_ERROR_INTERNAL;
    }
    tile_counter = static_cast<unsigned *>(p.workspace);
    maps_workspace = static_cast<char *>(p.workspace) + kFwdTileCounterBytes;
    FA2_CUDA_CHECK(cudaMemsetAsync(tile_counter, 0, sizeof(*tile_counter), stream));
  }
  TmaMaps maps{};
  fa2_status_t status =
      encode_call_maps(maps, p, K::kBlockM, plan.block_n, false, maps_workspace, stream, why);
  if (status == FA2_SUCCESS && K::kTmaOut)
    status = encode_operand_map(maps.out, p.out, p.dtype, p.seqlen_q, p.heads_q, p.batch,
                                p.head_dim, K::OutTile::kRows, why);
  if (status != FA2_SUCCESS) return status;
  FA2_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
  const core::FwdOrder order = core::fwd_order(
      p.has_mask, core::ceil_div(p.seqlen_q, K::kBlockM), sm90_fwd_rows_first_above(kHeadDim));
  kernel<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p, maps, order, tile_counter);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

// The backward kernel of a head dim's plan: per-warpgroup keys, or the
// two warpgroups splitting the columns of shared keys.
template <class T, int kHeadDim, bool kVarlen>
auto bwd_kernel_of() {
  constexpr core::TilePlan plan = sm90_bwd_plan(kHeadDim);
  if constexpr (sm90_bwd_splits_columns(kHeadDim))
    return bwd_split_kernel<T, kHeadDim, plan.stages, kVarlen>;
  else
    return bwd_kernel<T, kHeadDim, plan.block_m, plan.workers, plan.stages, kVarlen>;
}

template <class T, int kHeadDim, bool kVarlen>
fa2_status_t launch_bwd(const core::AttnParams &p, const BwdScratch &scratch, cudaStream_t stream,
                        std::string &why) {
  constexpr core::TilePlan plan = sm90_bwd_plan(kHeadDim);
  static_assert(plan.head_dim == kHeadDim, "no Hopper backward plan for this head dim");
  constexpr bool kSplit = sm90_bwd_splits_columns(kHeadDim);
  using K = std::conditional_t<kSplit, BwdSplitKernel<T, kHeadDim, plan.stages>,
                               BwdKernel<T, kHeadDim, plan.block_m, plan.workers, plan.stages>>;
  static_assert(K::kBlockN == plan.block_n, "the plan's key block and the kernel's differ");
  if (p.is_varlen() != kVarlen) {
    why = "the Hopper backward was given a call of the other kind (varlen or not)";
    return FA2_ERROR_INTERNAL;
  }
  const auto kernel = bwd_kernel_of<T, kHeadDim, kVarlen>();
  unsigned grid = 0;
  // A cluster of kClusterCtas CTAs per work item (core::bwd_item over
  // kClusterCtas key blocks), one key block each.
  fa2_status_t status =
      grid_size(core::bwd_items(p, K::kBlockN * K::kClusterCtas) * K::kClusterCtas, grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  TmaMaps maps{};
  status = encode_call_maps(maps, p, plan.block_m, K::kBlockN, true, scratch.sequence_maps,
                            stream, why);
  if (status != FA2_SUCCESS) return status;
  if constexpr (K::kDqByTma) {
    // The dQ accumulator: [batch, heads_q, seqlen_q, head_dim] fp32, dense
    // (core::row_stat_index rows of head_dim floats), varlen or not.
    const int64_t dq_row = p.head_dim;
    const core::TensorRef dq_accum{scratch.dq_accum, int64_t(p.heads_q) * p.seqlen_q * dq_row,
                                   dq_row, int64_t(p.seqlen_q) * dq_row};
    status = encode_operand_map(maps.dq_accum, dq_accum, core::Dtype::f32, p.seqlen_q, p.heads_q,
                                p.batch, p.head_dim, K::kDqBoxRows, why);
    if (status != FA2_SUCCESS) return status;
  }
  FA2_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
  // As the programmatic dependent of the kernel before it (the delta
  // kernel), whose end it waits for first thing (start_after_delta).
  return launch_kernel(kernel, grid, K::kThreads, K::kSmemBytes, stream, true, why, p, scratch,
                       maps);
}

}  // namespace fa2::cuda::sm90
