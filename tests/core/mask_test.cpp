// mask.h against brute force: the visibility rule, the per-row / per-column
// ranges, and the tile loops' block ranges and masking decisions.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/mask.h"
#include "core/params.h"

namespace fa2::core {
namespace {

// The rule of mask.h written from its definition, in int64, with the
// unlimited sides taken literally.
bool visible_ref(const Mask &m, int i, int j) {
  if (i < 0 || i >= m.seqlen_q || j < 0 || j >= m.seqlen_k) return false;
  const int64_t diag = int64_t(m.seqlen_k) - m.seqlen_q;
  if (m.left != kUnlimited && j < i + diag - m.left) return false;
  if (m.right != kUnlimited && j > i + diag + m.right) return false;
  return true;
}

std::vector<Mask> sample_masks() {
  std::vector<Mask> masks;
  const int lengths[] = {0, 1, 2, 3, 7, 9, 16, 17};
  const int sides[] = {kUnlimited, 0, 1, 2, 5, 20};
  for (int lq : lengths)
    for (int lk : lengths)
      for (int left : sides)
        for (int right : sides) masks.push_back({lq, lk, left, right});
  return masks;
}

TEST(Mask, VisibleMatchesTheRule) {
  for (const Mask &m : sample_masks())
    for (int i = 0; i < m.seqlen_q; ++i)
      for (int j = 0; j < m.seqlen_k + 2; ++j)
        ASSERT_EQ(m.visible(i, j), visible_ref(m, i, j))
            << "q " << m.seqlen_q << " k " << m.seqlen_k << " left " << m.left << " right "
            << m.right << " i " << i << " j " << j;
}

// The ranges agree with the rule on every key and query of the tiles,
// padding included: keys past seqlen_k and (queries_seeing) queries past
// seqlen_q see nothing; keys_seen_by follows visible() on padded queries.
TEST(Mask, SeenRangesMatchTheRule) {
  for (const Mask &m : sample_masks()) {
    for (int j = 0; j < m.seqlen_k + 3; ++j) {
      const IndexRange seen = m.queries_seeing(j);
      for (int i = 0; i < m.seqlen_q + 3; ++i)
        ASSERT_EQ(seen.contains(i), visible_ref(m, i, j))
            << "q " << m.seqlen_q << " k " << m.seqlen_k << " left " << m.left << " right "
            << m.right << " i " << i << " j " << j;
    }
    for (int i = 0; i < m.seqlen_q + 3; ++i) {
      const IndexRange seen = m.keys_seen_by(i);
      for (int j = 0; j < m.seqlen_k + 3; ++j)
        ASSERT_EQ(seen.contains(j), m.visible(i, j))
            << "q " << m.seqlen_q << " k " << m.seqlen_k << " left " << m.left << " right "
            << m.right << " i " << i << " j " << j;
    }
  }
}

// keys_end_by(row_last, col) promises that no row up to row_last, padded
// rows past seqlen_q included (a kernel's last tile), sees a key at or past
// col; without a left window side (nothing but causal) it is also exact.
TEST(Mask, KeysEndByIsSafeAndExactWithoutALeftSide) {
  for (const Mask &m : sample_masks())
    for (int row_last = 0; row_last < m.seqlen_q + 3; ++row_last)
      for (int col = 0; col <= m.seqlen_k + 1; ++col) {
        bool seen_past = false;
        for (int i = 0; i <= row_last; ++i)
          for (int j = col; j < m.seqlen_k + 2; ++j) seen_past = seen_past || m.visible(i, j);
        const bool promised = keys_end_by(m, row_last, col);
        ASSERT_TRUE(!promised || !seen_past)
            << "q " << m.seqlen_q << " k " << m.seqlen_k << " left " << m.left << " right "
            << m.right << " row_last " << row_last << " col " << col;
        if (m.left == kUnlimited)
          ASSERT_EQ(promised, !seen_past)
              << "q " << m.seqlen_q << " k " << m.seqlen_k << " right " << m.right
              << " row_last " << row_last << " col " << col;
      }
}

TEST(Mask, CausalIsBottomRightAligned) {
  const Mask wide{3, 5, kUnlimited, 0};  // seqlen_q < seqlen_k: the last query sees every key
  EXPECT_TRUE(wide.visible(2, 4));
  EXPECT_TRUE(wide.visible(0, 2));
  EXPECT_FALSE(wide.visible(0, 3));
  const Mask tall{5, 3, kUnlimited, 0};  // seqlen_q > seqlen_k: the first two queries see nothing
  EXPECT_FALSE(tall.visible(0, 0));
  EXPECT_FALSE(tall.visible(1, 0));
  EXPECT_TRUE(tall.visible(2, 0));
  EXPECT_TRUE(tall.visible(4, 2));
}

TEST(Mask, RowAndColumnRanges) {
  for (const Mask &m : sample_masks()) {
    for (int i = 0; i < m.seqlen_q; ++i) {
      int first = -1, last = -1;
      for (int j = 0; j < m.seqlen_k; ++j)
        if (visible_ref(m, i, j)) last = j, first = first < 0 ? j : first;
      if (first < 0) {
        EXPECT_LE(m.key_end(i), m.key_begin(i));
      } else {
        EXPECT_EQ(m.key_begin(i), first);
        EXPECT_EQ(m.key_end(i), last + 1);
      }
    }
    for (int j = 0; j < m.seqlen_k; ++j) {
      int first = -1, last = -1;
      for (int i = 0; i < m.seqlen_q; ++i)
        if (visible_ref(m, i, j)) last = i, first = first < 0 ? i : first;
      if (first < 0) {
        EXPECT_LE(m.query_end(j), m.query_begin(j));
      } else {
        EXPECT_EQ(m.query_begin(j), first);
        EXPECT_EQ(m.query_end(j), last + 1);
      }
    }
  }
}

bool tile_has_visible(const Mask &m, int m_block, int n_block, int block_m, int block_n) {
  for (int i = m_block * block_m; i < (m_block + 1) * block_m; ++i)
    for (int j = n_block * block_n; j < (n_block + 1) * block_n; ++j)
      if (visible_ref(m, i, j)) return true;
  return false;
}

// The loops visit exactly the blocks that hold a visible element: no
// visible block skipped, and (the band being contiguous) none wasted.
TEST(Mask, BlockRangesAreExact) {
  const int block_sizes[] = {1, 2, 3, 4, 8, 16};
  for (const Mask &m : sample_masks())
    for (int block_m : block_sizes)
      for (int block_n : block_sizes) {
        const int m_blocks = ceil_div(m.seqlen_q, block_m);
        const int n_blocks = ceil_div(m.seqlen_k, block_n);
        for (int mb = 0; mb < m_blocks + 1; ++mb) {
          int first = -1, last = -1;
          for (int nb = 0; nb < n_blocks; ++nb)
            if (tile_has_visible(m, mb, nb, block_m, block_n)) last = nb, first = first < 0 ? nb : first;
          const BlockRange r = key_blocks(m, mb, block_m, block_n);
          if (first < 0) {
            EXPECT_TRUE(r.empty()) << "m_block " << mb;
          } else {
            EXPECT_EQ(r.begin, first) << "q " << m.seqlen_q << " k " << m.seqlen_k << " bm " << block_m << " bn " << block_n << " mb " << mb;
            EXPECT_EQ(r.end, last + 1);
          }
        }
        for (int nb = 0; nb < n_blocks + 1; ++nb) {
          int first = -1, last = -1;
          for (int mb = 0; mb < m_blocks; ++mb)
            if (tile_has_visible(m, mb, nb, block_m, block_n)) last = mb, first = first < 0 ? mb : first;
          const BlockRange r = query_blocks(m, nb, block_n, block_m);
          if (first < 0) {
            EXPECT_TRUE(r.empty()) << "n_block " << nb;
          } else {
            EXPECT_EQ(r.begin, first);
            EXPECT_EQ(r.end, last + 1);
          }
        }
      }
}

// span_of: the smallest range holding both; an empty side adds nothing.
TEST(Mask, SpanOfHoldsBothRanges) {
  const BlockRange ranges[] = {{0, 0}, {3, 3}, {5, 2}, {0, 4}, {2, 7}, {6, 9}, {4, 5}};
  for (const BlockRange &a : ranges)
    for (const BlockRange &b : ranges) {
      const BlockRange s = span_of(a, b);
      if (a.empty() && b.empty()) {
        EXPECT_TRUE(s.empty());
        continue;
      }
      for (const BlockRange &r : {a, b})
        if (!r.empty()) {
          EXPECT_LE(s.begin, r.begin);
          EXPECT_GE(s.end, r.end);
        }
      // Tight: both ends come from a non-empty side.
      const bool begin_from = (!a.empty() && s.begin == a.begin) || (!b.empty() && s.begin == b.begin);
      const bool end_from = (!a.empty() && s.end == a.end) || (!b.empty() && s.end == b.end);
      EXPECT_TRUE(begin_from && end_from);
    }
}

// tile_needs_mask is true exactly when some element of the tile is invisible
// or lies past a sequence end.
TEST(Mask, TileNeedsMaskIsExact) {
  const int block_sizes[] = {1, 2, 4, 5, 8};
  for (const Mask &m : sample_masks())
    for (int block_m : block_sizes)
      for (int block_n : block_sizes)
        for (int mb = 0; mb < ceil_div(m.seqlen_q, block_m); ++mb)
          for (int nb = 0; nb < ceil_div(m.seqlen_k, block_n); ++nb) {
            bool needs = false;
            for (int i = mb * block_m; i < (mb + 1) * block_m; ++i)
              for (int j = nb * block_n; j < (nb + 1) * block_n; ++j)
                needs = needs || !visible_ref(m, i, j);
            ASSERT_EQ(tile_needs_mask(m, mb, nb, block_m, block_n), needs)
                << "q " << m.seqlen_q << " k " << m.seqlen_k << " left " << m.left << " right "
                << m.right << " tile " << mb << "," << nb;
          }
}

// span_needs_mask is true exactly when some element of the rows x keys span
// inside the query sequence is invisible or lies past seqlen_k (a decoding
// item's rows end before the tile's: the rows past them are never written).
TEST(Mask, SpanNeedsMaskIsExact) {
  for (const Mask &m : sample_masks())
    for (int row_first = 0; row_first < m.seqlen_q; ++row_first)
      for (int row_last = row_first; row_last < m.seqlen_q; ++row_last)
        for (int col_first = 0; col_first < m.seqlen_k + 2; ++col_first)
          for (int col_last = col_first; col_last < m.seqlen_k + 2; col_last += 3) {
            bool needs = false;
            for (int i = row_first; i <= row_last; ++i)
              for (int j = col_first; j <= col_last; ++j) needs = needs || !visible_ref(m, i, j);
            ASSERT_EQ(span_needs_mask(m, row_first, row_last, col_first, col_last), needs)
                << "q " << m.seqlen_q << " k " << m.seqlen_k << " left " << m.left << " right "
                << m.right << " rows " << row_first << "-" << row_last << " keys " << col_first
                << "-" << col_last;
          }
}

// Random larger shapes, including lengths where unlimited sides meet
// the int32 limits of the arithmetic.
TEST(Mask, RandomShapesAndExtremeLengths) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    auto pick = [&](int n) { return int(rng() % unsigned(n)); };
    const int sides[] = {kUnlimited, pick(4), pick(40), pick(200)};
    const Mask m{pick(150), pick(150), sides[pick(4)], sides[pick(4)]};
    const int block_m = 1 + pick(20), block_n = 1 + pick(20);
    for (int mb = 0; mb < ceil_div(m.seqlen_q, block_m); ++mb) {
      const BlockRange r = key_blocks(m, mb, block_m, block_n);
      for (int nb = 0; nb < ceil_div(m.seqlen_k, block_n); ++nb)
        ASSERT_EQ(tile_has_visible(m, mb, nb, block_m, block_n), nb >= r.begin && nb < r.end);
    }
  }
  const int huge = int(kMaxSeqlen);
  const Mask big{huge, huge, kUnlimited, kUnlimited};
  EXPECT_TRUE(big.visible(0, huge - 1));
  EXPECT_TRUE(big.visible(huge - 1, 0));
  EXPECT_EQ(big.key_begin(huge - 1), 0);
  EXPECT_EQ(big.key_end(0), huge);
  const BlockRange all = key_blocks(big, 0, 128, 128);
  EXPECT_EQ(all.begin, 0);
  EXPECT_EQ(all.end, ceil_div(huge, 128));
  EXPECT_FALSE(tile_needs_mask(big, 5, 7, 128, 128));
  const Mask causal_big{1, huge, kUnlimited, 0};
  EXPECT_TRUE(causal_big.visible(0, huge - 1));
  EXPECT_EQ(key_blocks(causal_big, 0, 64, 64).end, ceil_div(huge, 64));
}

}  // namespace
}  // namespace fa2::core
