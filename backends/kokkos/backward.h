// The FlashAttention-2 backward as three Kokkos kernels:
//  1. RowStatsKernel: D_i = rowsum(dO_i * O_i) and a zeroed fp32 dQ
//     accumulator, both in the caller's workspace;
//  2. BackwardKernel: a team per (batch, kv head, key block) keeps K, V, dK
//     and dV in team scratch and walks every query head of its GQA group and
//     every query block that sees its keys (core::query_blocks), recomputing
//     P from the stored logsumexp. dK/dV are private to the team; dQ
//     contributions of different key blocks meet through Kokkos::atomic_add
//     on the fp32 accumulator;
//  3. DqStoreKernel: the accumulator converted to the caller's dQ.
#pragma once

#include <cmath>

#include "core/mask.h"
#include "core/online_softmax.h"
#include "core/work.h"
#include "tiles.h"

namespace fa2::kokkos {

// The backward's scratch inside the caller's workspace, for rows indexed
// like the logsumexp ([batch, heads_q, seqlen_q], max seqlen for varlen).
struct BackwardWorkspace {
  static constexpr uint64_t kAlign = 256;
  uint64_t rows, dq_offset, bytes;

  explicit BackwardWorkspace(const core::AttnParams &p)
      : rows(uint64_t(p.batch) * uint64_t(p.heads_q) * uint64_t(p.seqlen_q)),
        dq_offset((rows * sizeof(float) + kAlign - 1) / kAlign * kAlign),
        bytes(rows == 0 ? 0 : dq_offset + rows * uint64_t(p.head_dim) * sizeof(float)) {}
  float *row_dot(void *base) const { return static_cast<float *>(base); }
  float *dq_accum(void *base) const {
    return reinterpret_cast<float *>(static_cast<char *>(base) + dq_offset);
  }
};

template <class Elem>
struct RowStatsKernel {
  core::AttnParams p;
  float *row_dot;
  float *dq_accum;

  KOKKOS_INLINE_FUNCTION void operator()(int64_t index) const {
    using Storage = typename Elem::Storage;
    const core::StatRow at = core::stat_row(p, index);
    float *dq_row = dq_accum + index * p.head_dim;
    for (int d = 0; d < p.head_dim; ++d) dq_row[d] = 0.f;
    const core::SeqInfo seq = core::seq_info(p, at.batch);
    float dot = 0.f;
    if (at.row < seq.seqlen_q) {
      const Storage *dout = row_ptr<const Storage *>(p.dout, at.batch, seq.q_row0, at.row, at.head_q);
      const Storage *out = row_ptr<const Storage *>(p.out, at.batch, seq.q_row0, at.row, at.head_q);
      for (int d = 0; d < p.head_dim; ++d) dot += Elem::load(dout[d]) * Elem::load(out[d]);
    }
    row_dot[index] = dot;
  }
};

template <class Elem>
struct BackwardKernel {
  core::AttnParams p;
  int block_m, block_n;
  int scratch_level;
  const float *row_dot;
  float *dq_accum;

