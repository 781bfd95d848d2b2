// FlashAttention-2 backward on Hopper for head dims whose dK and dV do not
// fit one warpgroup's registers (d256: 64 keys x 256 columns x 2 = 256
// fp32 a thread). Grid, producer (lse / D with each Q) and masks as in
// bwd_kernel.cuh; the two consumer warpgroups share one 64-key block and
// split each GEMM the way its output allows:
//   S^T  = K Q^T,  dP^T = V dO^T   by queries: warpgroup w takes queries
//                                   32 w .. 32 w + 31 of the 64-query block
//                                   (m64n32, from shared memory)
//   P^T, dS^T                       in registers, then to shared memory as
//                                   [key][query] tiles where both halves meet
//   dV += P^T dO,  dK += dS^T Q     by columns: warpgroup w owns columns
//                                   128 w .. 128 w + 127 (64 + 64 fp32 a
//                                   thread; both operands from shared memory)
//   dQ                              see below, added to the fp32 accumulator
//                                   by 16-byte atomics in 128-byte pieces.
// The dQ atomics bound this kernel (the L2 takes about a cycle per request
// and per 32-byte sector, and every key block adds a whole dQ tile), so
// CTAs work in clusters of two over key blocks 2 i and 2 i + 1, walking the
// same query blocks (the union of both ranges; a block one of them does
// not see is masked to zero there): each sends its dS^T tile to the other
// (a bulk copy into the partner's shared memory) and computes half of dQ's
// columns over both key blocks, dQ[:, half c] = dS_c K_c[:, half c] +
// dS_partner K_partner[:, half c] (the partner's K half loaded once), so
// that every dQ element gets one atomic per two key blocks. The smem this
// takes comes from a single dO stage, released once dV is issued and done.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/online_softmax.h"
#include "core/work.h"
#include "sm80/bwd_scratch.h"
#include "sm80/tile_ops.cuh"
#include "sm90/bwd_loads.cuh"
#include "sm90/hopper_ops.cuh"
#include "sm90/tile_plan.h"
#include "sm90/wgmma.cuh"

