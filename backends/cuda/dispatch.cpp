#include "dispatch.h"

#include "core/work.h"
#include "sm80/launch.h"
#include "sm80/tile_plan.h"
#ifdef FA2_CUDA_SM90
#include "sm90/launch.h"
#include "sm90/tensor_map.h"
#include "sm90/tile_plan.h"
#endif

namespace fa2::cuda {
namespace {

template <class T>
bool kernels_of_type(int bucket, KernelSet &out) {
  out.bwd_delta = launch_bwd_delta<T>;
  out.bwd_dq_convert = launch_bwd_dq_convert<T>;
  switch (bucket) {
#define FA2_CUDA_BUCKET(D)                                     \
  case D:                                                      \
    out.fwd = launch_fwd<T, D>;                                \
    out.fwd_decode = launch_fwd_decode<T, D>;                  \
    out.fwd_decode_ctas_per_sm = fwd_decode_ctas_per_sm<T, D>; \
    out.bwd = launch_bwd<T, D>;                                \
    return true;
    // FA2_CUDA_HD<d> is defined for each bucket this build compiled.
#ifdef FA2_CUDA_HD32
    FA2_CUDA_BUCKET(32)
#endif
#ifdef FA2_CUDA_HD64
    FA2_CUDA_BUCKET(64)
#endif
#ifdef FA2_CUDA_HD96
    FA2_CUDA_BUCKET(96)
#endif
#ifdef FA2_CUDA_HD128
    FA2_CUDA_BUCKET(128)
#endif
#ifdef FA2_CUDA_HD192
    FA2_CUDA_BUCKET(192)
#endif
#ifdef FA2_CUDA_HD256
    FA2_CUDA_BUCKET(256)
#endif
#undef FA2_CUDA_BUCKET
    default: return false;
  }
}

#ifdef FA2_CUDA_SM90
// FA2_CUDA_SM90_FWD_HD<d> / _BWD_HD<d> are defined for each Hopper kernel
// this build compiled.
template <class T, int kHeadDim>
FwdLauncher hopper_fwd_of_plan(sm90::FwdPlan plan) {
  using sm90::FwdPlan;
  if (plan == FwdPlan::varlen) return sm90::launch_fwd<T, kHeadDim, FwdPlan::varlen>;
  if constexpr (sm90::sm90_fwd_has_wide(kHeadDim))
    if (plan == FwdPlan::wide) return sm90::launch_fwd<T, kHeadDim, FwdPlan::wide>;
  return sm90::launch_fwd<T, kHeadDim, FwdPlan::standard>;
}

template <class T>
FwdLauncher hopper_fwd_of_type(int bucket, sm90::FwdPlan plan) {
  switch (bucket) {
#ifdef FA2_CUDA_SM90_FWD_HD64
    case 64: return hopper_fwd_of_plan<T, 64>(plan);
#endif
#ifdef FA2_CUDA_SM90_FWD_HD128
    case 128: return hopper_fwd_of_plan<T, 128>(plan);
#endif
#ifdef FA2_CUDA_SM90_FWD_HD256
    case 256: return hopper_fwd_of_plan<T, 256>(plan);
#endif
    default: return nullptr;
  }
}

template <class T>
BwdLauncher hopper_bwd_of_type(int bucket, bool varlen) {
  switch (bucket) {
#ifdef FA2_CUDA_SM90_BWD_HD64
    case 64: return varlen ? sm90::launch_bwd<T, 64, true> : sm90::launch_bwd<T, 64, false>;
#endif
#ifdef FA2_CUDA_SM90_BWD_HD128
    case 128: return varlen ? sm90::launch_bwd<T, 128, true> : sm90::launch_bwd<T, 128, false>;
#endif
#ifdef FA2_CUDA_SM90_BWD_HD256
    case 256: return varlen ? sm90::launch_bwd<T, 256, true> : sm90::launch_bwd<T, 256, false>;
#endif
    default: return nullptr;
  }
}
#endif

}  // namespace

FwdRoute fwd_route(const core::AttnParams &p, const KernelSet &kernels,
                   const int64_t (&slots)[kDecodeMaxSlabs]) {
  FwdRoute route{p};
  // Folded where a group's rows fit the route (a few drafted tokens); a
  // longer call keeps its heads, each item reading K / V for its own rows.
  const bool fold = core::can_fold_query_groups(p) &&
                    int64_t(p.seqlen_q) * p.group_size <= kDecodeMaxRows;
  const core::AttnParams folded = fold ? core::fold_query_groups(p) : p;
  if (folded.seqlen_q > kDecodeMaxRows || folded.seqlen_q == 0 || folded.seqlen_k == 0)
    return route;
  const core::TilePlan plan = sm80_fwd_decode_plan(kernels.head_dim_bucket);
  const int slabs = sm80_fwd_decode_slabs(folded.seqlen_q);
  const int key_blocks = core::ceil_div(folded.seqlen_k, plan.block_n);
  int splits = core::kv_splits(core::fwd_items(folded, slabs * plan.block_m), key_blocks,
                               slots[slabs - 1], kMaxKvSplits, kKvSplitPartCost);
  // Two slabs halve the items: where one slab's would fill the device
  // unsplit, the halved ones split only over many keys (sm80/tile_plan.h).
  if (slabs > 1 && key_blocks < kDecodeSlabSplitMinBlocks &&
      core::kv_splits(core::fwd_items(folded, plan.block_m), key_blocks, slots[0], kMaxKvSplits,
                      kKvSplitPartCost) == 1)
    splits = 1;
  // The parts' [splits, rows, head_dim] and [splits, rows] floats.
  uint64_t lse_floats = 0, out_bytes = 0, lse_offset = 0, bytes = 0;
  const uint64_t rows = uint64_t(p.batch) * uint64_t(p.heads_q) * uint64_t(p.seqlen_q);
  if (splits > 1 && (__builtin_mul_overflow(rows, uint64_t(splits), &lse_floats) ||
                     __builtin_mul_overflow(lse_floats, uint64_t(p.head_dim) * 4, &out_bytes) ||
                     __builtin_add_overflow(out_bytes, uint64_t(255), &lse_offset) ||
                     __builtin_add_overflow(lse_offset / 256 * 256, lse_floats * 4, &bytes)))
    splits = 1;  // (not for any real call; then no parts)
  if (splits == 1 && !fold) return route;
  route.params = folded;
  route.params.kv_splits = splits;
  route.decode = true;
  if (splits > 1) {
    route.lse_partial_offset = lse_offset / 256 * 256;
    route.partial_bytes = bytes;
  }
  return route;
}

FwdLauncher hopper_fwd_for(const core::AttnParams &p) {
#ifdef FA2_CUDA_SM90
  if (p.head_dim < sm90::kMinHeadDim || !sm90::tma_covers(p) ||
      !sm90::tma_covers_operand(p, p.out, p.heads_q))  // O may leave by TMA (kTmaOut)
    return nullptr;
  const int bucket = core::head_dim_bucket(p.head_dim, sm90::kHeadDimBuckets);
  const sm90::FwdPlan plan = p.is_varlen()                           ? sm90::FwdPlan::varlen
                             : sm90::sm90_fwd_wide(bucket, p.seqlen_k) ? sm90::FwdPlan::wide
                                                                       : sm90::FwdPlan::standard;
  if (p.dtype == core::Dtype::f16) return hopper_fwd_of_type<__half>(bucket, plan);
  if (p.dtype == core::Dtype::bf16) return hopper_fwd_of_type<__nv_bfloat16>(bucket, plan);
#else
  (void)p;
#endif
  return nullptr;
}

BwdLauncher hopper_bwd_for(const core::AttnParams &p) {
#ifdef FA2_CUDA_SM90
  if (p.head_dim < sm90::kMinHeadDim || !sm90::tma_covers(p) ||
      !sm90::tma_covers_operand(p, p.dout, p.heads_q))
    return nullptr;
  const int bucket = core::head_dim_bucket(p.head_dim, sm90::kBwdHeadDimBuckets);
  if (p.dtype == core::Dtype::f16) return hopper_bwd_of_type<__half>(bucket, p.is_varlen());
  if (p.dtype == core::Dtype::bf16)
    return hopper_bwd_of_type<__nv_bfloat16>(bucket, p.is_varlen());
#else
  (void)p;
#endif
  return nullptr;
}

bool hopper_bwd_counts_keys(const core::AttnParams &p) {
#ifdef FA2_CUDA_SM90
  return sm90::sm90_bwd_counts_keys(core::head_dim_bucket(p.head_dim, sm90::kBwdHeadDimBuckets));
#else
  (void)p;
  return false;
#endif
}

uint64_t hopper_fwd_workspace_bytes(const core::AttnParams &p) {
#ifdef FA2_CUDA_SM90
  return p.is_varlen() ? sm90::kFwdTileCounterBytes + sm90::sequence_maps_bytes(p) : 0;
#else
  (void)p;
  return 0;
#endif
}

uint64_t hopper_bwd_workspace_bytes(const core::AttnParams &p) {
#ifdef FA2_CUDA_SM90
  return sm90::sequence_maps_bytes(p);
#else
  (void)p;
  return 0;
#endif
}

fa2_status_t kernels_for(core::Dtype dtype, int head_dim, KernelSet &out, std::string &why) {
  out = KernelSet{};
  out.head_dim_bucket = core::head_dim_bucket(head_dim, kHeadDimBuckets);
  bool found = false;
  if (dtype == core::Dtype::f16) found = kernels_of_type<__half>(out.head_dim_bucket, out);
  if (dtype == core::Dtype::bf16) found = kernels_of_type<__nv_bfloat16>(out.head_dim_bucket, out);
  if (found) return FA2_SUCCESS;
  if (dtype == core::Dtype::f32) {
    why = "the CUDA backend has no f32 kernels";
    return FA2_ERROR_UNSUPPORTED_DTYPE;
  }
  why = "head_dim " + std::to_string(head_dim) + " needs the " +
        std::to_string(out.head_dim_bucket) +
        " kernels, which this build left out (FA2_CUDA_HEAD_DIMS=" FA2_CUDA_HEAD_DIMS_STRING ")";
  return FA2_ERROR_UNSUPPORTED_HEAD_DIM;
}

}  // namespace fa2::cuda
