// FlashAttention-2 forward on Hopper: wgmma, TMA and warp specialisation.
//
// One CTA per (batch, query head, query block) (core::fwd_item), like the
// sm80 kernel, with kConsumers + 1 warpgroups:
//   warpgroup 0      the producer. It gives most of its registers away
//                    (setmaxnreg) and one thread issues every load: Q once,
//                    then K and V of each key block through a kStages-deep
//                    ring of shared-memory stages, each stage a pair of
//                    mbarriers (full: the TMA's bytes have landed; empty:
//                    every consumer warp is done reading).
//   warpgroups 1..   the consumers, 64 query rows each (split-Q: no
//                    exchange of partial outputs). S = Q K^T is one wgmma
//                    chain from shared memory; the online softmax runs on
//                    the accumulators; P, packed to b16 in registers, is the
//                    A operand of O += P V, whose V is read transposed from
//                    shared memory. O stays unscaled until the end.
// Inside a consumer the softmax of block i overlaps the tensor cores: S_i
// and P_{i-1} V_{i-1} are issued together, the softmax of S_i runs while
// P V still accumulates, and only the rescale of O waits for it.
// Key blocks are visited from the last visible one down, so the diagonal
// (masked) blocks of causal attention come first and the rest are unmasked.
#pragma once

#include <cstdint>

#include "core/online_softmax.h"
#include "core/work.h"
#include "empty_rows.cuh"
#include "sm80/tile_ops.cuh"
#include "sm90/hopper_ops.cuh"
#include "sm90/wgmma.cuh"

namespace fa2::cuda::sm90 {

template <class T, int kHeadDim, int kBlockN, int kConsumers, int kStages>
struct FwdKernel {
  static constexpr int kBlockM = 64 * kConsumers;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kChunks = kHeadDim / 64;  // 128-byte column chunks of a tile
  static constexpr uint32_t kQBytes = kBlockM * kHeadDim * sizeof(T);
  static constexpr uint32_t kKVBytes = kBlockN * kHeadDim * sizeof(T);
  static constexpr uint32_t kBarriers = kQBytes + 2 * kStages * kKVBytes;  // offset
  static constexpr int kSmemBytes = kBarriers + 8 * (1 + 4 * kStages) + 1024;  // + alignment
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = 240;
  static_assert(register_split_fits(kThreads, kProducerRegs, kConsumers, kConsumerRegs),
                "setmaxnreg would oversubscribe the register file");
  static_assert(kHeadDim % 64 == 0 && kBlockN % 16 == 0 && kConsumers == 2,
                "bad Hopper forward tile plan");
};

template <class T, int kHeadDim, int kBlockN, int kConsumers, int kStages>
__global__ void __launch_bounds__(128 * (kConsumers + 1), 1)
    fwd_kernel(const core::AttnParams p, const __grid_constant__ TmaMaps maps) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using K = FwdKernel<T, kHeadDim, kBlockN, kConsumers, kStages>;
  constexpr int kBlockM = K::kBlockM;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes: tiles start on that.
  const uint32_t sQ = (smem_address(smem_raw) + 1023u) & ~1023u;
  const uint32_t sK = sQ + K::kQBytes;                // kStages tiles
  const uint32_t sV = sK + kStages * K::kKVBytes;     // kStages tiles
  const uint32_t bar_q = sQ + K::kBarriers;
  auto k_full = [&](int s) { return bar_q + 8u * (1 + s); };
  auto k_empty = [&](int s) { return bar_q + 8u * (1 + kStages + s); };
  auto v_full = [&](int s) { return bar_q + 8u * (1 + 2 * kStages + s); };
  auto v_empty = [&](int s) { return bar_q + 8u * (1 + 3 * kStages + s); };