namespace fa2::cuda::sm90 {

template <class T, int kHeadDim, int kStages>
struct BwdSplitKernel {
  static constexpr int kConsumers = 2;
  static constexpr int kClusterCtas = 2;                  // key blocks per dQ atomic
  static constexpr int kBlockM = 64;                      // queries per step
  static constexpr int kBlockN = 64;                      // keys per CTA
  static constexpr int kQueriesPerWg = kBlockM / kConsumers;  // S^T / dP^T
  static constexpr int kColsPerWg = kHeadDim / kConsumers;    // dK / dV
  static constexpr int kDqColsPerWg = kColsPerWg / kClusterCtas;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr bool kDqByTma = false;  // vector atomics from registers
  static constexpr int kDqBoxRows = 0;
  using Loads = BwdLoads<T, kHeadDim, kBlockM, kBlockN, kStages, kConsumers, 1>;
  static constexpr uint32_t kKVBytes = Loads::kKVBytes;
  static constexpr uint32_t kQBytes = Loads::kQBytes;  // Q or dO tile
  static constexpr uint32_t kPartnerKBytes = kKVBytes / kClusterCtas;
  static constexpr uint32_t kPBytes = kBlockN * kBlockM * sizeof(T);   // P^T or dS^T tile
  // [K][V][the partner's K, this CTA's dQ columns][Q x kStages][dO]
  // [P^T x 2][dS^T x 2][the partner's dS^T x 2]
  // [lse and D x kStages][barriers: the
  // loads', then per dS^T buffer: received (full), and the partner done
  // with what this CTA sent (free)]
  static constexpr uint32_t kPartnerKOffset = 2 * kKVBytes;
  static constexpr uint32_t kQOffset = kPartnerKOffset + kPartnerKBytes;
  static constexpr uint32_t kDoOffset = kQOffset + kStages * kQBytes;
  static constexpr uint32_t kPOffset = kDoOffset + kQBytes;
  static constexpr uint32_t kDsOffset = kPOffset + 2 * kPBytes;
  static constexpr uint32_t kDsRecvOffset = kDsOffset + 2 * kPBytes;
  static constexpr uint32_t kStatsOffset = kDsRecvOffset + 2 * kPBytes;
  static constexpr uint32_t kBarrierOffset = kStatsOffset + kStages * Loads::kStatsBytes;
  static constexpr uint32_t kExchangeBarrierOffset = kBarrierOffset + Loads::kBarrierBytes;
  static constexpr int kSmemBytes = kExchangeBarrierOffset + 4 * 8 + 1024;
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = 240;
  static_assert(register_split_fits(kThreads, kProducerRegs, kConsumers, kConsumerRegs),
                "setmaxnreg would oversubscribe the register file");
  static_assert(kHeadDim % 256 == 0 && kDqColsPerWg % 64 == 0 && kBlockM == kStatBlockRows &&
                    kSmemBytes <= kMaxSmemBytes,
                "bad Hopper split backward plan");
};

// kPerSequence: as bwd_kernel's.
template <class T, int kHeadDim, int kStages, bool kPerSequence>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
    bwd_split_kernel(const core::AttnParams p, const BwdScratch scratch,
                     const __grid_constant__ TmaMaps maps) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using K = BwdSplitKernel<T, kHeadDim, kStages>;
  constexpr int kBlockM = K::kBlockM, kBlockN = K::kBlockN;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t smem0 = smem_address(smem_raw);
  const uint32_t sK = (smem0 + 1023u) & ~1023u;  // the swizzle repeats every 1024 bytes
  unsigned char *const smem_base = smem_raw + (sK - smem0);
  const uint32_t sV = sK + K::kKVBytes, sK_partner = sK + K::kPartnerKOffset;
  const uint32_t sQ = sK + K::kQOffset, sdO = sK + K::kDoOffset;
  const uint32_t sP = sK + K::kPOffset, sdS = sK + K::kDsOffset;
  const uint32_t sdS_recv = sK + K::kDsRecvOffset;
  const uint32_t bar_kv = sK + K::kBarrierOffset;
  const typename K::Loads loads{sK, sV, sQ, sdO, sK + K::kStatsOffset, bar_kv};
  // Per dS^T buffer b: recv_full(b), this CTA's copy of the partner's tile
  // landed; send_free(b), the partner is done with the tile sent to it.
  auto recv_full = [&](int b) { return sK + K::kExchangeBarrierOffset + 8u * b; };
  auto send_free = [&](int b) { return sK + K::kExchangeBarrierOffset + 8u * (2 + b); };

  start_after_delta();  // (no kv_done count: a CTA adds dQ for its partner's keys too)
  const int tid = threadIdx.x;
  const uint32_t rank = cluster_rank(), partner = rank ^ 1u;
  const core::BwdItem pair =
      core::bwd_item(p, K::kClusterCtas * kBlockN, blockIdx.x / K::kClusterCtas,
                     sm90_bwd_cache_bytes(kHeadDim));
  const core::BwdItem item{pair.batch, pair.head_kv, int(K::kClusterCtas * pair.n_block + rank)};
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int key0 = item.n_block * kBlockN;
  const core::Mask mask = core::mask_of(p, seq);
  // Both CTAs walk the union of their query blocks.
  const core::BlockRange own = core::query_blocks(mask, item.n_block, kBlockN, kBlockM);
  const core::BlockRange other = core::query_blocks(mask, item.n_block ^ 1, kBlockN, kBlockM);
  const core::BlockRange blocks = core::span_of(own, other);
  const int num_m = blocks.empty() ? 0 : blocks.end - blocks.begin;
  const int num_iters = num_m * p.group_size;
  auto head_of = [&](int it) { return item.head_kv * p.group_size + it / num_m; };
  auto m_block_of = [&](int it) { return blocks.begin + it % num_m; };
  // dK / dV rows of this key block (taken where used: kept live across the
  // loop, the pointers would cost registers it needs).
  auto key_rows = [&](const core::TensorRef &t) {
    return static_cast<T *>(t.data) + core::row_offset(t, item.batch, seq.k_row0, key0, item.head_kv);
  };
  const int keys_valid = core::min_i(seq.seqlen_k - key0, kBlockN);
  if (num_iters == 0) {  // no query sees these keys nor the partner's: both leave here
    write_zero_dk_dv(p, key_rows(p.dk), key_rows(p.dv), keys_valid, tid, K::kThreads);
    return;
  }

