// FlashAttention-2 backward on the CPU, in three parallel passes:
//  1. per (batch, head_q, query block): D = rowsum(dO * O), and the rows'
//     fp32 dQ accumulator zeroed;
//  2. per (batch, head_kv, key block): dK and dV of the block accumulated
//     privately over every query head of the GQA group and every query
//     block that sees the keys (query_blocks()); P is recomputed from lse;
//  3. per (batch, head_q, query block): the dQ accumulator to dq's dtype.
//
// dQ reduction: the items of pass 2 that share a query block add their
// dS * K tile into the accumulator under one of a fixed set of mutex
// stripes (chosen by the query block). The tile is computed outside the
// lock, so the critical section is only head_dim * block_m additions.
// The order of the additions, and thus dQ's last bits, may vary between
// runs; dK and dV are deterministic.
#pragma once

#include <cmath>
#include <mutex>

#include "core/online_softmax.h"
#include "core/work.h"
#include "element.h"
#include "gemm.h"
#include "kernels.h"
#include "score_tile.h"
#include "tile_io.h"

namespace fa2::cpu {

template <class Elem>
void bwd_prepare(const core::AttnParams &p, const core::FwdItem &item, int dim,
                 const BwdWorkspace &ws, float *scratch) {
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int m0 = item.m_block * kBlockM;
  if (m0 >= seq.seqlen_q) return;
  const RowSpan rows{item.batch, seq.q_row0, item.head_q, m0,
                     core::min_i(kBlockM, seq.seqlen_q - m0)};
  float *dout = scratch;
  float *out = dout + kBlockM * dim;
  load_tile<Elem>(p.dout, rows, p.head_dim, dim, rows.count, dout);
  load_tile<Elem>(p.out, rows, p.head_dim, dim, rows.count, out);
  for (int i = 0; i < rows.count; ++i) {
    const int64_t stat = core::row_stat_index(p, item.batch, item.head_q, m0 + i);
    float dot = 0.f;
    for (int c = 0; c < p.head_dim; ++c) dot += dout[i * dim + c] * out[i * dim + c];
    ws.row_dot[stat] = dot;
    float *accum = ws.dq_accum + stat * p.head_dim;
    for (int c = 0; c < p.head_dim; ++c) accum[c] = 0.f;
  }
}

template <class Isa, class Elem>
void bwd_tile(const core::AttnParams &p, const core::BwdItem &item, int dim,
              const BwdWorkspace &ws, const KernelContext &ctx, float *scratch) {
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int n0 = item.n_block * kBlockN;
  if (n0 >= seq.seqlen_k) return;
  float *q = scratch;
  float *dout = q + kBlockM * dim;
  float *k = dout + kBlockM * dim;
  float *k_t = k + kBlockN * dim;
  float *v_t = k_t + dim * kBlockN;
  float *dk = v_t + dim * kBlockN;
  float *dv = dk + kBlockN * dim;
  float *dq = dv + kBlockN * dim;
  float *probs = dq + kBlockM * dim;    // P, [block_m][block_n]
  float *dscores = probs + kBlockM * kBlockN;  // dP, then dS in place
  float *lse2 = dscores + kBlockM * kBlockN;    // lse in log2 units per row
  float *row_dot = lse2 + kBlockM;             // D per row

  const RowSpan kv_rows{item.batch, seq.k_row0, item.head_kv, n0,
                        core::min_i(kBlockN, seq.seqlen_k - n0)};
  const int n_rows = round_up(kv_rows.count, Isa::kRows);
  load_tile<Elem>(p.v, kv_rows, p.head_dim, dim, kBlockN, k);
  transpose_tile(k, kBlockN, dim, v_t);
  load_tile<Elem>(p.k, kv_rows, p.head_dim, dim, kBlockN, k);
  transpose_tile(k, kBlockN, dim, k_t);
  for (int i = 0; i < kBlockN * dim; ++i) dk[i] = dv[i] = 0.f;

  const core::Mask mask = core::mask_of(p, seq);
  const core::BlockRange query_range = core::query_blocks(mask, item.n_block, kBlockN, kBlockM);
  const int head_q_end = (item.head_kv + 1) * p.group_size;
  for (int head_q = item.head_kv * p.group_size; head_q < head_q_end; ++head_q) {
    for (int m_block = query_range.begin; m_block < query_range.end; ++m_block) {
      const int m0 = m_block * kBlockM;
      const RowSpan q_rows{item.batch, seq.q_row0, head_q, m0,
                           core::min_i(kBlockM, seq.seqlen_q - m0)};
      const int m_rows = round_up(q_rows.count, Isa::kRows);
      load_tile<Elem>(p.q, q_rows, p.head_dim, dim, m_rows, q);
      load_tile<Elem>(p.dout, q_rows, p.head_dim, dim, m_rows, dout);
      const int64_t stat0 = core::row_stat_index(p, item.batch, head_q, m0);
      for (int i = 0; i < m_rows; ++i) {
        const bool inside = i < q_rows.count;  // padded rows get p = 0
        lse2[i] = inside ? core::lse_log2(p.lse[stat0 + i]) : INFINITY;
        row_dot[i] = inside ? ws.row_dot[stat0 + i] : 0.f;
      }

      // P = exp(scale * Q K^T - lse)
      gemm<Isa>({q, dim, 1}, k_t, kBlockN, probs, kBlockN, m_rows, kBlockN, dim, false);
      if (core::tile_needs_mask(mask, m_block, item.n_block, kBlockM, kBlockN))
        mask_scores<kBlockN>(mask, m0, n0, m_rows, probs);
      const VecExp2<Isa> exp2;
      for (int i = 0; i < m_rows; ++i)
        for (int j = 0; j < kBlockN; ++j)
          probs[i * kBlockN + j] =
              core::prob_from_lse(probs[i * kBlockN + j], p.scale_log2, lse2[i], exp2);

      // dV += P^T dO
      gemm<Isa>({probs, 1, kBlockN}, dout, dim, dv, dim, n_rows, dim, m_rows, true);
      // dS = scale * P * (dO V^T - D)
      gemm<Isa>({dout, dim, 1}, v_t, kBlockN, dscores, kBlockN, m_rows, kBlockN, dim, false);
      for (int i = 0; i < m_rows; ++i)
        for (int j = 0; j < kBlockN; ++j) {
          const int e = i * kBlockN + j;
          dscores[e] = probs[e] * (dscores[e] - row_dot[i]) * p.scale;
        }
      // dK += dS^T Q
      gemm<Isa>({dscores, 1, kBlockN}, q, dim, dk, dim, n_rows, dim, m_rows, true);
      // dQ += dS K, through the shared accumulator
      gemm<Isa>({dscores, kBlockN, 1}, k, dim, dq, dim, m_rows, dim, n_rows, false);
      std::lock_guard<std::mutex> lock(
          ctx.dq_locks[uint64_t(stat0 / kBlockM) % uint64_t(ctx.dq_lock_count)]);
      for (int i = 0; i < q_rows.count; ++i) {
        float *accum = ws.dq_accum + (stat0 + i) * p.head_dim;
        for (int c = 0; c < p.head_dim; ++c) accum[c] += dq[i * dim + c];
      }
    }
  }
  store_tile<Elem>(dk, dim, p.dk, kv_rows, p.head_dim);
  store_tile<Elem>(dv, dim, p.dv, kv_rows, p.head_dim);
}

template <class Elem>
void bwd_store_dq(const core::AttnParams &p, const core::FwdItem &item, const BwdWorkspace &ws) {
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int m0 = item.m_block * kBlockM;
  if (m0 >= seq.seqlen_q) return;
  const RowSpan rows{item.batch, seq.q_row0, item.head_q, m0,
                     core::min_i(kBlockM, seq.seqlen_q - m0)};
  const int64_t stat0 = core::row_stat_index(p, item.batch, item.head_q, m0);
  store_tile<Elem>(ws.dq_accum + stat0 * p.head_dim, p.head_dim, p.dq, rows, p.head_dim);
}

template <class Isa, core::Dtype D>
void attention_bwd(const core::AttnParams &p, const KernelContext &ctx) {
  using Elem = Element<Isa, D>;
  const int dim = cpu_tile_plan(p.head_dim).head_dim;
  const BwdWorkspace ws = bwd_workspace(p);
  const int64_t q_items = core::fwd_items(p, kBlockM);
  ctx.pool->parallel_for(q_items, [&](int64_t index, int worker) {
    bwd_prepare<Elem>(p, core::fwd_item(p, kBlockM, index), dim, ws, ctx.scratch[worker]);
  });
  ctx.pool->parallel_for(core::bwd_items(p, kBlockN), [&](int64_t index, int worker) {
    bwd_tile<Isa, Elem>(p, core::bwd_item(p, kBlockN, index), dim, ws, ctx, ctx.scratch[worker]);
  });
  ctx.pool->parallel_for(q_items, [&](int64_t index, int) {
    bwd_store_dq<Elem>(p, core::fwd_item(p, kBlockM, index), ws);
  });
}

}  // namespace fa2::cpu
