// Definitions of the launchers declared in launch.h, included only by the
// generated per-instantiation translation units and bwd_aux.cu.
#pragma once

#include "cuda_check.h"
#include "sm80/bwd_kernel.cuh"
#include "sm80/decode_kernel.cuh"
#include "sm80/fwd_kernel.cuh"
#include "sm80/launch.h"
#include "sm80/tile_plan.h"

namespace fa2::cuda {

template <class T, int kHeadDim, int kBlockM, int kBlockN, int kWarps, int kStages,
          bool kBlindLast = false>
fa2_status_t launch_fwd_tiles(const core::AttnParams &p, cudaStream_t stream, std::string &why) {
  using K = FwdKernel<T, kHeadDim, kBlockM, kBlockN, kWarps, kStages>;
  const auto kernel = fwd_kernel<T, kHeadDim, kBlockM, kBlockN, kWarps, kStages, kBlindLast>;
  unsigned grid = 0;
  const fa2_status_t status = grid_size(core::fwd_items(p, kBlockM), grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  FA2_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
  const core::FwdOrder order = core::fwd_order(p.has_mask, core::ceil_div(p.seqlen_q, kBlockM),
                                               sm80_fwd_rows_first_above(kHeadDim));
  kernel<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p, order);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

template <class T, int kHeadDim>
fa2_status_t launch_fwd(const core::AttnParams &p, cudaStream_t stream, std::string &why) {
  constexpr core::TilePlan plan = sm80_fwd_plan(kHeadDim);
  static_assert(plan.head_dim == kHeadDim, "no forward plan for this head dim");
  using K = FwdKernel<T, kHeadDim, plan.block_m, plan.block_n, plan.workers, plan.stages>;
  if constexpr (K::kCanWalkBlindLast)
    if (sm80_fwd_blind_last(p.has_mask, core::ceil_div(p.seqlen_q, plan.block_m)))
      return launch_fwd_blind_last<T, kHeadDim>(p, stream, why);
  return launch_fwd_tiles<T, kHeadDim, plan.block_m, plan.block_n, plan.workers, plan.stages>(
      p, stream, why);
}

template <class T, int kHeadDim>
fa2_status_t launch_fwd_blind_last(const core::AttnParams &p, cudaStream_t stream,
                                   std::string &why) {
  constexpr core::TilePlan plan = sm80_fwd_plan(kHeadDim);
  return launch_fwd_tiles<T, kHeadDim, plan.block_m, plan.block_n, plan.workers, plan.stages,
                          true>(p, stream, why);
}

// The decoding kernel of kSlabs 16-row slabs an item (a slab's warps as
// the plan's; sm80_fwd_decode_slabs picks the count from the rows).
template <class T, int kHeadDim, int kSlabs>
struct DecodeLaunch {
  static constexpr core::TilePlan plan = sm80_fwd_decode_plan(kHeadDim);
  static_assert(plan.head_dim == kHeadDim && plan.block_m == 16, "no decoding plan");
  using K = DecodeKernel<T, kHeadDim, plan.block_n, kSlabs * plan.workers, plan.stages, kSlabs>;
  static constexpr auto kernel =
      decode_kernel<T, kHeadDim, plan.block_n, kSlabs * plan.workers, plan.stages, kSlabs>;

  static fa2_status_t run(const core::AttnParams &p, cudaStream_t stream, std::string &why) {
    unsigned grid = 0;  // an item's parts side by side
    fa2_status_t status = grid_size(core::fwd_items(p, K::kRows) * p.kv_splits, grid, why);
    if (status != FA2_SUCCESS || grid == 0) return status;
    FA2_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
    kernel<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p);
    FA2_CUDA_CHECK(cudaGetLastError());
    if (p.kv_splits == 1) return FA2_SUCCESS;
    return launch_fwd_combine<T>(p, stream, why);
  }

  static fa2_status_t ctas_per_sm(int &ctas, std::string &why) {
    FA2_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
    FA2_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, kernel, K::kThreads, K::kSmemBytes));
    return FA2_SUCCESS;
  }
};

template <class T, int kHeadDim>
fa2_status_t launch_fwd_decode(const core::AttnParams &p, cudaStream_t stream, std::string &why) {
  return sm80_fwd_decode_slabs(p.seqlen_q) == 1
             ? DecodeLaunch<T, kHeadDim, 1>::run(p, stream, why)
             : DecodeLaunch<T, kHeadDim, 2>::run(p, stream, why);
}

template <class T, int kHeadDim>
fa2_status_t fwd_decode_ctas_per_sm(int slabs, int &ctas, std::string &why) {
  return slabs == 1 ? DecodeLaunch<T, kHeadDim, 1>::ctas_per_sm(ctas, why)
                    : DecodeLaunch<T, kHeadDim, 2>::ctas_per_sm(ctas, why);
}

template <class T, int kHeadDim, int kBlockM, int kBlockN, int kDSplit, int kStages,
          int kDoStages>
fa2_status_t launch_bwd_tiles(const core::AttnParams &p, const BwdScratch &scratch,
                              cudaStream_t stream, std::string &why) {
  using K = BwdKernel<T, kHeadDim, kBlockM, kBlockN, kDSplit, kStages, kDoStages>;
  const auto kernel = bwd_kernel<T, kHeadDim, kBlockM, kBlockN, kDSplit, kStages, kDoStages>;
  unsigned grid = 0;
  const fa2_status_t status = grid_size(core::bwd_items(p, kBlockN), grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  FA2_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSmemBytes));
  kernel<<<grid, K::kThreads, K::kSmemBytes, stream>>>(p, scratch);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

template <class T, int kHeadDim, SmemBudget kBudget>
fa2_status_t launch_bwd_plan(const core::AttnParams &p, const BwdScratch &scratch,
                             cudaStream_t stream, std::string &why) {
  constexpr BwdPlan plan = sm80_bwd_plan(kHeadDim, kBudget);
  static_assert(plan.block_m > 0, "no backward plan for this head dim");
  static_assert(BwdKernel<T, kHeadDim, plan.block_m, plan.block_n, plan.d_split, plan.stages,
                          plan.do_stages>::kSmemBytes <= smem_budget_bytes(kBudget),
                "a backward plan over its shared-memory budget");
  return launch_bwd_tiles<T, kHeadDim, plan.block_m, plan.block_n, plan.d_split, plan.stages,
                          plan.do_stages>(p, scratch, stream, why);
}

// The plan for the current device's shared memory: one kernel where both
// budgets' plans agree, else the larger one where the device has its room.
template <class T, int kHeadDim>
fa2_status_t launch_bwd(const core::AttnParams &p, const BwdScratch &scratch, cudaStream_t stream,
                        std::string &why) {
  if constexpr (!(sm80_bwd_plan(kHeadDim, SmemBudget::a100) ==
                  sm80_bwd_plan(kHeadDim, SmemBudget::hopper))) {
    int smem_bytes = 0;
    FA2_CUDA_CHECK(device_smem_per_block(smem_bytes));
    if (smem_bytes >= smem_budget_bytes(SmemBudget::hopper))
      return launch_bwd_plan<T, kHeadDim, SmemBudget::hopper>(p, scratch, stream, why);
  }
  return launch_bwd_plan<T, kHeadDim, SmemBudget::a100>(p, scratch, stream, why);
}

}  // namespace fa2::cuda