  const int tid = threadIdx.x;
  const core::FwdItem item = core::fwd_item(p, kBlockM, blockIdx.x);
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int row0 = item.m_block * kBlockM;
  const int rows_valid = seq.seqlen_q - row0;
  const core::Mask mask = core::mask_of(p, seq);
  const core::BlockRange blocks = core::key_blocks(mask, item.m_block, kBlockM, kBlockN);
  T *out = static_cast<T *>(p.out.data) +
           core::row_offset(p.out, item.batch, seq.q_row0, row0, item.head_q);
  if (blocks.empty()) {
    write_empty_rows<T>(p, out, p.out.stride_seq, item.batch, item.head_q, row0,
                        core::min_i(rows_valid, kBlockM), tid, K::kThreads);
    return;
  }
  const int num_blocks = blocks.end - blocks.begin;
  auto key_block = [&](int i) { return blocks.end - 1 - i; };  // i-th visited

  if (tid == 0) {
    mbar_init(bar_q, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(k_full(s), 1);
      mbar_init(v_full(s), 1);
      mbar_init(k_empty(s), 4 * kConsumers);  // one arrival per consumer warp
      mbar_init(v_empty(s), 4 * kConsumers);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (tid < 128) {  // ---------------------------------------------- producer
    regs_release<K::kProducerRegs>();
    if (tid == 0) {
      const int head_kv = core::kv_head_of(p, item.head_q);
      tma_prefetch_map(maps.k);
      tma_prefetch_map(maps.v);
      mbar_arrive_expect_tx(bar_q, K::kQBytes);
      for (int c = 0; c < K::kChunks; ++c)
        tma_load_4d(sQ + c * kBlockM * kSwizzleRowBytes, maps.q, bar_q, 64 * c, row0,
                    item.head_q, item.batch);
      for (int i = 0; i < num_blocks; ++i) {
        const int stage = i % kStages;
        const uint32_t parity = ((i / kStages) & 1) ^ 1;  // first round passes at once
        const int key0 = key_block(i) * kBlockN;
        mbar_wait(k_empty(stage), parity);
        mbar_arrive_expect_tx(k_full(stage), K::kKVBytes);
        for (int c = 0; c < K::kChunks; ++c)
          tma_load_4d(sK + stage * K::kKVBytes + c * kBlockN * kSwizzleRowBytes, maps.k,
                      k_full(stage), 64 * c, key0, head_kv, item.batch);
        mbar_wait(v_empty(stage), parity);
        mbar_arrive_expect_tx(v_full(stage), K::kKVBytes);
        for (int c = 0; c < K::kChunks; ++c)
          tma_load_4d(sV + stage * K::kKVBytes + c * kBlockN * kSwizzleRowBytes, maps.v,
                      v_full(stage), 64 * c, key0, head_kv, item.batch);
      }
    }
    return;
  }

  // ------------------------------------------------------------ consumers
  regs_claim<K::kConsumerRegs>();
  const int wg = tid / 128 - 1, lane = tid % 32, warp = (tid / 32) % 4;
  const int group = Sm80MmaLayout::group(lane), in_quad = Sm80MmaLayout::in_quad(lane);
  const int wg_row0 = 64 * wg + 16 * warp + group;  // + 8 h: this thread's rows in the tile
  const uint32_t sQ_wg = sQ + 64 * wg * kSwizzleRowBytes;

  float o[kHeadDim / 2];
#pragma unroll
  for (int c = 0; c < kHeadDim / 2; ++c) o[c] = 0.f;
  float s[kBlockN / 2];
  uint32_t p_frag[kBlockN / 16][4];
  core::RowState row_state[2];
  row_state[0] = row_state[1] = core::RowState{};
  const QuadRowReduce reduce;
  const FastExp2 exp2;

  auto release = [&](uint32_t bar) {
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
  };
  auto issue_qk = [&](int i) {
    const int stage = i % kStages;
    mbar_wait(k_full(stage), (i / kStages) & 1);
    const uint32_t sK_i = sK + stage * K::kKVBytes;
    wgmma_fence();
    wgmma_chain_ss<T, kBlockN, kHeadDim / 16>(s, sQ_wg, kBlockM, sK_i, kBlockN);
    wgmma_commit();
  };
  auto issue_pv = [&](int i) {
    const int stage = i % kStages;
    mbar_wait(v_full(stage), (i / kStages) & 1);
    const uint32_t sV_i = sV + stage * K::kKVBytes;
    wgmma_fence();
    wgmma_chain_rs<T, kHeadDim, kBlockN / 16>(o, p_frag, sV_i, kBlockN);
    wgmma_commit();
  };
  // Masks S_i and turns it into unnormalised probabilities in place;
  // returns the rescale factor of each of the thread's two rows.
  float scores[2][kBlockN / 4];  // s, viewed per row: [h][2 j + e] = s[4 j + 2 h + e]
  auto softmax = [&](int i, float (&correction)[2]) {
    const int n_block = key_block(i);
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) scores[h][2 * j + e] = s[4 * j + 2 * h + e];
    if (core::tile_needs_mask(mask, item.m_block, n_block, kBlockM, kBlockN)) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int c = 0; c < kBlockN / 4; ++c) {
          const int col = n_block * kBlockN + 8 * (c / 2) + 2 * in_quad + c % 2;
          if (!mask.visible(row0 + wg_row0 + 8 * h, col)) scores[h][c] = -INFINITY;
        }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h)
      correction[h] = core::online_softmax_step<kBlockN / 4>(scores[h], row_state[h],
                                                             p.scale_log2, reduce, exp2);
  };
  auto pack_p = [&]() {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      p_frag[kk][0] = Element<T>::pack(scores[0][4 * kk], scores[0][4 * kk + 1]);
      p_frag[kk][1] = Element<T>::pack(scores[1][4 * kk], scores[1][4 * kk + 1]);
      p_frag[kk][2] = Element<T>::pack(scores[0][4 * kk + 2], scores[0][4 * kk + 3]);
      p_frag[kk][3] = Element<T>::pack(scores[1][4 * kk + 2], scores[1][4 * kk + 3]);
    }
  };

  mbar_wait(bar_q, 0);
  float correction[2];
  issue_qk(0);
  wgmma_wait<0>();
  pin_registers(s);
  release(k_empty(0));
  softmax(0, correction);  // O is still zero: nothing to rescale
  pack_p();
  for (int i = 1; i < num_blocks; ++i) {
    issue_qk(i);
    issue_pv(i - 1);
    wgmma_wait<1>();  // S_i is ready; P_{i-1} V_{i-1} may still run
    pin_registers(s);
    release(k_empty(i % kStages));
    softmax(i, correction);
    wgmma_wait<0>();
    pin_registers(o);
    pin_registers(p_frag);
    release(v_empty((i - 1) % kStages));
#pragma unroll
    for (int j = 0; j < kHeadDim / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        o[4 * j + 2 * h] *= correction[h];
        o[4 * j + 2 * h + 1] *= correction[h];
      }
    pack_p();
  }
  issue_pv(num_blocks - 1);
  wgmma_wait<0>();
  pin_registers(o);
  pin_registers(p_frag);
  release(v_empty((num_blocks - 1) % kStages));

  // Epilogue: one rescale per row, then out and lse.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const core::RowResult result = core::online_softmax_finish(row_state[h], p.scale, reduce);
    const int row = wg_row0 + 8 * h;
    if (row >= rows_valid) continue;
    T *out_row = out + row * p.out.stride_seq;
#pragma unroll
    for (int j = 0; j < kHeadDim / 8; ++j) {
      const int col = 8 * j + 2 * in_quad;
      if (col < p.head_dim)
        *reinterpret_cast<uint32_t *>(out_row + col) = Element<T>::pack(
            o[4 * j + 2 * h] * result.out_scale, o[4 * j + 2 * h + 1] * result.out_scale);
    }
    if (in_quad == 0)
      p.lse[core::row_stat_index(p, item.batch, item.head_q, row0 + row)] = result.lse;
  }
#endif  // __CUDA_ARCH_FEAT_SM90_ALL: other targets get an empty body, never launched
}

}  // namespace fa2::cuda::sm90
