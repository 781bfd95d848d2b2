// FlashAttention-2 forward on MFMA, one template for every dtype and head
// dim bucket. A workgroup owns kWaves * 32 query rows of one (batch, head)
// (split-Q: each wavefront its own 32 rows) and walks the key blocks that
// core::key_blocks() leaves, K and V staged in LDS.
//
// The score tile is computed transposed, S^T = K * Q^T, so that a lane
// owns one query (an accumulator column) and the keys run down its
// registers: the online softmax reduces within the lane and across the
// kLaneGroups lanes of the column, the rescale of O is one factor per
// lane, and P^T is already the B operand of O^T = V^T * P^T.
#pragma once

#include <hip/hip_runtime.h>

#include <cmath>

#include "core/mask.h"
#include "core/online_softmax.h"
#include "core/work.h"
#include "lds_tile.h"
#include "mfma_ops.h"

namespace fa2::hip {

template <class Elem, int kHeadDim, int kWaves>
__global__ void __launch_bounds__(kWaves *Mfma32x32x8::kWaveSize)
    fwd_kernel(const core::AttnParams p) {
  using L = Mfma32x32x8;
  using Acc = typename AccOf<L>::type;
  constexpr int kRowsPerWave = L::kN;  // queries: accumulator columns
  constexpr int kBlockM = kWaves * kRowsPerWave;
  constexpr int kBlockN = L::kM;  // keys: accumulator rows
  constexpr int kDimSteps = kHeadDim / L::kK;
  constexpr int kDimTiles = kHeadDim / L::kM;
  constexpr int kE = L::kOperandElems;

  __shared__ __attribute__((aligned(16))) uint16_t k_smem[LdsTile<kBlockN, kHeadDim>::kElems];
  __shared__ __attribute__((aligned(16))) uint16_t v_smem[LdsTile<kBlockN, kHeadDim>::kElems];
  const LdsTile<kBlockN, kHeadDim> k_tile{k_smem}, v_tile{v_smem};

  const core::FwdItem item = core::fwd_item(p, kBlockM, blockIdx.x);
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  if (item.m_block * kBlockM >= seq.seqlen_q) return;  // uniform over the block
  const core::Mask mask = core::mask_of(p, seq);
  const int lane = threadIdx.x % L::kWaveSize;
  const int wave_m_block = item.m_block * kWaves + int(threadIdx.x / L::kWaveSize);
  const int query = wave_m_block * kRowsPerWave + L::b_col(lane);
  const int head_kv = core::kv_head_of(p, item.head_q);

  // Q^T as B operands, kept in registers for the whole key loop.
  Bits4 q_frag[kDimSteps];
  {
    const auto *q = static_cast<const uint16_t *>(p.q.data);
    const bool row_inside = query < seq.seqlen_q;
    const int64_t row =
        row_inside ? core::row_offset(p.q, item.batch, seq.q_row0, query, item.head_q) : 0;
    FA2_UNROLL
    for (int s = 0; s < kDimSteps; ++s) {
      const int d = s * L::kK + L::b_k(lane, 0);
      q_frag[s] = load4(q + row + d, row_inside && d < p.head_dim);
    }
  }

  Acc o[kDimTiles];
  FA2_UNROLL
  for (int t = 0; t < kDimTiles; ++t) o[t] = Acc{};
  core::RowState row;
  const ColumnReduce<L> reduce;

  const core::BlockRange blocks = core::key_blocks(mask, item.m_block, kBlockM, kBlockN);
  const core::BlockRange mine = core::key_blocks(mask, wave_m_block, kRowsPerWave, kBlockN);
  for (int n_block = blocks.begin; n_block < blocks.end; ++n_block) {
    __syncthreads();  // the previous tile is consumed
    k_tile.load(p.k, item.batch, seq.k_row0, n_block * kBlockN, seq.seqlen_k, head_kv, p.head_dim);
    v_tile.load(p.v, item.batch, seq.k_row0, n_block * kBlockN, seq.seqlen_k, head_kv, p.head_dim);
    __syncthreads();
    if (n_block < mine.begin || n_block >= mine.end) continue;  // outside this wave's band

    Acc s_acc = Acc{};
    FA2_UNROLL
    for (int s = 0; s < kDimSteps; ++s)
      s_acc = Elem::mfma(L{}, k_tile.chunk(L::a_row(lane), s * L::kK + L::a_k(lane, 0)), q_frag[s],
                         s_acc);

    float scores[L::kAccRegs];
    const bool needs_mask =
        core::tile_needs_mask(mask, wave_m_block, n_block, kRowsPerWave, kBlockN);
    FA2_UNROLL
    for (int r = 0; r < L::kAccRegs; ++r) {
      const int key = n_block * kBlockN + L::c_row(lane, r);
      scores[r] = !needs_mask || mask.visible(query, key) ? s_acc[r] : -INFINITY;
    }
    const float correction = core::online_softmax_step(scores, row, p.scale_log2, reduce);
    FA2_UNROLL
    for (int t = 0; t < kDimTiles; ++t) o[t] *= correction;

    // O^T += V^T * P^T, one k-step per kE registers of P^T.
    FA2_UNROLL
    for (int s = 0; s < L::kKStepsPerAcc; ++s) {
      Bits4 p_frag;
      FA2_UNROLL
      for (int e = 0; e < kE; ++e) p_frag[e] = Elem::from_float(scores[s * kE + e]);
      FA2_UNROLL
      for (int t = 0; t < kDimTiles; ++t)
        o[t] =
            Elem::mfma(L{}, v_tile.column4(s * L::kK + L::a_k(lane, 0), t * L::kM + L::a_row(lane)),
                       p_frag, o[t]);
    }
  }

  const core::RowResult result = core::online_softmax_finish(row, p.scale, reduce);
  if (query >= seq.seqlen_q) return;
  auto *out = static_cast<uint16_t *>(p.out.data) +
              core::row_offset(p.out, item.batch, seq.q_row0, query, item.head_q);
  FA2_UNROLL
  for (int t = 0; t < kDimTiles; ++t) {
    FA2_UNROLL
    for (int g = 0; g < L::kAccRegs; g += kE) {
      const int d = t * L::kM + L::c_row(lane, g);  // kE consecutive dims
      if (d >= p.head_dim) continue;
      Bits4 chunk;
      FA2_UNROLL
      for (int e = 0; e < kE; ++e) chunk[e] = Elem::from_float(o[t][g + e] * result.out_scale);
      *reinterpret_cast<Bits4 *>(out + d) = chunk;
    }
  }
  if (L::c_row(lane, 0) == 0)  // one lane of each column writes the lse
    p.lse[core::row_stat_index(p, item.batch, item.head_q, query)] = result.lse;
}

}  // namespace fa2::hip
