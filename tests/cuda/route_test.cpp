// The CUDA backend's decoding route (dispatch.cpp's fwd_route), without a
// GPU: which calls it folds, how many rows an item holds, how many parts
// the keys split into. The slots are an H100's (132 SMs; one decoding CTA
// an SM at d128, for one slab or two). What the numbers trade is in
// sm80/tile_plan.h; here they must not drift unnoticed.
#include <gtest/gtest.h>

#include "core/params.h"
#include "dispatch.h"
#include "sm80/tile_plan.h"

namespace fa2::cuda {
namespace {

constexpr int64_t kH100Slots[kDecodeMaxSlabs] = {132, 132};

// tokens query rows a sequence, 32 query heads on 8 KV heads, bf16 d128.
core::AttnParams decoding(int batch, int tokens, int seqlen_k) {
  core::AttnParams p;
  p.dtype = core::Dtype::bf16;
  p.batch = batch, p.seqlen_q = tokens, p.seqlen_k = seqlen_k;
  p.heads_q = 32, p.heads_kv = 8, p.group_size = 4, p.head_dim = 128;
  p.window_left = p.window_right = core::kUnlimited;
  return p;
}

FwdRoute route_of(const core::AttnParams &p) {
  KernelSet kernels;
  kernels.head_dim_bucket = 128;
  return fwd_route(p, kernels, kH100Slots);
}

TEST(CudaRoute, OneTokenFoldsIntoOneSlabAndSplits) {
  const FwdRoute r = route_of(decoding(1, 1, 4096));
  ASSERT_TRUE(r.decode);
  EXPECT_EQ(r.params.heads_q, 8);
  EXPECT_EQ(r.params.seqlen_q, 4);  // the group's four query heads
  EXPECT_EQ(sm80_fwd_decode_slabs(r.params.seqlen_q), 1);
  EXPECT_GT(r.params.kv_splits, 1);
  EXPECT_GT(r.partial_bytes, 0u);
}

TEST(CudaRoute, EightDraftedTokensTakeTwoSlabs) {
  const FwdRoute r = route_of(decoding(32, 8, 4096));
  ASSERT_TRUE(r.decode);
  EXPECT_EQ(r.params.seqlen_q, 32);
  EXPECT_EQ(sm80_fwd_decode_slabs(r.params.seqlen_q), 2);
  EXPECT_EQ(r.params.kv_splits, 1);  // 256 two-slab items fill 132 slots
  EXPECT_EQ(r.partial_bytes, 0u);
}

// Batch 8: 64 two-slab items would split where 128 one-slab items did not;
// that pays from kDecodeSlabSplitMinBlocks key blocks (128 keys each) on.
TEST(CudaRoute, TwoSlabsSplitOnlyLongKeysThatOneSlabRanWhole) {
  for (int seqlen_k : {1024, 4096, 63 * 128}) {
    const FwdRoute r = route_of(decoding(8, 8, seqlen_k));
    ASSERT_TRUE(r.decode);
    EXPECT_EQ(r.params.kv_splits, 1) << seqlen_k;
  }
  for (int seqlen_k : {63 * 128 + 1, 16384, 131072}) {
    const FwdRoute r = route_of(decoding(8, 8, seqlen_k));
    ASSERT_TRUE(r.decode);
    EXPECT_GT(r.params.kv_splits, 1) << seqlen_k;
    EXPECT_GT(r.partial_bytes, 0u);
  }
  // Batch 1: one-slab items split too, so two-slab ones keep their split.
  EXPECT_GT(route_of(decoding(1, 8, 1024)).params.kv_splits, 1);
}

TEST(CudaRoute, UnfoldedRowsSplitOrKeepTheForward) {
  // 17 tokens x 4 heads = 68 rows: over 64, so the query heads stay apart;
  // with few items the keys still split, 17 rows an item in two slabs.
  const FwdRoute few = route_of(decoding(1, 17, 4096));
  ASSERT_TRUE(few.decode);
  EXPECT_EQ(few.params.heads_q, 32);
  EXPECT_EQ(sm80_fwd_decode_slabs(few.params.seqlen_q), 2);
  EXPECT_GT(few.params.kv_splits, 1);
  EXPECT_FALSE(route_of(decoding(32, 17, 4096)).decode);  // enough items: the forward
  EXPECT_FALSE(route_of(decoding(1, 65, 4096)).decode);   // more rows than an item's 64
  EXPECT_FALSE(route_of(decoding(32, 1, 0)).decode);      // no keys
}

}  // namespace
}  // namespace fa2::cuda
