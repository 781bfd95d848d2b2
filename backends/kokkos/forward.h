// The FlashAttention-2 forward as one Kokkos team kernel. A team owns one
// (batch, query head, query block): its Q tile and unscaled output
// accumulator stay in team scratch while it walks the key blocks the mask
// lets through (core::key_blocks), rescaling the accumulator by the online
// softmax; the division by the row sum happens once, at the end, and only
// the logsumexp is stored for the backward.
#pragma once

#include <cmath>

#include "core/mask.h"
#include "core/online_softmax.h"
#include "core/work.h"
#include "tiles.h"

namespace fa2::kokkos {

template <class Elem>
struct ForwardKernel {
  static constexpr int kBlockM = 64;
  static constexpr int kBlockN = 64;  // compile-time: the softmax step's row width

  core::AttnParams p;
  int scratch_level;

  static size_t scratch_bytes(int head_dim) {
    return 2 * Tile::shmem_size(kBlockM, head_dim)    // Q, output accumulator
           + 2 * Tile::shmem_size(kBlockN, head_dim)  // K, V
           + Tile::shmem_size(kBlockM, kBlockN)       // scores, then probabilities
           + 3 * TileRow::shmem_size(kBlockM);        // row max, row sum, rescale
  }
  static int64_t league_size(const core::AttnParams &p) { return core::fwd_items(p, kBlockM); }

  KOKKOS_INLINE_FUNCTION void operator()(const Member &team) const {
    const core::FwdItem item = core::fwd_item(p, kBlockM, team.league_rank());
    const core::SeqInfo seq = core::seq_info(p, item.batch);
    const int m0 = item.m_block * kBlockM;
    if (m0 >= seq.seqlen_q) return;  // past the end of this (varlen) sequence
    const int rows = core::min_i(kBlockM, seq.seqlen_q - m0);
    const core::Mask mask = core::mask_of(p, seq);
    const int head_kv = core::kv_head_of(p, item.head_q);
    const int head_dim = p.head_dim;

    const auto &scratch = team.team_scratch(scratch_level);
    const Tile q(scratch, kBlockM, head_dim), acc(scratch, kBlockM, head_dim);
    const Tile k(scratch, kBlockN, head_dim), v(scratch, kBlockN, head_dim);
    const Tile s(scratch, kBlockM, kBlockN);
    const TileRow row_max(scratch, kBlockM), row_sum(scratch, kBlockM), rescale(scratch, kBlockM);

    load_tile<Elem>(team, q, p.q, item.batch, seq.q_row0, m0, rows, rows, item.head_q, head_dim);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim), [&](int d) { acc(i, d) = 0.f; });
      Kokkos::single(Kokkos::PerThread(team), [&] {
        const core::RowState fresh;
        row_max(i) = fresh.row_max;
        row_sum(i) = fresh.row_sum;
      });
    });

    const core::BlockRange blocks = core::key_blocks(mask, item.m_block, kBlockM, kBlockN);
    for (int n_block = blocks.begin; n_block < blocks.end; ++n_block) {
      const int n0 = n_block * kBlockN;
      const int cols = core::min_i(kBlockN, seq.seqlen_k - n0);
      team.team_barrier();  // the previous block is done with K, V and s
      load_tile<Elem>(team, k, p.k, item.batch, seq.k_row0, n0, cols, kBlockN, head_kv, head_dim);
      load_tile<Elem>(team, v, p.v, item.batch, seq.k_row0, n0, cols, kBlockN, head_kv, head_dim);
      team.team_barrier();

      // Raw scores q.k; only a boundary tile pays for the per-element mask,
      // which also turns the zero padding past seqlen_k into -inf.
      const bool masked = core::tile_needs_mask(mask, item.m_block, n_block, kBlockM, kBlockN);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kBlockN), [&](int j) {
          float dot = 0.f;
          for (int d = 0; d < head_dim; ++d) dot += q(i, d) * k(j, d);
          s(i, j) = !masked || mask.visible(m0 + i, n0 + j) ? dot : -INFINITY;
        });
      });
      team.team_barrier();

      // The row's thread alone runs the online softmax step on its row.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
        Kokkos::single(Kokkos::PerThread(team), [&] {
          core::RowState state;
          state.row_max = row_max(i);
          state.row_sum = row_sum(i);
          float(&scores)[kBlockN] = *reinterpret_cast<float(*)[kBlockN]>(&s(i, 0));
          rescale(i) = core::online_softmax_step(scores, state, p.scale_log2, core::ThreadRowReduce{});
          row_max(i) = state.row_max;
          row_sum(i) = state.row_sum;
        });
      });
      team.team_barrier();

      // acc = acc * rescale + P V, still unnormalised.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim), [&](int d) {
          float sum = acc(i, d) * rescale(i);
          for (int j = 0; j < cols; ++j) sum += s(i, j) * v(j, d);
          acc(i, d) = sum;
        });
      });
    }
    team.team_barrier();

    using Storage = typename Elem::Storage;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
      core::RowState state;
      state.row_max = row_max(i);
      state.row_sum = row_sum(i);
      const core::RowResult result = core::online_softmax_finish(state, p.scale, core::ThreadRowReduce{});
      Storage *out = row_ptr<Storage *>(p.out, item.batch, seq.q_row0, m0 + i, item.head_q);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim),
                           [&](int d) { out[d] = Elem::store(acc(i, d) * result.out_scale); });
      Kokkos::single(Kokkos::PerThread(team), [&] {
        p.lse[core::row_stat_index(p, item.batch, item.head_q, m0 + i)] = result.lse;
      });
    });
  }
};

}  // namespace fa2::kokkos
