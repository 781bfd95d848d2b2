// work.h: the work decompositions are bijections onto their index ranges,
// and the addressing helpers agree with the layouts fa2.h documents.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "core/work.h"

namespace fa2::core {
namespace {

AttnParams shape(int batch, int seqlen_q, int seqlen_k, int heads_q, int heads_kv) {
  AttnParams p;
  p.batch = batch, p.seqlen_q = seqlen_q, p.seqlen_k = seqlen_k;
  p.heads_q = heads_q, p.heads_kv = heads_kv, p.group_size = heads_q / heads_kv;
  return p;
}

std::vector<AttnParams> shapes() {
  std::vector<AttnParams> all;
  for (int batch : {0, 1, 3})
    for (int seqlen : {0, 1, 7, 64, 113, 129})
      for (auto [hq, hkv] : {std::pair{1, 1}, std::pair{4, 4}, std::pair{6, 2}, std::pair{5, 1}})
        all.push_back(shape(batch, seqlen, seqlen + 3, hq, hkv));
  return all;
}

TEST(Work, StatRowInvertsRowStatIndex) {
  for (const AttnParams &p : shapes())
    for (int64_t i = 0; i < int64_t(p.batch) * p.heads_q * p.seqlen_q; ++i) {
      const StatRow at = stat_row(p, i);
      ASSERT_LT(at.batch, p.batch);
      ASSERT_LT(at.head_q, p.heads_q);
      ASSERT_LT(at.row, p.seqlen_q);
      ASSERT_EQ(row_stat_index(p, at.batch, at.head_q, at.row), i);
    }
}

TEST(Work, FwdItemIsABijectionInEitherOrder) {
  for (const AttnParams &p : shapes())
    for (FwdOrder order : {FwdOrder::head_blocks_together, FwdOrder::longest_rows_first})
      for (int block_m : {1, 16, 64, 128}) {
        const bool rows_first = order == FwdOrder::longest_rows_first;
        const int m_blocks = ceil_div(p.seqlen_q, block_m);
        ASSERT_EQ(fwd_items(p, block_m), int64_t(p.batch) * p.heads_q * m_blocks);
        std::set<std::tuple<int, int, int>> seen;
        FwdItem last{0, 0, m_blocks};
        for (int64_t i = 0; i < fwd_items(p, block_m); ++i) {
          const FwdItem it = fwd_item(p, block_m, i, order);
          ASSERT_GE(it.batch, 0);
          ASSERT_LT(it.batch, p.batch);
          ASSERT_GE(it.head_q, 0);
          ASSERT_LT(it.head_q, p.heads_q);
          ASSERT_GE(it.m_block, 0);
          ASSERT_LT(it.m_block, m_blocks);
          if (rows_first) {
            ASSERT_LE(it.m_block, last.m_block);  // longest (last) query blocks first
          } else if (i % m_blocks != 0) {         // one head's blocks together, last first
            ASSERT_EQ(it.batch, last.batch);
            ASSERT_EQ(it.head_q, last.head_q);
            ASSERT_EQ(it.m_block, last.m_block - 1);
          }
          last = it;
          ASSERT_TRUE(seen.insert({it.batch, it.head_q, it.m_block}).second) << "item " << i;
        }
      }
}

TEST(Work, DefaultFwdOrderSchedulesMaskedRowsLongestFirst) {
  AttnParams p = shapes().front();
  p.has_mask = true;
  EXPECT_EQ(default_fwd_order(p), FwdOrder::longest_rows_first);
  p.has_mask = false;
  EXPECT_EQ(default_fwd_order(p), FwdOrder::head_blocks_together);
}

TEST(Work, FwdOrderKeepsHeadsTogetherUpToTheThreshold) {
  EXPECT_EQ(fwd_order(true, 33, 32), FwdOrder::longest_rows_first);
  EXPECT_EQ(fwd_order(true, 32, 32), FwdOrder::head_blocks_together);
  EXPECT_EQ(fwd_order(true, 1, 0), FwdOrder::longest_rows_first);
  EXPECT_EQ(fwd_order(false, 1000, 0), FwdOrder::head_blocks_together);
}

TEST(Work, BwdItemIsABijection) {
  for (AttnParams p : shapes())
    for (bool masked : {false, true})
      for (int64_t cache_bytes : {int64_t(0), int64_t(1), int64_t(1) << 14, int64_t(1) << 40})
        for (int block_n : {1, 16, 64, 128}) {
          p.has_mask = masked;
          const int n_blocks = ceil_div(p.seqlen_k, block_n);
          ASSERT_EQ(bwd_items(p, block_n), int64_t(p.batch) * p.heads_kv * n_blocks);
          std::set<std::tuple<int, int, int>> seen;
          for (int64_t i = 0; i < bwd_items(p, block_n); ++i) {
            const BwdItem it = bwd_item(p, block_n, i, cache_bytes);
            ASSERT_GE(it.batch, 0);
            ASSERT_LT(it.batch, p.batch);
            ASSERT_GE(it.head_kv, 0);
            ASSERT_LT(it.head_kv, p.heads_kv);
            ASSERT_GE(it.n_block, 0);
            ASSERT_LT(it.n_block, n_blocks);
            ASSERT_TRUE(seen.insert({it.batch, it.head_kv, it.n_block}).second) << "item " << i;
          }
        }
}

TEST(Work, MaskedBwdWalksHeadGroupsKeyBlockSlowest) {
  AttnParams p = shape(2, 256, 256, 3, 3);  // 6 (batch, kv head) pairs, 4 key blocks of 64
  p.head_dim = 64;
  p.dtype = Dtype::bf16;
  const int64_t head_bytes = 2 * 256 * 64 * 2;  // Q and dO of one head
  // Unmasked, or no cache given: a head's key blocks stay together.
  for (int64_t cache : {int64_t(0), 4 * head_bytes}) {
    p.has_mask = cache == 0;
    const BwdItem it = bwd_item(p, 64, 1, cache);
    EXPECT_EQ(it.batch * 3 + it.head_kv, 0);
    EXPECT_EQ(it.n_block, 1);
  }
  // Masked with room for 4 heads: groups of 4 and 2 heads, key block slowest.
  p.has_mask = true;
  ASSERT_EQ(bwd_heads_together(p, 4 * head_bytes), 4);
  const int expect[][2] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {1, 1}, {2, 1}, {3, 1},
                           {0, 2}, {1, 2}, {2, 2}, {3, 2}, {0, 3}, {1, 3}, {2, 3}, {3, 3},
                           {4, 0}, {5, 0}, {4, 1}, {5, 1}, {4, 2}, {5, 2}, {4, 3}, {5, 3}};
  for (int i = 0; i < 24; ++i) {
    const BwdItem it = bwd_item(p, 64, i, 4 * head_bytes);
    EXPECT_EQ(it.batch * 3 + it.head_kv, expect[i][0]) << "item " << i;
    EXPECT_EQ(it.n_block, expect[i][1]) << "item " << i;
  }
}

TEST(Work, GroupsAndRowStatistics) {
  const AttnParams p = shape(3, 10, 12, 6, 2);
  for (int h = 0; h < 6; ++h) EXPECT_EQ(kv_head_of(p, h), h / 3);
  std::set<int64_t> seen;
  for (int b = 0; b < 3; ++b)
    for (int h = 0; h < 6; ++h)
      for (int r = 0; r < 10; ++r) {
        const int64_t idx = row_stat_index(p, b, h, r);
        EXPECT_EQ(idx, (int64_t(b) * 6 + h) * 10 + r);  // [batch, heads_q, seqlen_q]
        EXPECT_TRUE(seen.insert(idx).second);
      }
}

TEST(Work, SeqInfoAndRowOffsets) {
  AttnParams p = shape(3, 9, 8, 2, 1);
  const SeqInfo dense = seq_info(p, 2);
  EXPECT_EQ(dense.q_row0, 0);
  EXPECT_EQ(dense.seqlen_q, 9);
  EXPECT_EQ(dense.seqlen_k, 8);
  TensorRef t;
  t.stride_batch = 1000, t.stride_seq = 40, t.stride_head = 8;
  EXPECT_EQ(row_offset(t, 2, 0, 5, 1), 2 * 1000 + 5 * 40 + 8);

  const int32_t cu_q[] = {0, 4, 4, 9};  // a zero-length query sequence in the middle
  const int32_t cu_k[] = {0, 0, 6, 8};  // a zero-length key sequence first
  p.cu_seqlens_q = cu_q, p.cu_seqlens_k = cu_k;
  const SeqInfo s0 = seq_info(p, 0), s1 = seq_info(p, 1), s2 = seq_info(p, 2);
  EXPECT_EQ(s0.seqlen_q, 4);
  EXPECT_EQ(s0.seqlen_k, 0);
  EXPECT_EQ(s1.seqlen_q, 0);
  EXPECT_EQ(s1.seqlen_k, 6);
  EXPECT_EQ(s2.q_row0, 4);
  EXPECT_EQ(s2.k_row0, 6);
  EXPECT_EQ(s2.seqlen_q, 5);
  EXPECT_EQ(s2.seqlen_k, 2);
  t.stride_batch = 0;  // varlen: rows come from cu_seqlens
  EXPECT_EQ(row_offset(t, 2, s2.q_row0, 1, 1), (4 + 1) * 40 + 8);
  const Mask m = mask_of(p, s2);
  EXPECT_EQ(m.seqlen_q, 5);
  EXPECT_EQ(m.seqlen_k, 2);
}

TEST(Work, SplitRangePartsCoverTheBlocksInOrder) {
  for (BlockRange blocks :
       {BlockRange{0, 0}, BlockRange{3, 4}, BlockRange{2, 13}, BlockRange{0, 256}})
    for (int splits : {1, 2, 3, 7, 16, 64}) {
      int next = blocks.begin;
      for (int split = 0; split < splits; ++split) {
        const BlockRange part = split_range(blocks, split, splits);
        if (part.empty()) continue;
        ASSERT_EQ(part.begin, next);  // contiguous, disjoint, in order
        ASSERT_LE(part.end - part.begin, ceil_div(blocks.end - blocks.begin, splits));
        next = part.end;
      }
      ASSERT_EQ(next, blocks.empty() ? blocks.begin : blocks.end);
    }
}

TEST(Work, KvSplitsFillTheDeviceWithoutEmptyParts) {
  // 8 items on 264 slots, 256 blocks: 32 parts of 8 fill one round.
  EXPECT_EQ(kv_splits(8, 256, 264, 64, 2), 32);
  // Items that fill the device already: no split.
  EXPECT_EQ(kv_splits(1000, 256, 264, 64, 2), 1);
  EXPECT_EQ(kv_splits(8, 1, 264, 64, 2), 1);  // one block: nothing to split
  EXPECT_EQ(kv_splits(0, 256, 264, 64, 2), 1);
  for (int blocks : {1, 2, 5, 10, 33, 100, 2048})
    for (int64_t items : {1, 3, 64, 200}) {
      const int splits = kv_splits(items, blocks, 132, 64, 2);
      ASSERT_GE(splits, 1);
      ASSERT_LE(splits, 64);
      ASSERT_EQ(ceil_div(blocks, ceil_div(blocks, splits)), splits);  // no empty part
    }
}

TEST(Work, FoldedQueryGroupsAddressTheSameRows) {
  for (int seqlen_q : {1, 3, 7}) {
    // [batch, seqlen_q, 8 heads, 16] contiguous, groups of 4 heads
    AttnParams p = shape(3, seqlen_q, 100, 8, 2);
    p.head_dim = 16;
    p.window_left = kUnlimited, p.window_right = 0;
    p.q.stride_head = p.out.stride_head = 16, p.q.stride_seq = p.out.stride_seq = 8 * 16;
    p.q.stride_batch = p.out.stride_batch = seqlen_q * 8 * 16;
    ASSERT_TRUE(can_fold_query_groups(p));
    const AttnParams f = fold_query_groups(p);
    EXPECT_EQ(f.heads_q, 2);
    EXPECT_EQ(f.seqlen_q, 4 * seqlen_q);
    EXPECT_EQ(f.group_size, 1);
    EXPECT_FALSE(can_fold_query_groups(f));
    const SeqInfo seq = seq_info(f, 0);
    const Mask mask = mask_of(p, seq_info(p, 0)), folded_mask = query_mask_of(f, seq);
    EXPECT_EQ(folded_mask.diag(), mask.diag());
    std::set<int64_t> q_rows;
    for (int b = 0; b < 3; ++b)
      for (int h = 0; h < 2; ++h)
        for (int r = 0; r < f.seqlen_q; ++r) {
          const int head = h * 4 + r / seqlen_q, position = r % seqlen_q;
          const QueryRow at = query_row(f, r, h);
          EXPECT_EQ(at.head_q, head);
          EXPECT_EQ(at.position, position);
          const int64_t q_row = query_row_offset(f, f.q, b, 0, r, h);
          EXPECT_EQ(q_row, row_offset(p.q, b, 0, position, head));
          EXPECT_EQ(query_row_offset(f, f.out, b, 0, r, h), row_offset(p.out, b, 0, position, head));
          EXPECT_EQ(row_stat_index(f, b, h, r), row_stat_index(p, b, head, position));
          EXPECT_EQ(kv_head_of(f, h), kv_head_of(p, head));
          q_rows.insert(q_row);
        }
    EXPECT_EQ(q_rows.size(), size_t(3 * 8 * seqlen_q));  // every query row once
    // The positions of rows [first, last] of a head: every row's inside.
    for (int first = 0; first < f.seqlen_q; ++first)
      for (int last = first; last < f.seqlen_q; ++last) {
        const IndexRange held = query_positions(f, first, last);
        for (int r = first; r <= last; ++r) EXPECT_TRUE(held.contains(r % seqlen_q));
        if (first / seqlen_q == last / seqlen_q)  // one head's rows: exact
          EXPECT_EQ(held.end - held.begin, last - first + 1);
      }
    // Unfolded calls: rows are positions.
    EXPECT_EQ(query_row(p, 2, 5).head_q, 5);
    EXPECT_EQ(query_row(p, 2, 5).position, 2);
    EXPECT_EQ(query_positions(p, 2, 6).end, 7);
    EXPECT_EQ(query_mask_of(p, seq_info(p, 0)).seqlen_q, seqlen_q);
  }
  AttnParams p = shape(1, 1, 100, 8, 2);
  p.cu_seqlens_q = reinterpret_cast<const int32_t *>(&p);  // varlen: not folded
  EXPECT_FALSE(can_fold_query_groups(p));
  EXPECT_FALSE(can_fold_query_groups(shape(1, 1, 100, 8, 8)));  // no group
}

}  // namespace
}  // namespace fa2::core
