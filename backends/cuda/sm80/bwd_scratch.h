// The fp32 scratch the backward keeps in the caller's workspace:
//  - delta: D = rowsum(dO * O), one float per core::row_stat_index (what the
//    sm80 kernels read);
//  - dq_accum: the dQ accumulator, rows of head_dim floats by
//    core::row_stat_index, or, where dq_pair_cols is set, in row pairs
//    (dq_pair_offset);
//  - block_stats: what the Hopper kernels read instead of delta and lse, per
//    (batch, query head) and block of kStatBlockRows queries: the block's
//    lse in log2 units, then its D; zero past the sequence. A block's pair
//    is contiguous: one float per thread of a warpgroup, no bounds to
//    check. Null when the sm80 kernels run;
//  - sequence_maps: room for the Hopper kernels' per-sequence tensor maps
//    of a varlen call (sm90/tensor_map.h); null otherwise;
//  - kv_done: per (batch, kv head), the keys whose CTAs of the Hopper
//    kernel have added all their dQ (kv_done_index; zeroed by the delta
//    kernel): the conversion of a query head's dQ starts once its kv head's
//    count reaches the sequence's keys, while the main kernel's last CTAs
//    still run. Null where the main kernel does not count (the sm80
//    kernels; sm90_bwd_counts_keys): the conversion then waits for the
//    main grid's end.
#pragma once

#include <cstdint>

#include "core/mask.h"
#include "core/params.h"

namespace fa2::cuda {

struct BwdScratch {
  float *delta;
  float *dq_accum;
  float *block_stats;
  void *sequence_maps;
  int dq_pair_cols;  // 0, or the paired layout's columns a row: the kernel's head dim
  unsigned *kv_done;
};

FA2_INLINE int64_t kv_done_index(const core::AttnParams &p, int batch, int head_kv) {
  return int64_t(batch) * p.heads_kv + head_kv;
}

// The paired dQ accumulator layout: rows 2 r and 2 r + 1 (row_stat_index)
// side by side in pieces of 16 columns (64 bytes each, 128 a pair), and
// inside a piece the columns in the order an mma C fragment holds them:
// lane in_quad's 2 in_quad, + 1 of column tile 2 t and of tile 2 t + 1 are
// 4 adjacent floats. So each lane adds its own 16 bytes, and the 8 rows of
// a warp's C fragment (group 0-7) fill four whole 128-byte lines, without
// the shuffles that gather 16 adjacent columns of one row (RowPieces).
// pair_cols: the kernel's head dim (its bucket; a multiple of 16), so that
// the backward's row offsets are constants also where head_dim is padded
// (a runtime row width made the d256 kernel spill 52 bytes). The buffer
// holds one row more than the layout's rows (an even row's pair); columns
// past head_dim are padding.
FA2_INLINE int64_t dq_pair_offset(int64_t row, int col, int pair_cols) {
  const int piece = col % 16;
  return (row & ~int64_t(1)) * pair_cols + (row & 1) * 16 + col / 16 * 32 +
         4 * (piece % 8 / 2) + 2 * (piece / 8) + piece % 2;
}

inline constexpr int kStatBlockRows = 64;
// A head's blocks are padded to a multiple of kStatHeadRows rows, so that a
// 128-query block of the Hopper backward reads whole pairs of its own head.
inline constexpr int kStatHeadRows = 128;

// Blocks of kStatBlockRows per (batch, head), padding included.
FA2_INLINE int64_t block_stat_head_blocks(const core::AttnParams &p) {
  return int64_t(core::ceil_div(p.seqlen_q, kStatHeadRows)) * (kStatHeadRows / kStatBlockRows);
}

// Index of the lse of (batch, head, row); its D is kStatBlockRows further.
FA2_INLINE int64_t block_stat_index(const core::AttnParams &p, int batch, int head, int row) {
  const int64_t block =
      (int64_t(batch) * p.heads_q + head) * block_stat_head_blocks(p) + row / kStatBlockRows;
  return block * 2 * kStatBlockRows + row % kStatBlockRows;
}

}  // namespace fa2::cuda