  if (tid == 0) {
    for (int b = 0; b < 2; ++b) {
      mbar_init(recv_full(b), 1);                  // this CTA's arming thread
      mbar_init(send_free(b), 4 * K::kConsumers);  // the partner's consumer warps
    }
    loads.init();  // (its fence covers the barriers above)
  }
  cluster_sync();  // both CTAs' barriers exist before either signals the other's

  if (tid < 128) {  // ---------------------------------------------- producer
    regs_release<K::kProducerRegs>();
    if (tid == 0)
      loads.template produce<kPerSequence>(
          p, maps, scratch.block_stats, item, key0, num_iters, m_block_of, head_of,
          K::kPartnerKBytes, [&](uint32_t bar) {  // the partner's K, this CTA's dQ columns
            for (int c = 0; c < kHeadDim / 2 / 64; ++c)
              tma_load_operand<kSeqK, kPerSequence>(
                  maps, item.batch, sK_partner + c * kBlockN * kSwizzleRowBytes, bar,
                  int(rank) * (kHeadDim / 2) + 64 * c, (item.n_block ^ 1) * kBlockN,
                  item.head_kv);
          });
    return;
  }

  // ------------------------------------------------------------ consumers
  regs_claim<K::kConsumerRegs>();
  const int wg = warpgroup_index() - 1, lane = tid % 32, warp = (tid / 32) % 4;
  const int group = Sm80MmaLayout::group(lane), in_quad = Sm80MmaLayout::in_quad(lane);
  // Rows of every accumulator here: keys (S^T, dP^T, dK, dV) or queries
  // (dQ) 16 warp + group + 8 h of the block.
  const int acc_row = 16 * warp + group;
  const int query0 = K::kQueriesPerWg * wg;  // this warpgroup's S^T / dP^T queries
  const int col0 = K::kColsPerWg * wg;       // and dK / dV columns
  // Column chunks col0 / 64.. of the Q and dO tiles (B operands, MN-major).
  const uint32_t chunk_off = (col0 / 64) * kSwizzleRowBytes;
  // This warpgroup's dQ columns, and where they start in K and the partner's K half.
  const int dq_col0 = int(rank) * (kHeadDim / 2) + wg * K::kDqColsPerWg;
  const uint32_t dq_k_own = sK + (dq_col0 / 64) * kBlockN * kSwizzleRowBytes;
  const uint32_t dq_k_partner =
      sK_partner + (wg * K::kDqColsPerWg / 64) * kBlockN * kSwizzleRowBytes;

  float dk_acc[K::kColsPerWg / 2], dv_acc[K::kColsPerWg / 2];
#pragma unroll
  for (int c = 0; c < K::kColsPerWg / 2; ++c) dk_acc[c] = dv_acc[c] = 0.f;
  float st[K::kQueriesPerWg / 2], dpt[K::kQueriesPerWg / 2], dq[K::kDqColsPerWg / 2];
  // Accumulator element (h, c) of S^T / dP^T: key acc_row + 8 h, query
  // query0 + 8 (c / 2) + 2 in_quad + c % 2 (c = 2 j + e).
  auto acc = [](float (&a)[K::kQueriesPerWg / 2], int h, int c) -> float & {
    return a[4 * (c / 2) + 2 * h + c % 2];
  };
  auto release = [&](uint32_t bar) {
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
  };
  const FastExp2 exp2;
  // lse (log2 units) and D of the stage's block, loaded with its Q.
  const float *const stats = reinterpret_cast<const float *>(smem_base + K::kStatsOffset);

  // [key][query] tile, 128-byte rows, 16-byte units ^ key % 8, as b16. Two
  // query units j, j + 1 of both key halves are four 8 x 8 matrices (keys
  // + 8 (i % 2), unit j + i / 2): one stmatrix, this lane addressing row
  // lane % 8 of matrix lane / 8.
  auto store_pair_tile = [&](uint32_t tile, float (&a)[K::kQueriesPerWg / 2]) {
    auto pair = [&](int h, int j) {
      return Element<T>::pack(acc(a, h, 2 * j), acc(a, h, 2 * j + 1));
    };
    static_assert(K::kQueriesPerWg % 16 == 0, "whole pairs of query units");
    const int matrix = lane / 8, row = lane % 8, key = 16 * warp + 8 * (matrix % 2) + row;
#pragma unroll
    for (int j = 0; j < K::kQueriesPerWg / 8; j += 2) {
      const int unit = query0 / 8 + j + matrix / 2;
      stmatrix_x4(tile + key * kSwizzleRowBytes + ((unit ^ row) * 16), pair(0, j), pair(1, j),
                  pair(0, j + 1), pair(1, j + 1));
    }
  };
  const bool sender = tid == 128;  // sends this CTA's dS^T tiles to the partner

