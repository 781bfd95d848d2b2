// The fp32 scratch the backward keeps in the caller's workspace:
//  - delta: D = rowsum(dO * O), one float per core::row_stat_index (what the
//    sm80 kernels read);
//  - dq_accum: the dQ accumulator, rows of head_dim floats by
//    core::row_stat_index;
//  - block_stats: what the Hopper kernels read instead of delta and lse, per
//    (batch, query head) and block of kStatBlockRows queries: the block's
//    lse in log2 units, then its D; zero past the sequence. A block's pair
//    is contiguous: one float per thread of a warpgroup, no bounds to
//    check. Null when the sm80 kernels run;
//  - sequence_maps: room for the Hopper kernels' per-sequence tensor maps
//    of a varlen call (sm90/tensor_map.h); null otherwise.
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
};

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
