// Which keys a query sees, and which tiles the loops visit.
//
// One rule covers causal, sliding windows and the bottom-right alignment of
// FlashAttention-2: key j is visible to query i iff
//     i + diag - left <= j <= i + diag + right,   diag = seqlen_k - seqlen_q,
// and 0 <= j < seqlen_k. Causal is right = 0. Unlimited sides hold
// kUnlimited, so every function here is branch-free arithmetic.
#pragma once

#include "core/portability.h"

namespace fa2::core {

FA2_INLINE int min_i(int a, int b) { return a < b ? a : b; }
FA2_INLINE int max_i(int a, int b) { return a > b ? a : b; }
FA2_INLINE int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Half-open range of indices: of rows or columns (IndexRange), of tiles
// (BlockRange).
struct IndexRange {
  int begin;
  int end;
  FA2_INLINE bool empty() const { return end <= begin; }
  // One unsigned compare: below begin, i - begin wraps past the width.
  FA2_INLINE bool contains(int i) const {
    return static_cast<unsigned>(i - begin) < static_cast<unsigned>(end - begin);
  }
};
using BlockRange = IndexRange;

struct Mask {
  int seqlen_q;
  int seqlen_k;
  int left;   // window_left, kUnlimited when none
  int right;  // window_right, 0 when causal, kUnlimited when none

  FA2_INLINE int diag() const { return seqlen_k - seqlen_q; }

  FA2_INLINE bool visible(int i, int j) const {
    return j < seqlen_k && j >= i + diag() - left && j <= i + diag() + right;
  }
  // First and one-past-last visible key of query row i (may be empty).
  FA2_INLINE int key_begin(int i) const { return max_i(0, i + diag() - left); }
  FA2_INLINE int key_end(int i) const { return min_i(seqlen_k, i + diag() + right + 1); }
  // First and one-past-last query row that sees key j.
  FA2_INLINE int query_begin(int j) const { return max_i(0, j - diag() - right); }
  FA2_INLINE int query_end(int j) const { return min_i(seqlen_q, j - diag() + left + 1); }
  // The keys query i sees, and the queries that see key j (none past the
  // sequences), as ranges: what a tile tests each element against, with
  // one compare, instead of visible()'s three.
  FA2_INLINE IndexRange keys_seen_by(int i) const {
    const int begin = key_begin(i);
    return {begin, max_i(begin, key_end(i))};
  }
  FA2_INLINE IndexRange queries_seeing(int j) const {
    const int begin = query_begin(j);
    return {begin, j < seqlen_k ? max_i(begin, query_end(j)) : begin};
  }
};

// The smallest range holding both (what two key blocks walked together visit).
FA2_INLINE BlockRange span_of(const BlockRange &a, const BlockRange &b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {min_i(a.begin, b.begin), max_i(a.end, b.end)};
}

// Forward / dQ loop: key blocks of size block_n that query rows
// [rows.begin, rows.end) inside the sequence must visit, and those of query
// block m_block (rows [m_block*block_m, ...)). Blocks wholly invisible to
// every row are skipped: this is where causal and window work disappears.
FA2_INLINE BlockRange key_blocks_of_rows(const Mask &mask, const IndexRange &rows, int block_n) {
  if (rows.empty()) return {0, 0};
  const int first = mask.key_begin(rows.begin);
  const int end = mask.key_end(rows.end - 1);
  if (end <= first) return {0, 0};
  return {first / block_n, ceil_div(end, block_n)};
}
FA2_INLINE BlockRange key_blocks(const Mask &mask, int m_block, int block_m, int block_n) {
  const int row_first = m_block * block_m;
  return key_blocks_of_rows(mask, {row_first, min_i(row_first + block_m, mask.seqlen_q)}, block_n);
}

// Backward loop: query blocks that key block n_block must visit.
FA2_INLINE BlockRange query_blocks(const Mask &mask, int n_block, int block_n, int block_m) {
  const int col_first = n_block * block_n;
  const int col_last = min_i(col_first + block_n, mask.seqlen_k) - 1;
  if (col_last < col_first) return {0, 0};
  const int first = mask.query_begin(col_first);
  const int end = mask.query_end(col_last);
  if (end <= first) return {0, 0};
  return {first / block_m, ceil_div(end, block_m)};
}

// True when rows up to row_last see no key at or past col (key_end grows
// with the row): a kernel may then leave a block's columns from col on out
// of its work, e.g. the upper half of the causal diagonal block for the
// lower rows of a query block.
FA2_INLINE bool keys_end_by(const Mask &mask, int row_last, int col) {
  return mask.key_end(row_last) <= col;
}

// True when some element of rows [row_first, row_last] x keys [col_first,
// col_last] is invisible or lies past seqlen_k.
FA2_INLINE bool span_needs_mask(const Mask &mask, int row_first, int row_last, int col_first,
                                int col_last) {
  if (col_last >= mask.seqlen_k) return true;
  // Every element visible iff the span's corners satisfy both diagonal bounds.
  return col_last > row_first + mask.diag() + mask.right ||
         col_first < row_last + mask.diag() - mask.left;
}

// True when some element of tile (m_block, n_block) that lies inside the
// sequences is invisible, or the tile runs past seqlen_k / seqlen_q: only
// such tiles pay for per-element masking.
FA2_INLINE bool tile_needs_mask(const Mask &mask, int m_block, int n_block, int block_m,
                                int block_n) {
  const int row_first = m_block * block_m;
  const int col_first = n_block * block_n;
  return row_first + block_m - 1 >= mask.seqlen_q ||
         span_needs_mask(mask, row_first, row_first + block_m - 1, col_first,
                         col_first + block_n - 1);
}

}  // namespace fa2::core
