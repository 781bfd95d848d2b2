// Work decomposition and addressing, shared by every backend.
//
// Forward:  one work item per (batch, head_q, query block); it walks its
//           key blocks (key_blocks() in mask.h) with the online softmax.
// Backward: one work item per (batch, head_kv, key block); it walks every
//           query head of its group and every query block that sees its
//           keys (query_blocks()), accumulating dK and dV privately, so the
//           GQA/MQA sum over the group needs no atomics; dQ contributions
//           from different key blocks meet in an fp32 accumulator (atomics
//           on a GPU, a race-free reduction on the CPU).
// Preprocessing for the backward: D_i = rowsum(dO_i * O_i).
#pragma once

#include <cstdint>

#include "core/mask.h"
#include "core/params.h"
#include "core/portability.h"

namespace fa2::core {

// Where one batch entry's rows live. For varlen the offsets come from
// cu_seqlens; otherwise from stride_batch.
struct SeqInfo {
  int64_t q_row0;  // first row of this sequence in the packed layout (varlen) or 0
  int64_t k_row0;
  int seqlen_q;
  int seqlen_k;
};

FA2_INLINE SeqInfo seq_info(const AttnParams &p, int b) {
  if (p.cu_seqlens_q != nullptr) {
    const int q0 = p.cu_seqlens_q[b], k0 = p.cu_seqlens_k[b];
    return {q0, k0, p.cu_seqlens_q[b + 1] - q0, p.cu_seqlens_k[b + 1] - k0};
  }
  return {0, 0, p.seqlen_q, p.seqlen_k};
}

FA2_INLINE Mask mask_of(const AttnParams &p, const SeqInfo &s) {
  return {s.seqlen_q, s.seqlen_k, p.window_left, p.window_right};
}

// Element offset of row `row` (within its sequence), head `head`, dim 0.
FA2_INLINE int64_t row_offset(const TensorRef &t, int b, int64_t seq_row0, int row, int head) {
  return int64_t(b) * t.stride_batch + (seq_row0 + row) * t.stride_seq +
         int64_t(head) * t.stride_head;
}

// Index into lse / D / other [batch, heads_q, seqlen_q] float arrays.
FA2_INLINE int64_t row_stat_index(const AttnParams &p, int b, int head_q, int row) {
  return (int64_t(b) * p.heads_q + head_q) * p.seqlen_q + row;
}

// Its inverse, for kernels that walk those arrays row by row.
struct StatRow {
  int batch, head_q, row;
};
FA2_INLINE StatRow stat_row(const AttnParams &p, int64_t index) {
  const int row = int(index % p.seqlen_q);
  const int head_q = int((index / p.seqlen_q) % p.heads_q);
  const int batch = int(index / (int64_t(p.seqlen_q) * p.heads_q));
  return {batch, head_q, row};
}

FA2_INLINE int kv_head_of(const AttnParams &p, int head_q) { return head_q / p.group_size; }

// Linear work index <-> tuple. The backward's block index varies fastest
// (but see bwd_item's cache_bytes): neighbouring items (the CTAs that run
// at the same time) share one head's Q/dO in cache. The forward has two orders:
//  - head_blocks_together: one head's query blocks are consecutive (last
//    first), so the CTAs running together share its K/V in the L2 (with
//    the block slowest, each head's K/V came from DRAM once per query
//    block: 15-23% slower at 512-2k tokens on the H200);
//  - longest_rows_first: the block index varies slowest, last block first,
//    so with a causal mask the heaviest items of every head are scheduled
//    first (balance matters more than the L2 when items differ a lot).
// A backend may pick per call (fwd_order); default_fwd_order is the rule
// for those that launch one CTA (or task) per item and have not measured
// another.
enum class FwdOrder { head_blocks_together, longest_rows_first };

struct FwdItem {
  int batch, head_q, m_block;
};
struct BwdItem {
  int batch, head_kv, n_block;
};

// Where a forward item's Q rows (from row0 of its sequence; unfolded
// calls: folded rows are addressed one by one, query_row_offset) and its key
// head's K and V start, as elements of type T; the decoding kernel takes K
// and V only.
template <class T>
struct FwdOperands {
  const T *q, *k, *v;
};
template <class T>
FA2_INLINE FwdOperands<T> fwd_operands(const AttnParams &p, const FwdItem &item,
                                       const SeqInfo &seq, int row0) {
  const int head_kv = kv_head_of(p, item.head_q);
  return {static_cast<const T *>(p.q.data) +
              row_offset(p.q, item.batch, seq.q_row0, row0, item.head_q),
          static_cast<const T *>(p.k.data) + row_offset(p.k, item.batch, seq.k_row0, 0, head_kv),
          static_cast<const T *>(p.v.data) + row_offset(p.v, item.batch, seq.k_row0, 0, head_kv)};
}

FA2_INLINE int64_t fwd_items(const AttnParams &p, int block_m) {
  return int64_t(p.batch) * p.heads_q * ceil_div(p.seqlen_q, block_m);
}
// Under a mask, longest rows first once a head has more than
// `rows_first_above` query blocks; one head's blocks together otherwise.
FA2_INLINE FwdOrder fwd_order(bool has_mask, int m_blocks, int rows_first_above) {
  return has_mask && m_blocks > rows_first_above ? FwdOrder::longest_rows_first
                                                 : FwdOrder::head_blocks_together;
}
FA2_INLINE FwdOrder default_fwd_order(const AttnParams &p) {
  return p.has_mask ? FwdOrder::longest_rows_first : FwdOrder::head_blocks_together;
}
// Index: int64_t, or int where a kernel keeps its tile indices in 32 bits
// (64-bit divisions cost a GPU thread many registers).
template <class Index>
FA2_INLINE FwdItem fwd_item(const AttnParams &p, int block_m, Index index, FwdOrder order) {
  const int m_blocks = ceil_div(p.seqlen_q, block_m);
  const Index heads = Index(p.batch) * p.heads_q;
  const bool rows_first = order == FwdOrder::longest_rows_first;
  const Index bh = rows_first ? index % heads : index / m_blocks;
  const int from_last = int(rows_first ? index / heads : index % m_blocks);
  return {int(bh / p.heads_q), int(bh % p.heads_q), m_blocks - 1 - from_last};
}
FA2_INLINE FwdItem fwd_item(const AttnParams &p, int block_m, int64_t index) {
  return fwd_item(p, block_m, index, default_fwd_order(p));
}

// Decoding. A few query rows a sequence (one, or a handful of drafted
// tokens) against a long KV cache leave the forward batch x heads items,
// too few to fill a GPU, and with grouped heads it reads each K / V block
// once per query head. Two remedies:
//
// fold_query_groups: the query heads of a group read the same K / V, so
// they become the rows of one item: heads_q = heads_kv and seqlen_q =
// group_size x seqlen_q, row r of head h being query head h x group + r /
// seqlen_q at position r % seqlen_q (query_row). q and out keep their
// strides, so their rows are addressed through query_row_offset; lse's
// [batch, heads_q, seqlen_q] layout already is [batch, heads_kv, group x
// seqlen_q] in that order. The mask applies to positions (query_mask_of,
// query_positions). Forward only (the backward's dK / dV sum over the group
// as before); not for varlen calls.
FA2_INLINE bool can_fold_query_groups(const AttnParams &p) {
  return p.cu_seqlens_q == nullptr && p.group_size > 1 && p.fold.heads == 1;
}
FA2_INLINE AttnParams fold_query_groups(AttnParams p) {
  p.fold = {p.group_size, p.seqlen_q};
  p.seqlen_q *= p.group_size;
  p.heads_q = p.heads_kv;
  p.group_size = 1;
  return p;
}
// Row `row` of head `head_q` as the unfolded call's query head and position.
struct QueryRow {
  int head_q, position;
};
FA2_INLINE QueryRow query_row(const AttnParams &p, int row, int head_q) {
  if (p.fold.heads == 1) return {head_q, row};
  return {head_q * p.fold.heads + row / p.fold.positions, row % p.fold.positions};
}
// Element offset of that row in q or out (or any [batch, seq, heads_q, d]
// operand), folded or not; row_offset's arguments.
FA2_INLINE int64_t query_row_offset(const AttnParams &p, const TensorRef &t, int b,
                                    int64_t seq_row0, int row, int head_q) {
  const QueryRow at = query_row(p, row, head_q);
  return row_offset(t, b, seq_row0, at.position, at.head_q);
}
// The mask over the positions of a call's query rows, and the positions
// rows [first, last] of a head hold: rows that run from one query head into
// the next hold the ends of both, and the range covers every position.
FA2_INLINE Mask query_mask_of(const AttnParams &p, const SeqInfo &s) {
  Mask mask = mask_of(p, s);
  if (p.fold.heads > 1) mask.seqlen_q = p.fold.positions;
  return mask;
}
FA2_INLINE IndexRange query_positions(const AttnParams &p, int first, int last) {
  if (p.fold.heads == 1) return {first, last + 1};
  const int n = p.fold.positions;
  if (first / n != last / n) return {0, n};
  return {first % n, last % n + 1};
}

// Split-KV (AttnParams::kv_splits): part `split` of an item's key blocks,
// parts of ceil(n / splits) blocks, the last ones shorter or empty (an
// item's range under a mask or in a varlen batch can be shorter than the
// longest, which set the count).
FA2_INLINE BlockRange split_range(const BlockRange &blocks, int split, int splits) {
  const int per = ceil_div(max_i(blocks.end - blocks.begin, 0), splits);
  const int begin = min_i(blocks.begin + split * per, blocks.end);
  return {begin, min_i(begin + per, blocks.end)};
}
// How many parts to split the key blocks of `items` forward items into, on a
// device that runs `slots` of them at once. None where the items fill 80%
// of the slots (what is left is the last round's tail, which the device's
// own scheduling mostly hides); else the fewest (up to max_splits) that
// minimise rounds x (blocks a part + part_cost), part_cost being what a part
// costs beyond its blocks, in blocks (its prologue, its partial output, its
// share of the combine). Counts that would leave a part of the longest item
// empty are not tried: fewer parts do the same.
FA2_INLINE int kv_splits(int64_t items, int key_blocks, int64_t slots, int max_splits,
                         int part_cost) {
  if (items <= 0 || slots <= 0 || items * 5 >= slots * 4) return 1;
  int best = 1;
  int64_t best_time = -1;
  for (int splits = 1; splits <= max_splits && splits <= key_blocks; ++splits) {
    const int per = ceil_div(key_blocks, splits);
    if (ceil_div(key_blocks, per) != splits) continue;
    const int64_t rounds = (items * splits + slots - 1) / slots;
    const int64_t time = rounds * (per + part_cost);
    if (best_time < 0 || time < best_time) best = splits, best_time = time;
  }
  return best;
}

FA2_INLINE int64_t bwd_items(const AttnParams &p, int block_n) {
  return int64_t(p.batch) * p.heads_kv * ceil_div(p.seqlen_k, block_n);
}
// With a mask the key blocks of a head do unequal work (causal: block n
// sees the queries from its diagonal on), and in the order above each
// head's heaviest block can start late and finish alone. So with
// `cache_bytes` > 0 masked calls walk groups of heads whose Q and dO fit in
// that many bytes of cache, and inside a group the key block varies
// slowest: every head's heaviest blocks first, the same L2 reuse as long as
// the group fits (a list-schedule model of 132 SMs: 6-7% at 512-4k tokens
// causal before, under 2% after). 0 keeps the order above.
FA2_INLINE int64_t bwd_heads_together(const AttnParams &p, int64_t cache_bytes) {
  if (!p.has_mask || cache_bytes <= 0) return 1;
  const int64_t elem_bytes = p.dtype == Dtype::f32 ? 4 : 2;
  const int64_t head_bytes = 2 * int64_t(p.group_size) * p.seqlen_q * p.head_dim * elem_bytes;
  const int64_t heads = int64_t(p.batch) * p.heads_kv;
  int64_t together = cache_bytes / (head_bytes > 0 ? head_bytes : 1);
  if (together > heads) together = heads;
  return together < 1 ? 1 : together;
}
FA2_INLINE BwdItem bwd_item(const AttnParams &p, int block_n, int64_t index,
                            int64_t cache_bytes = 0) {
  const int n_blocks = ceil_div(p.seqlen_k, block_n);
  const int64_t together = bwd_heads_together(p, cache_bytes);
  if (together == 1) {  // the plain order, without the divisions below (GPU kernels pay them
                        // in every CTA's prologue: 3% at d64 on the H200)
    const int64_t bh = index / n_blocks;
    return {int(bh / p.heads_kv), int(bh % p.heads_kv), int(index % n_blocks)};
  }
  const int64_t heads = int64_t(p.batch) * p.heads_kv;
  const int64_t first = index / (n_blocks * together) * together;  // the group's first head
  const int64_t in_group = heads - first < together ? heads - first : together;
  const int64_t local = index - first * n_blocks;
  const int64_t bh = first + local % in_group;
  return {int(bh / p.heads_kv), int(bh % p.heads_kv), int(local / in_group)};
}

}  // namespace fa2::core
