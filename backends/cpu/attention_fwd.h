// FlashAttention-2 forward on the CPU: one work item per (batch, head_q,
// query block); the item keeps its Q tile, an unscaled fp32 output
// accumulator and the online-softmax row state, walks only the key blocks
// its rows can see, and writes out and lse once at the end.
#pragma once

#include "core/online_softmax.h"
#include "core/work.h"
#include "element.h"
#include "gemm.h"
#include "kernels.h"
#include "score_tile.h"
#include "tile_io.h"

namespace fa2::cpu {

template <class Isa, class Elem>
void fwd_tile(const core::AttnParams &p, const core::FwdItem &item, int dim, float *scratch) {
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int m0 = item.m_block * kBlockM;
  if (m0 >= seq.seqlen_q) return;  // varlen: this sequence is shorter than the longest
  float *q = scratch;
  float *k = q + kBlockM * dim;
  float *k_t = k + kBlockN * dim;
  float *v = k_t + dim * kBlockN;
  float *o = v + kBlockN * dim;
  float *s = o + kBlockM * dim;

  const RowSpan q_rows{item.batch, seq.q_row0, item.head_q, m0,
                       core::min_i(kBlockM, seq.seqlen_q - m0)};
  const int m_rows = round_up(q_rows.count, Isa::kRows);  // rows the GEMMs compute
  load_tile<Elem>(p.q, q_rows, p.head_dim, dim, m_rows, q);
  for (int i = 0; i < m_rows * dim; ++i) o[i] = 0.f;
  core::RowState row_state[kBlockM];

  const core::Mask mask = core::mask_of(p, seq);
  const core::BlockRange key_range = core::key_blocks(mask, item.m_block, kBlockM, kBlockN);
  const int head_kv = core::kv_head_of(p, item.head_q);
  for (int n_block = key_range.begin; n_block < key_range.end; ++n_block) {
    const int n0 = n_block * kBlockN;
    const RowSpan kv_rows{item.batch, seq.k_row0, head_kv, n0,
                          core::min_i(kBlockN, seq.seqlen_k - n0)};
    load_tile<Elem>(p.k, kv_rows, p.head_dim, dim, kBlockN, k);
    transpose_tile(k, kBlockN, dim, k_t);
    load_tile<Elem>(p.v, kv_rows, p.head_dim, dim, kBlockN, v);

    gemm<Isa>({q, dim, 1}, k_t, kBlockN, s, kBlockN, m_rows, kBlockN, dim, false);
    if (core::tile_needs_mask(mask, item.m_block, n_block, kBlockM, kBlockN))
      mask_scores<kBlockN>(mask, m0, n0, m_rows, s);
    for (int i = 0; i < m_rows; ++i) {
      float(&row)[kBlockN] = *reinterpret_cast<float(*)[kBlockN]>(s + i * kBlockN);
      const float correction = core::online_softmax_step(
          row, row_state[i], p.scale_log2, core::ThreadRowReduce{}, VecExp2<Isa>{});
      if (correction != 1.f)
        for (int c = 0; c < dim; ++c) o[i * dim + c] *= correction;
    }
    gemm<Isa>({s, kBlockN, 1}, v, dim, o, dim, m_rows, dim, kBlockN, true);
  }

  for (int i = 0; i < q_rows.count; ++i) {
    const core::RowResult result =
        core::online_softmax_finish(row_state[i], p.scale, core::ThreadRowReduce{});
    p.lse[core::row_stat_index(p, item.batch, item.head_q, m0 + i)] = result.lse;
    Elem::store_row(o + i * dim, result.out_scale, row_ptr<Elem>(p.out, q_rows, i), p.head_dim);
  }
}

template <class Isa, core::Dtype D>
void attention_fwd(const core::AttnParams &p, const KernelContext &ctx) {
  const int dim = cpu_tile_plan(p.head_dim).head_dim;
  ctx.pool->parallel_for(core::fwd_items(p, kBlockM), [&](int64_t index, int worker) {
    fwd_tile<Isa, Element<Isa, D>>(p, core::fwd_item(p, kBlockM, index), dim,
                                   ctx.scratch[worker]);
  });
}

}  // namespace fa2::cpu