  // Smaller tiles for wide heads keep a team's scratch (and, on a GPU, the
  // level-1 scratch of all resident teams) bounded.
  static int block_size(int head_dim) { return head_dim <= 128 ? 64 : 32; }
  static size_t scratch_bytes(int block_m, int block_n, int head_dim) {
    return 4 * Tile::shmem_size(block_n, head_dim)    // K, V, dK, dV
           + 3 * Tile::shmem_size(block_m, head_dim)  // Q, dO, this tile's dQ
           + 2 * Tile::shmem_size(block_m, block_n)   // P, dS
           + 2 * TileRow::shmem_size(block_m);        // lse (log2), D
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member &team) const {
    const core::BwdItem item = core::bwd_item(p, block_n, team.league_rank());
    const core::SeqInfo seq = core::seq_info(p, item.batch);
    const int n0 = item.n_block * block_n;
    if (n0 >= seq.seqlen_k) return;  // past the end of this (varlen) sequence
    const int cols = core::min_i(block_n, seq.seqlen_k - n0);
    const core::Mask mask = core::mask_of(p, seq);
    const int head_dim = p.head_dim;

    const auto &scratch = team.team_scratch(scratch_level);
    const Tile k(scratch, block_n, head_dim), v(scratch, block_n, head_dim);
    const Tile dk(scratch, block_n, head_dim), dv(scratch, block_n, head_dim);
    const Tile q(scratch, block_m, head_dim), dout(scratch, block_m, head_dim);
    const Tile dq(scratch, block_m, head_dim);
    const Tile prob(scratch, block_m, block_n), dscore(scratch, block_m, block_n);
    const TileRow lse2(scratch, block_m), delta(scratch, block_m);

    load_tile<Elem>(team, k, p.k, item.batch, seq.k_row0, n0, cols, cols, item.head_kv, head_dim);
    load_tile<Elem>(team, v, p.v, item.batch, seq.k_row0, n0, cols, cols, item.head_kv, head_dim);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cols), [&](int j) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim), [&](int d) {
        dk(j, d) = 0.f;
        dv(j, d) = 0.f;
      });
    });

    const core::BlockRange blocks = core::query_blocks(mask, item.n_block, block_n, block_m);
    for (int group = 0; group < p.group_size; ++group) {
      const int head_q = item.head_kv * p.group_size + group;
      for (int m_block = blocks.begin; m_block < blocks.end; ++m_block) {
        const int m0 = m_block * block_m;
        const int rows = core::min_i(block_m, seq.seqlen_q - m0);
        team.team_barrier();  // the previous query block is done with its tiles
        load_tile<Elem>(team, q, p.q, item.batch, seq.q_row0, m0, rows, rows, head_q, head_dim);
        load_tile<Elem>(team, dout, p.dout, item.batch, seq.q_row0, m0, rows, rows, head_q, head_dim);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
          Kokkos::single(Kokkos::PerThread(team), [&] {
            const int64_t stat = core::row_stat_index(p, item.batch, head_q, m0 + i);
            lse2(i) = core::lse_log2(p.lse[stat]);
            delta(i) = row_dot[stat];
          });
        });
        team.team_barrier();

        // P from the logsumexp and dS = P * (dO.V - D); invisible entries 0.
        const bool masked = core::tile_needs_mask(mask, m_block, item.n_block, block_m, block_n);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, cols), [&](int j) {
            float score = 0.f, dprob = 0.f;
            for (int d = 0; d < head_dim; ++d) {
              score += q(i, d) * k(j, d);
              dprob += dout(i, d) * v(j, d);
            }
            const float pr = !masked || mask.visible(m0 + i, n0 + j)
                                 ? core::prob_from_lse(score, p.scale_log2, lse2(i))
                                 : 0.f;
            prob(i, j) = pr;
            dscore(i, j) = pr * (dprob - delta(i));
          });
        });
        team.team_barrier();

        // dV += P^T dO and dK += dS^T Q (the scale is applied once, at the
        // end); this tile's dQ = scale * dS K.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cols), [&](int j) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim), [&](int d) {
            float dv_sum = dv(j, d), dk_sum = dk(j, d);
            for (int i = 0; i < rows; ++i) {
              dv_sum += prob(i, j) * dout(i, d);
              dk_sum += dscore(i, j) * q(i, d);
            }
            dv(j, d) = dv_sum;
            dk(j, d) = dk_sum;
          });
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim), [&](int d) {
            float sum = 0.f;
            for (int j = 0; j < cols; ++j) sum += dscore(i, j) * k(j, d);
            dq(i, d) = sum * p.scale;
          });
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int i) {
          float *dq_row = dq_accum + core::row_stat_index(p, item.batch, head_q, m0 + i) * head_dim;
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim),
                               [&](int d) { Kokkos::atomic_add(dq_row + d, dq(i, d)); });
        });
      }
    }
    team.team_barrier();

    using Storage = typename Elem::Storage;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cols), [&](int j) {
      Storage *dk_row = row_ptr<Storage *>(p.dk, item.batch, seq.k_row0, n0 + j, item.head_kv);
      Storage *dv_row = row_ptr<Storage *>(p.dv, item.batch, seq.k_row0, n0 + j, item.head_kv);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim), [&](int d) {
        dk_row[d] = Elem::store(dk(j, d) * p.scale);
        dv_row[d] = Elem::store(dv(j, d));
      });
    });
  }
};

template <class Elem>
struct DqStoreKernel {
  core::AttnParams p;
  const float *dq_accum;

  KOKKOS_INLINE_FUNCTION void operator()(int64_t index) const {
    using Storage = typename Elem::Storage;
    const core::StatRow at = core::stat_row(p, index);
    const core::SeqInfo seq = core::seq_info(p, at.batch);
    if (at.row >= seq.seqlen_q) return;  // no such row in this (varlen) sequence
    Storage *dq = row_ptr<Storage *>(p.dq, at.batch, seq.q_row0, at.row, at.head_q);
    const float *acc = dq_accum + index * p.head_dim;
    for (int d = 0; d < p.head_dim; ++d) dq[d] = Elem::store(acc[d]);
  }
};

}  // namespace fa2::kokkos