  mbar_wait(bar_kv, 0);
  for (int it = 0; it < num_iters; ++it) {
    const int stage = it % kStages, m_block = m_block_of(it), head = head_of(it), buf = it % 2;
    const int row0 = m_block * kBlockM;
    const uint32_t sQ_i = sQ + stage * K::kQBytes;
    const uint32_t sP_i = sP + buf * K::kPBytes, sdS_i = sdS + buf * K::kPBytes;
    const float *lse_i = stats + stage * 2 * kBlockM + query0;  // this warpgroup's queries
    const float *delta_i = lse_i + kStatBlockRows;

    // S^T = K Q^T and dP^T = V dO^T for this warpgroup's queries.
    const uint32_t q_rows = query0 * kSwizzleRowBytes;
    mbar_wait(loads.full(stage), (it / kStages) & 1);
    wgmma_fence();
    wgmma_chain_ss<T, K::kQueriesPerWg, kHeadDim / 16>(st, sK, kBlockN, sQ_i + q_rows, kBlockM);
    wgmma_commit();
    mbar_wait(loads.do_full(0), it & 1);
    wgmma_fence();  // (after a wait loop ptxas wants one before the next wgmma)
    wgmma_chain_ss<T, K::kQueriesPerWg, kHeadDim / 16>(dpt, sV, kBlockN, sdO + q_rows, kBlockM);
    wgmma_commit();

    // P^T (rows past the sequence: lse = D = 0, Q = dO = 0 from the TMA,
    // so finite P and dS = 0; their dQ rows are not added).
    wgmma_wait<1>();
    pin_registers(st);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int c = 0; c < K::kQueriesPerWg / 4; ++c) {
        const int query = 8 * (c / 2) + 2 * in_quad + c % 2;  // within the warpgroup's half
        acc(st, h, c) = core::prob_from_lse(acc(st, h, c), p.scale_log2, lse_i[query], exp2);
      }
    if (core::tile_needs_mask(mask, m_block, item.n_block, kBlockM, kBlockN))  // one test a block
      zero_unseen(mask, st, key0 + acc_row, row0 + query0, in_quad);
    store_pair_tile(sP_i, st);

