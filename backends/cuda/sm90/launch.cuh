// Definition of the Hopper launcher declared in launch.h, included only by
// the generated per-instantiation translation units.
#pragma once

#include <type_traits>

#include "cuda_check.h"
#include "sm90/bwd_kernel.cuh"
#include "sm90/bwd_split_kernel.cuh"
#include "sm90/fwd_kernel.cuh"
#include "sm90/launch.h"
#include "sm90/tensor_map.h"
#include "sm90/tile_plan.h"

namespace fa2::cuda::sm90 {

template <class T, int kHeadDim, bool kWide>
fa2_status_t launch_fwd(const core::AttnParams &p, cudaStream_t stream, std::string &why) {
  constexpr core::TilePlan plan = sm90_fwd_plan(kHeadDim, kWide);
  static_assert(plan.head_dim == kHeadDim, "no Hopper forward plan for this head dim");
  using K = FwdKernel<T, kHeadDim, plan.block_n, plan.workers, plan.stages>;
  const auto kernel = fwd_kernel<T, kHeadDim, plan.block_n, plan.workers, plan.stages>;
  const int64_t tiles = core::fwd_items(p, K::kBlockM);
  if (tiles == 0) return FA2_SUCCESS;
  // One CTA per SM (its shared memory allows no more), each walking tiles.
  int device = 0, sms = 0;
  FA2_CUDA_CHECK(cudaGetDevice(&device));
  FA2_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned grid = unsigned(tiles < sms ? tiles : sms);
  TmaMaps maps;
  fa2_status_t status = encode_operand_map(maps.q, p.q, p.dtype, p.seqlen_q, p.heads_q, p.batch,
                                           p.head_dim, K::kBlockM, why);
  if (status == FA2_SUCCESS)
    status = encode_operand_map(maps.k, p.k, p.dtype, p.seqlen_k, p.heads_kv, p.batch,
                                p.head_dim, plan.block_n, why);
  if (status == FA2_SUCCESS)
    status = encode_operand_map(maps.v, p.v, p.dtype, p.seqlen_k, p.heads_kv, p.batch,
                                p.head_dim, plan.block_n, why);
  if (status != FA2_SUCCESS) return status;
  FA2_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
  kernel<<<grid, K::kThreads, K::kSmemBytes, stream>>>(
      p, maps, sm90_fwd_order(p.has_mask, core::ceil_div(p.seqlen_q, K::kBlockM)));
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

// The backward kernel of a head dim's plan: per-warpgroup keys, or the
// two warpgroups splitting the columns of shared keys.
template <class T, int kHeadDim>
auto bwd_kernel_of() {
  constexpr core::TilePlan plan = sm90_bwd_plan(kHeadDim);
  if constexpr (sm90_bwd_splits_columns(kHeadDim))
    return bwd_split_kernel<T, kHeadDim, plan.stages>;
  else
    return bwd_kernel<T, kHeadDim, plan.block_m, plan.workers, plan.stages>;
}

template <class T, int kHeadDim>
fa2_status_t launch_bwd(const core::AttnParams &p, const BwdScratch &scratch, cudaStream_t stream,
                        std::string &why) {
  constexpr core::TilePlan plan = sm90_bwd_plan(kHeadDim);
  static_assert(plan.head_dim == kHeadDim, "no Hopper backward plan for this head dim");
  constexpr bool kSplit = sm90_bwd_splits_columns(kHeadDim);
  using K = std::conditional_t<kSplit, BwdSplitKernel<T, kHeadDim, plan.stages>,
                               BwdKernel<T, kHeadDim, plan.block_m, plan.workers, plan.stages>>;
  static_assert(K::kBlockN == plan.block_n, "the plan's key block and the kernel's differ");
  const auto kernel = bwd_kernel_of<T, kHeadDim>();
  unsigned grid = 0;
  // A cluster of kClusterCtas CTAs per work item (core::bwd_item over
  // kClusterCtas key blocks), one key block each.
  fa2_status_t status =
      grid_size(core::bwd_items(p, K::kBlockN * K::kClusterCtas) * K::kClusterCtas, grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  TmaMaps maps;
  // The dQ accumulator: [batch, heads_q, seqlen_q, head_dim] fp32, dense
  // (core::row_stat_index rows of head_dim floats).
  const int64_t dq_row = p.head_dim;
  const core::TensorRef dq_accum{scratch.dq_accum, int64_t(p.heads_q) * p.seqlen_q * dq_row,
                                 dq_row, int64_t(p.seqlen_q) * dq_row};
  const struct {
    CUtensorMap &map;
    const core::TensorRef &tensor;
    core::Dtype dtype;
    int seqlen, heads, box_rows;
  } operands[] = {{maps.q, p.q, p.dtype, p.seqlen_q, p.heads_q, plan.block_m},
                  {maps.dout, p.dout, p.dtype, p.seqlen_q, p.heads_q, plan.block_m},
                  {maps.k, p.k, p.dtype, p.seqlen_k, p.heads_kv, K::kBlockN},
                  {maps.v, p.v, p.dtype, p.seqlen_k, p.heads_kv, K::kBlockN},
                  {maps.dq_accum, dq_accum, core::Dtype::f32, p.seqlen_q, p.heads_q,
                   K::kDqBoxRows}};
  for (const auto &op : operands) {
    if (&op.map == &maps.dq_accum && !K::kDqByTma) continue;
    status = encode_operand_map(op.map, op.tensor, op.dtype, op.seqlen, op.heads, p.batch,
                                p.head_dim, op.box_rows, why);
    if (status != FA2_SUCCESS) return status;
  }
  FA2_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
  kernel<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p, scratch, maps);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

}  // namespace fa2::cuda::sm90
