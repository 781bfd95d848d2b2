// FlashAttention-2 backward on MFMA. A workgroup owns kWaves * 32 keys of
// one (batch, kv head); each wavefront keeps dK and dV of its 32 keys in
// registers while it walks every query head of the GQA group and every
// query block that core::query_blocks() leaves, so the group sum needs no
// atomics. dQ contributions of the workgroup are summed through LDS and
// added to the fp32 workspace with atomics; dq_convert_kernel scales and
// stores them. D = rowsum(dO * O) comes from bwd_preprocess_kernel.
//
// Tiles are arranged so that a lane owns one key (an accumulator column):
// S = Q * K^T and dP = dO * V^T leave P and dS in the registers that are
// the B operands of dV^T += dO^T * P and dK^T += Q^T * dS.
#pragma once

#include <hip/hip_runtime.h>

#include <cmath>

#include "core/mask.h"
#include "core/online_softmax.h"
#include "core/work.h"
#include "launch.h"
#include "lds_tile.h"
#include "mfma_ops.h"

namespace fa2::hip {

// L is the MFMA layout (launch.h: BwdLayout picks it per head dim).
template <class Elem, class L, int kHeadDim, int kWaves>
__global__ void __launch_bounds__(kWaves *L::kWaveSize)
    bwd_kernel(const core::AttnParams p, float *dq_accum, const float *delta) {
  using Acc = typename AccOf<L>::type;
  constexpr int kKeysPerWave = L::kN;  // keys: accumulator columns
  static_assert(kWaves * kKeysPerWave % L::kK == 0, "dQ steps over whole key blocks");
  constexpr int kBlockN = kWaves * kKeysPerWave;
  constexpr int kBlockM = L::kM;  // queries: accumulator rows
  constexpr int kDimSteps = kHeadDim / L::kK;
  constexpr int kDimTiles = kHeadDim / L::kM;
  constexpr int kE = L::kOperandElems;
  using KeyTile = LdsTile<kBlockN, kHeadDim>;
  using RowTile = LdsTile<kBlockM, kHeadDim>;
  using ScoreTile = LdsTile<kBlockM, kBlockN>;

  __shared__ __attribute__((aligned(16))) uint16_t k_smem[KeyTile::kElems];
  __shared__ __attribute__((aligned(16))) uint16_t q_smem[RowTile::kElems];
  __shared__ __attribute__((aligned(16))) uint16_t do_smem[RowTile::kElems];
  __shared__ __attribute__((aligned(16))) uint16_t ds_smem[ScoreTile::kElems];
  __shared__ float lse_log2_smem[kBlockM];
  __shared__ float delta_smem[kBlockM];
  const KeyTile k_tile{k_smem};
  const RowTile q_tile{q_smem}, do_tile{do_smem};
  const ScoreTile ds_tile{ds_smem};

  const core::BwdItem item = core::bwd_item(p, kBlockN, blockIdx.x);
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  if (item.n_block * kBlockN >= seq.seqlen_k) return;  // uniform over the block
  const core::Mask mask = core::mask_of(p, seq);
  const int lane = threadIdx.x % L::kWaveSize;
  const int wave = int(threadIdx.x / L::kWaveSize);
  const int wave_n_block = item.n_block * kWaves + wave;
  const int key_in_block = wave * kKeysPerWave + L::b_col(lane);
  const int key = item.n_block * kBlockN + key_in_block;
  const bool key_inside = key < seq.seqlen_k;

  k_tile.load(p.k, item.batch, seq.k_row0, item.n_block * kBlockN, seq.seqlen_k, item.head_kv,
              p.head_dim);
  // V^T as B operands of dP = dO * V^T, in registers for the whole loop.
  Bits4 v_frag[kDimSteps];
  {
    const auto *v = static_cast<const uint16_t *>(p.v.data);
    const int64_t row =
        key_inside ? core::row_offset(p.v, item.batch, seq.k_row0, key, item.head_kv) : 0;
    FA2_UNROLL
    for (int s = 0; s < kDimSteps; ++s) {
      const int d = s * L::kK + L::b_k(lane, 0);
      v_frag[s] = load4(v + row + d, key_inside && d < p.head_dim);
    }
  }

  Acc dk[kDimTiles], dv[kDimTiles];
  FA2_UNROLL
  for (int t = 0; t < kDimTiles; ++t) dk[t] = dv[t] = Acc{};

  const core::BlockRange blocks = core::query_blocks(mask, item.n_block, kBlockN, kBlockM);
  const core::BlockRange mine = core::query_blocks(mask, wave_n_block, kKeysPerWave, kBlockM);
  for (int g = 0; g < p.group_size; ++g) {
    const int head_q = item.head_kv * p.group_size + g;
    for (int m_block = blocks.begin; m_block < blocks.end; ++m_block) {
      const int row0 = m_block * kBlockM;
      __syncthreads();  // the previous Q / dO / dS tiles are consumed
      q_tile.load(p.q, item.batch, seq.q_row0, row0, seq.seqlen_q, head_q, p.head_dim);
      do_tile.load(p.dout, item.batch, seq.q_row0, row0, seq.seqlen_q, head_q, p.head_dim);
      for (int r = threadIdx.x; r < kBlockM; r += blockDim.x) {
        const bool inside = row0 + r < seq.seqlen_q;
        const int64_t stat = core::row_stat_index(p, item.batch, head_q, row0 + r);
        // A row past the sequence gets p = 0, as a row that saw no key.
        lse_log2_smem[r] = core::lse_log2(inside ? p.lse[stat] : -INFINITY);
        delta_smem[r] = inside ? delta[stat] : 0.f;
      }
      __syncthreads();

      Acc ds = Acc{};
      if (m_block >= mine.begin && m_block < mine.end) {
        Acc s_acc = Acc{}, dp = Acc{};
        FA2_UNROLL
        for (int s = 0; s < kDimSteps; ++s) {
          const int d = s * L::kK + L::a_k(lane, 0);
          s_acc = Elem::mfma(L{}, q_tile.chunk(L::a_row(lane), d),
                             k_tile.chunk(key_in_block, s * L::kK + L::b_k(lane, 0)), s_acc);
          dp = Elem::mfma(L{}, do_tile.chunk(L::a_row(lane), d), v_frag[s], dp);
        }
        const bool needs_mask =
            core::tile_needs_mask(mask, m_block, wave_n_block, kBlockM, kKeysPerWave);
        Acc prob;
        FA2_UNROLL
        for (int r = 0; r < L::kAccRegs; ++r) {
          const int q_row = L::c_row(lane, r);
          const bool visible = !needs_mask || mask.visible(row0 + q_row, key);
          prob[r] =
              visible ? core::prob_from_lse(s_acc[r], p.scale_log2, lse_log2_smem[q_row]) : 0.f;
          ds[r] = prob[r] * (dp[r] - delta_smem[q_row]);
        }
        // dV^T += dO^T * P and dK^T += Q^T * dS, P and dS straight from registers.
        FA2_UNROLL
        for (int s = 0; s < L::kKStepsPerAcc; ++s) {
          Bits4 p_frag, ds_frag;
          FA2_UNROLL
          for (int e = 0; e < kE; ++e) {
            p_frag[e] = Elem::from_float(prob[s * kE + e]);
            ds_frag[e] = Elem::from_float(ds[s * kE + e]);
          }
          const int q_row = s * L::kK + L::a_k(lane, 0);
          FA2_UNROLL
          for (int t = 0; t < kDimTiles; ++t) {
            const int d = t * L::kM + L::a_row(lane);
            dv[t] = Elem::mfma(L{}, do_tile.column4(q_row, d), p_frag, dv[t]);
            dk[t] = Elem::mfma(L{}, q_tile.column4(q_row, d), ds_frag, dk[t]);
          }
        }
      }
      FA2_UNROLL
      for (int r = 0; r < L::kAccRegs; ++r)
        ds_tile.at(L::c_row(lane, r), key_in_block) = Elem::from_float(ds[r]);
      __syncthreads();

      // dQ = dS * K over the whole key block; the wavefronts share the dim tiles.
      for (int t = wave; t < kDimTiles; t += kWaves) {
        Acc dq = Acc{};
        const int d = t * L::kN + L::b_col(lane);
        FA2_UNROLL
        for (int s = 0; s < kBlockN / L::kK; ++s)
          dq = Elem::mfma(L{}, ds_tile.chunk(L::a_row(lane), s * L::kK + L::a_k(lane, 0)),
                          k_tile.column4(s * L::kK + L::b_k(lane, 0), d), dq);
        if (d >= p.head_dim) continue;
        FA2_UNROLL
        for (int r = 0; r < L::kAccRegs; ++r) {
          const int q_row = row0 + L::c_row(lane, r);
          if (q_row < seq.seqlen_q)
            atomicAdd(dq_accum + dq_accum_index(p, item.batch, q_row, head_q) + d, dq[r]);
        }
      }
    }
  }

  if (!key_inside) return;
  auto *dk_out = static_cast<uint16_t *>(p.dk.data) +
                 core::row_offset(p.dk, item.batch, seq.k_row0, key, item.head_kv);
  auto *dv_out = static_cast<uint16_t *>(p.dv.data) +
                 core::row_offset(p.dv, item.batch, seq.k_row0, key, item.head_kv);
  FA2_UNROLL
  for (int t = 0; t < kDimTiles; ++t) {
    FA2_UNROLL
    for (int g = 0; g < L::kAccRegs; g += kE) {
      const int d = t * L::kM + L::c_row(lane, g);  // kE consecutive dims
      if (d >= p.head_dim) continue;
      Bits4 dk_chunk, dv_chunk;
      FA2_UNROLL
      for (int e = 0; e < kE; ++e) {
        dk_chunk[e] = Elem::from_float(dk[t][g + e] * p.scale);  // d(scale * s) / ds
        dv_chunk[e] = Elem::from_float(dv[t][g + e]);
      }
      *reinterpret_cast<Bits4 *>(dk_out + d) = dk_chunk;
      *reinterpret_cast<Bits4 *>(dv_out + d) = dv_chunk;
    }
  }
}

}  // namespace fa2::hip