    // dS^T = P^T (dP^T - D), unscaled.
    wgmma_wait<0>();
    pin_registers(dpt);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int c = 0; c < K::kQueriesPerWg / 4; ++c) {
        const int query = 8 * (c / 2) + 2 * in_quad + c % 2;
        acc(dpt, h, c) = acc(st, h, c) * (acc(dpt, h, c) - delta_i[query]);
      }
    store_pair_tile(sdS_i, dpt);

    // Both halves of P^T and dS^T are in place. They are double-buffered:
    // passing this barrier in block it also means both warpgroups are done
    // with the GEMMs of block it - 1, whose buffers block it + 1 reuses (and
    // the sender's copy of block it - 1 has been read: it waits for that).
    fence_smem_to_async();
    if (sender && it > 0) bulk_wait_read();
    named_barrier_sync(1, 128 * K::kConsumers);
    if (sender) {  // once the partner is done with what went into this buffer last time
      mbar_wait(send_free(buf), ((it / 2) & 1) ^ 1);
      mbar_arrive_expect_tx(recv_full(buf), K::kPBytes);  // what the partner sends this block
      bulk_copy_to_cluster(cluster_address(sdS_recv + buf * K::kPBytes, partner), sdS_i,
                           K::kPBytes, cluster_address(recv_full(buf), partner));
      bulk_commit();
    }
    // dV first (the dO stage is free once it is done), then dQ over both key
    // blocks (its atomics go out while dK runs), then dK.
    wgmma_fence();
    wgmma_chain_ss<T, K::kColsPerWg, kBlockM / 16, 0, 1, true>(  // dV += P^T dO
        dv_acc, sP_i, kBlockN, sdO + chunk_off * kBlockM, kBlockM);
    wgmma_commit();
    mbar_wait(recv_full(buf), (it / 2) & 1);
    wgmma_fence();
    wgmma_chain_ss<T, K::kDqColsPerWg, kBlockN / 16, 1, 1>(  // dQ = dS K ...
        dq, sdS_i, kBlockN, dq_k_own, kBlockN);
    wgmma_chain_ss<T, K::kDqColsPerWg, kBlockN / 16, 1, 1, true>(  // ... + the partner's
        dq, sdS_recv + buf * K::kPBytes, kBlockN, dq_k_partner, kBlockN);
    wgmma_commit();
    wgmma_chain_ss<T, K::kColsPerWg, kBlockM / 16, 0, 1, true>(  // dK += dS^T Q
        dk_acc, sdS_i, kBlockN, sQ_i + chunk_off * kBlockM, kBlockM);
    wgmma_commit();
    wgmma_wait<2>();
    release(loads.do_empty(0));
    wgmma_wait<1>();
    pin_registers(dq);
    // The partner's tile is read; it waits for that before reusing the buffer
    // (in block it + 2: none after the last two, when it may have left).
    if (it + 2 < num_iters) {
      __syncwarp();
      if (lane == 0) mbar_arrive_remote(cluster_address(send_free(buf), partner));
    }

    // dQ goes out in 128-byte pieces (RowPieces; H200, ncu: with 8-byte
    // atomics the L2's crossbar input was 81% busy; 292 TFLOP/s at 16k
    // tokens, 339 with 16-byte ones, 348 in 128-byte pieces, 415 without
    // atomics). One 64-bit address per block; rows and columns are small
    // offsets from it, tested only where the block reaches past the sequence
    // or the head dim is below 256 (the 64-bit index per atomic cost ~12
    // instructions).
    const RowPieces pieces(lane);
    const int pair_row0 = row0 + (acc_row & ~1);  // the even row of the pair, h = 0
    float *const dq_pair = scratch.dq_accum +
                           core::row_stat_index(p, item.batch, head, pair_row0) * p.head_dim +
                           dq_col0 + pieces.lane_col;
    auto add_dq = [&](auto checked) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float *const dq_rows = dq_pair + 8 * h * p.head_dim;
#pragma unroll
        for (int k = 0; k < K::kDqColsPerWg / 32; ++k) {
          float even_row[4], odd_row[4];
          pieces.gather(&dq[4 * (4 * k) + 2 * h], 4, even_row, odd_row);
          const int query = pair_row0 + 8 * h;
          const bool col_ok =
              !decltype(checked)::value || dq_col0 + 32 * k + pieces.lane_col < p.head_dim;
          if (col_ok && (!decltype(checked)::value || query < seq.seqlen_q))
            red_add_v4_f32(dq_rows + 32 * k, even_row[0], even_row[1], even_row[2], even_row[3]);
          if (col_ok && (!decltype(checked)::value || query + 1 < seq.seqlen_q))
            red_add_v4_f32(dq_rows + p.head_dim + 32 * k, odd_row[0], odd_row[1], odd_row[2],
                           odd_row[3]);
        }
      }
    };
    if (row0 + kBlockM <= seq.seqlen_q && p.head_dim == kHeadDim)
      add_dq(std::false_type{});
    else
      add_dq(std::true_type{});
    wgmma_wait<0>();
    pin_registers(dk_acc);
    pin_registers(dv_acc);
    mbar_arrive(loads.empty(stage));
  }
  if (sender) bulk_wait_read();  // the last tile sent has left this CTA's shared memory

  // Epilogue: dK and dV (rows are keys) through the Q stages, free once
  // both warpgroups are past their last GEMM: warpgroup w takes stage w.
  static_assert(kStages >= K::kConsumers && K::kQBytes >= 2 * 64 * K::kColsPerWg * sizeof(T),
                "the epilogue's tiles fit the Q stages");
  store_dk_dv<T, K::kColsPerWg>(dk_acc, dv_acc, smem_base + K::kQOffset + wg * K::kQBytes,
                                acc_row, key_rows(p.dk) + col0, p.dk.stride_seq,
                                key_rows(p.dv) + col0, p.dv.stride_seq, keys_valid,
                                p.head_dim - col0, p.scale, 128 * K::kConsumers);
#endif  // __CUDA_ARCH_FEAT_SM90_ALL: other targets get an empty body, never launched
}

}  // namespace fa2::cuda::sm90
