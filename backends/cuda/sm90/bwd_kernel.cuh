// FlashAttention-2 backward on Hopper: the five GEMMs on wgmma, Q / dO
// streamed by the TMA, warp specialisation.
//
// One CTA per (batch, kv head, key block) (core::bwd_item), like the sm80
// kernel: K and V of the block stay in shared memory, and the CTA walks
// every query head of the GQA group and every query block that sees its
// keys (core::query_blocks), so dK and dV stay in registers and need no
// atomics. Warpgroup 0 produces: one thread issues the TMA loads (K, V
// once; Q, dO and the block's lse / D per query block through a kStages
// ring), another warp the dQ reduce-adds (below). Each consumer
// warpgroup owns 64 keys and, per query block, computes
//   S^T  = K Q^T,   dP^T = V dO^T                 (from shared memory)
//   P^T  = exp2(S^T c - lse),  dS^T = P^T (dP^T - D)   (in registers)
//   dV  += P^T dO,  dK += dS^T Q                  (A from registers)
// where both warpgroups' dS^T also go to shared memory (swizzled as the
// TMA would) so that each computes half of dQ = dS K (half the columns of
// a 64-query block, half the rows of a 128-query one), issued before dK;
// those go through shared memory into one TMA reduce-add per 32 columns
// on the fp32 accumulator while dK runs (no per-thread atomics; rows past
// the sequence are skipped by the TMA), issued by the producer's second
// warp, so that no consumer waits for the TMA to read the tile.
#pragma once

#include <cstdint>

#include "core/online_softmax.h"
#include "core/work.h"
#include "sm80/bwd_scratch.h"
#include "sm80/tile_ops.cuh"
#include "sm90/bwd_loads.cuh"
#include "sm90/hopper_ops.cuh"
#include "sm90/tile_plan.h"
#include "sm90/wgmma.cuh"

namespace fa2::cuda::sm90 {

template <class T, int kHeadDim, int kBlockM, int kConsumers, int kStages>
struct BwdKernel {
  static constexpr int kBlockN = 64 * kConsumers;
  static constexpr int kClusterCtas = 1;  // (bwd_split_kernel.cuh: pairs)
  static constexpr int kThreads = 128 * (kConsumers + 1);
  // dQ of a block: with 64 queries each warpgroup takes half the columns;
  // with 128 its own 64 queries and every column.
  static constexpr bool kDqByRows = kBlockM == 128;
  static constexpr int kDqCols = kDqByRows ? kHeadDim : kHeadDim / kConsumers;
  static constexpr bool kDqByTma = true;  // (bwd_split_kernel.cuh: atomics)
  static constexpr int kDqBoxRows = 64;    // rows of one TMA reduce-add
  static_assert(!kDqByRows || kHeadDim == 64, "dQ by rows: one 64-column chunk of K");
  using Loads = BwdLoads<T, kHeadDim, kBlockM, kBlockN, kStages, kConsumers>;
  static constexpr uint32_t kKVBytes = Loads::kKVBytes;
  static constexpr uint32_t kQBytes = Loads::kQBytes;  // Q or dO tile
  static constexpr uint32_t kDsBytes = kBlockN * kBlockM * sizeof(T);  // dS^T tile
  static constexpr uint32_t kDqBytes = kBlockM * kHeadDim * 4;         // fp32 dQ tile
  // [K][V][Q x kStages][dO x kStages][dS^T x 2][dQ]
  // [lse and D x kStages][barriers]
  static constexpr uint32_t kQOffset = 2 * kKVBytes;
  static constexpr uint32_t kDoOffset = kQOffset + kStages * kQBytes;
  static constexpr uint32_t kDsOffset = kDoOffset + kStages * kQBytes;
  static constexpr uint32_t kDqOffset = kDsOffset + 2 * kDsBytes;
  static constexpr uint32_t kStatsOffset = kDqOffset + kDqBytes;
  static constexpr uint32_t kBarrierOffset = kStatsOffset + kStages * Loads::kStatsBytes;
  // After the loads' barriers: per consumer warpgroup, dq_full (its 128
  // threads have stored the block's dQ tile) and dq_free (the writer's
  // reduce-add has read it).
  static constexpr uint32_t kDqBarrierOffset = kBarrierOffset + Loads::kBarrierBytes;
  static constexpr int kSmemBytes = kDqBarrierOffset + 2 * 8 * kConsumers + 1024;
  static_assert(kSmemBytes <= kMaxSmemBytes, "over the H100 / H200's shared memory per block");
  // 128-query blocks need 240 registers a consumer thread (232 spilled 56
  // bytes), so the producer gets 24; 64-query blocks keep 40 (24 spilled in
  // an earlier producer loop).
  static constexpr int kProducerRegs = kBlockM == 128 ? 24 : 40;
  static constexpr int kConsumerRegs = kBlockM == 128 ? 240 : 232;
  // With 128 queries P^T and dS^T are packed once both accumulators are
  // final (their 64 fp32 a thread each next to the packed fragments would
  // not fit), and dV issued after both.
  static constexpr bool kPackAfterDp = kBlockM == 128;
  static_assert(register_split_fits(kThreads, kProducerRegs, kConsumers, kConsumerRegs),
                "setmaxnreg would oversubscribe the register file");
  static_assert(kConsumers == 2 && (kBlockM == 64 || kBlockM == 128) && kHeadDim % 64 == 0 &&
                    kDqCols % 32 == 0,
                "bad Hopper backward tile plan");
  static_assert(kBlockM % kStatBlockRows == 0 && kStatHeadRows % kBlockM == 0,
                "a query block reads whole block_stats pairs of its own head");
};

// kPerSequence: a varlen call (TmaMaps::sequences); its own instantiation,
// so that the fixed-length kernels keep their code (a run-time branch to a
// second producer loop cost the d64 backward 2%, H200 2026-12-02).
template <class T, int kHeadDim, int kBlockM, int kConsumers, int kStages, bool kPerSequence>
__global__ void __launch_bounds__(128 * (kConsumers + 1), 1)
    bwd_kernel(const core::AttnParams p, const BwdScratch scratch,
               const __grid_constant__ TmaMaps maps) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using K = BwdKernel<T, kHeadDim, kBlockM, kConsumers, kStages>;
  constexpr int kBlockN = K::kBlockN;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t smem0 = smem_address(smem_raw);
  const uint32_t sK = (smem0 + 1023u) & ~1023u;  // the swizzle repeats every 1024 bytes
  unsigned char *const smem_base = smem_raw + (sK - smem0);
  const uint32_t sV = sK + K::kKVBytes;
  const uint32_t sQ = sK + K::kQOffset, sdO = sK + K::kDoOffset, sdS = sK + K::kDsOffset;
  const uint32_t sdQ = sK + K::kDqOffset;  // 32-column chunks of [kBlockM][128 bytes]
  const uint32_t bar_kv = sK + K::kBarrierOffset;
  const typename K::Loads loads{sK, sV, sQ, sdO, sK + K::kStatsOffset, bar_kv};

  start_after_delta();
  const int tid = threadIdx.x;
  const core::BwdItem item = core::bwd_item(p, kBlockN, blockIdx.x, sm90_bwd_cache_bytes(kHeadDim));
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int key0 = item.n_block * kBlockN;
  const core::Mask mask = core::mask_of(p, seq);
  const core::BlockRange blocks = core::query_blocks(mask, item.n_block, kBlockN, kBlockM);
  const int num_m = blocks.empty() ? 0 : blocks.end - blocks.begin;
  const int num_iters = num_m * p.group_size;
  // Iteration it: query head head_kv * group + it / num_m, query block
  // blocks.begin + it % num_m.
  auto head_of = [&](int it) { return item.head_kv * p.group_size + it / num_m; };
  auto m_block_of = [&](int it) { return blocks.begin + it % num_m; };
  T *dk = static_cast<T *>(p.dk.data) +
          core::row_offset(p.dk, item.batch, seq.k_row0, key0, item.head_kv);
  T *dv = static_cast<T *>(p.dv.data) +
          core::row_offset(p.dv, item.batch, seq.k_row0, key0, item.head_kv);
  const int keys_valid = core::min_i(seq.seqlen_k - key0, kBlockN);
  if (num_iters == 0) {  // no query sees these keys
    write_zero_dk_dv(p, dk, dv, keys_valid, tid, K::kThreads);
    if (sm90_bwd_counts_keys(kHeadDim) && tid == 0) count_keys_done(p, scratch, item, keys_valid);
    return;
  }

  const uint32_t bar_dq = sK + K::kDqBarrierOffset;
  auto dq_full = [&](int w) { return bar_dq + 8u * w; };
  auto dq_free = [&](int w) { return bar_dq + 8u * (kConsumers + w); };
  // Warpgroup w's dQ: rows from dq_row0_of(w) of the block, columns from
  // dq_col0_of(w) (those of K, read MN-major, within the 64-column chunks).
  auto dq_row0_of = [](int w) { return K::kDqByRows ? 64 * w : 0; };
  auto dq_col0_of = [](int w) { return K::kDqByRows ? 0 : w * K::kDqCols; };
  if (tid == 0) {
    loads.init();
    for (int w = 0; w < kConsumers; ++w) {
      mbar_init(dq_full(w), 128);
      mbar_init(dq_free(w), 1);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (tid < 128) {  // ---------------------------------------------- producer
    regs_release<K::kProducerRegs>();
    if (tid == 0)
      loads.template produce<kPerSequence>(p, maps, scratch.block_stats, item, key0, num_iters,
                                           m_block_of, head_of);
    // The dQ writer, a warp of its own (FlashAttention-3's arrangement): per
    // block, each consumer warpgroup's tile once stored goes to the fp32
    // accumulator in one TMA reduce-add per 32 columns; once the TMA has
    // read it the tile is free again. (Issued by the consumers' warp 0, the
    // reduce-adds and the wait for their reads kept the warpgroup's other
    // warps at the next barrier: 10% of the d128 samples, ncu 2026-11-30.)
    if (tid == 32) {
      for (int it = 0; it < num_iters; ++it) {
        const int row0 = m_block_of(it) * kBlockM, head = head_of(it);
        for (int w = 0; w < kConsumers; ++w) {
          mbar_wait(dq_full(w), it & 1);
          for (int c = dq_col0_of(w) / 32; c < (dq_col0_of(w) + K::kDqCols) / 32; ++c)
            tma_reduce_add_4d(maps.dq_accum,
                              sdQ + (c * kBlockM + dq_row0_of(w)) * kSwizzleRowBytes, 32 * c,
                              row0 + dq_row0_of(w), head, item.batch);
        }
        bulk_commit();
        bulk_wait_read();
        for (int w = 0; w < kConsumers; ++w) mbar_arrive(dq_free(w));
      }
      bulk_wait();  // every reduce-add complete before the CTA exits
      if constexpr (sm90_bwd_counts_keys(kHeadDim)) {  // and before the conversion reads them
        fence_async_to_global();
        count_keys_done(p, scratch, item, keys_valid);
      }
    }
    return;
  }

  // ------------------------------------------------------------ consumers
  regs_claim<K::kConsumerRegs>();
  const int wg = warpgroup_index() - 1, lane = tid % 32, warp = (tid / 32) % 4;
  const int group = Sm80MmaLayout::group(lane), in_quad = Sm80MmaLayout::in_quad(lane);
  const int key_row = 64 * wg + 16 * warp + group;  // + 8 h: this thread's keys in the block
  const uint32_t sK_wg = sK + 64 * wg * kSwizzleRowBytes, sV_wg = sV + 64 * wg * kSwizzleRowBytes;
  const int dq_row0 = dq_row0_of(wg), dq_col0 = dq_col0_of(wg);
  const uint32_t sK_dq = sK + (dq_col0 / 64) * kBlockN * kSwizzleRowBytes + (dq_col0 % 64) * 2;

  float dk_acc[kHeadDim / 2], dv_acc[kHeadDim / 2];
#pragma unroll
  for (int c = 0; c < kHeadDim / 2; ++c) dk_acc[c] = dv_acc[c] = 0.f;
  float st[kBlockM / 2], dpt[kBlockM / 2], dq[K::kDqCols / 2];
  uint32_t pt_frag[kBlockM / 16][4], dst_frag[kBlockM / 16][4];
  // Accumulator element (h, j, e) = row key_row + 8 h, column 8 j + 2 in_quad + e.
  auto acc = [](float (&a)[kBlockM / 2], int h, int c) -> float & {
    return a[4 * (c / 2) + 2 * h + c % 2];  // c = 2 j + e
  };
  // k-step kk of an A fragment: accumulator columns 4 kk .. 4 kk + 3.
  auto pack_step = [&](uint32_t (&frag)[kBlockM / 16][4], float (&a)[kBlockM / 2], int kk) {
    frag[kk][0] = Element<T>::pack(acc(a, 0, 4 * kk), acc(a, 0, 4 * kk + 1));
    frag[kk][1] = Element<T>::pack(acc(a, 1, 4 * kk), acc(a, 1, 4 * kk + 1));
    frag[kk][2] = Element<T>::pack(acc(a, 0, 4 * kk + 2), acc(a, 0, 4 * kk + 3));
    frag[kk][3] = Element<T>::pack(acc(a, 1, 4 * kk + 2), acc(a, 1, 4 * kk + 3));
  };
  auto pack = [&](uint32_t (&frag)[kBlockM / 16][4], float (&a)[kBlockM / 2]) {
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) pack_step(frag, a, kk);
  };
  const FastExp2 exp2;
  // Where accumulator column c's query finds its lse (D is kStatBlockRows
  // further) in the block's stats: one pair per kStatBlockRows queries.
  auto stat_offset = [&](int c) {
    const int base = 8 * (c / 2);  // a multiple of 8: the pair is known at compile time
    return (base / kStatBlockRows) * 2 * kStatBlockRows + base % kStatBlockRows + 2 * in_quad +
           c % 2;
  };
  // lse (log2 units) and D of the stage's block, loaded with its Q.
  const float *const stats = reinterpret_cast<const float *>(smem_base + K::kStatsOffset);

  // The epilogue of a block's dQ: registers to the tile in shared memory,
  // swizzled like the TMA's 128-byte boxes, once the writer's reduce-add of
  // the block before has read it; the writer (producer warp 1) then adds it
  // to the fp32 accumulator while the block's dK is on the tensor cores. (Every wgmma is
  // waited for within its iteration: ptxas serialises all of them when one
  // is left running across the loop's back edge, warning C7514.)
  // Rows are queries dq_row0 + 16 warp + group + 8 h of the block (row % 8
  // == group), columns dq_col0 + 8 j + 2 in_quad, dq_col0 a multiple of 32.
  // A half-warp's 8-byte stores of one j would cover only 4 of a row's 8
  // swizzled 16-byte chunks (two-way bank conflicts: 135M extra wavefronts
  // at d128 s16k, ncu 2026-11-29), so odd groups store column block j ^ 2
  // when the even ones store j: all 8 chunks, every bank once.
  const bool odd_group = group % 2 == 1;
  const uint32_t sdQ_thread = sdQ + (dq_col0 / 32) * kBlockM * kSwizzleRowBytes +
                              (dq_row0 + 16 * warp + group) * kSwizzleRowBytes + (in_quad % 2) * 8;
  const uint32_t chunk_xor = group ^ (odd_group ? 4u : 0u);  // 2 (j ^ 2) = 2 j ^ 4
  auto store_dq = [&](int it) {
    if (it > 0) mbar_wait(dq_free(wg), (it - 1) & 1);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < K::kDqCols / 8; ++j) {
        const int j_odd = j ^ 2;  // same 32-column box
        const uint32_t chunk16 = (2 * (j % 4) + in_quad / 2) ^ chunk_xor;
        st_shared_v2_f32(sdQ_thread + (j / 4) * kBlockM * kSwizzleRowBytes +
                             8 * h * kSwizzleRowBytes + chunk16 * 16,
                         odd_group ? dq[4 * j_odd + 2 * h] : dq[4 * j + 2 * h],
                         odd_group ? dq[4 * j_odd + 2 * h + 1] : dq[4 * j + 2 * h + 1]);
      }
    fence_smem_to_async();  // each thread's stores, before the TMA reads them
    mbar_arrive(dq_full(wg));
  };

  mbar_wait(bar_kv, 0);
  for (int it = 0; it < num_iters; ++it) {
    const int stage = it % kStages, m_block = m_block_of(it);
    const int row0 = m_block * kBlockM;
    const uint32_t sQ_i = sQ + stage * K::kQBytes, sdO_i = sdO + stage * K::kQBytes;
    const uint32_t sdS_i = sdS + (it % 2) * K::kDsBytes;
    // lse, then D, of each kStatBlockRows queries of the block.
    const float *lse_i = stats + stage * 2 * kBlockM;
    const float *delta_i = lse_i + kStatBlockRows;
    mbar_wait(loads.full(stage), (it / kStages) & 1);

    // S^T = K Q^T and dP^T = V dO^T, two groups.
    wgmma_fence();
    wgmma_chain_ss<T, kBlockM, kHeadDim / 16>(st, sK_wg, kBlockN, sQ_i, kBlockM);
    wgmma_commit();
    wgmma_chain_ss<T, kBlockM, kHeadDim / 16>(dpt, sV_wg, kBlockN, sdO_i, kBlockM);
    wgmma_commit();

    // P^T while dP^T is still on the tensor cores. Rows past the sequence
    // (lse = D = 0, Q = dO = 0 from the TMA) get finite P and dS = 0: they
    // add nothing to dV, dK, and their dQ rows are not stored.
    wgmma_wait<1>();
    pin_registers(st);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int c = 0; c < kBlockM / 4; ++c)
        acc(st, h, c) =
            core::prob_from_lse(acc(st, h, c), p.scale_log2, lse_i[stat_offset(c)], exp2);
    // The mask in a loop of its own: unmasked blocks pay one test, not one
    // an element.
    if (core::tile_needs_mask(mask, m_block, item.n_block, kBlockM, kBlockN))
      zero_unseen(mask, st, key0 + key_row, row0, in_quad);
    if constexpr (!K::kPackAfterDp) {
      pack(pt_frag, st);
      wgmma_fence();
      wgmma_chain_rs<T, kHeadDim, kBlockM / 16>(dv_acc, pt_frag, sdO_i, kBlockM);  // dV += P^T dO
      wgmma_commit();
    }

    // dS^T = P^T (dP^T - D), unscaled: to registers (dK) and shared memory (dQ).
    wgmma_wait<K::kPackAfterDp ? 0 : 1>();
    pin_registers(dpt);
    // One k-step at a time, so that P^T and dP^T die as their fragments fill.
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int c = 4 * kk; c < 4 * kk + 4; ++c)
          acc(dpt, h, c) = acc(st, h, c) * (acc(dpt, h, c) - delta_i[stat_offset(c)]);
      if constexpr (K::kPackAfterDp) pack_step(pt_frag, st, kk);
      pack_step(dst_frag, dpt, kk);
    }
    // [key][query]: 64-query chunks of 128-byte rows, 16-byte units ^ key % 8.
    // Fragment k-step kk holds the 8 x 8 matrices (keys + 8 (i % 2), queries
    // 16 kk + 8 (i / 2)); this lane addresses row lane % 8 of matrix lane / 8.
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) {
      const int matrix = lane / 8, row = lane % 8;
      const int key = 64 * wg + 16 * warp + 8 * (matrix % 2) + row, unit = 2 * kk + matrix / 2;
      stmatrix_x4(sdS_i + ((unit / 8) * kBlockN + key) * kSwizzleRowBytes + ((unit % 8) ^ row) * 16,
                  dst_frag[kk][0], dst_frag[kk][1], dst_frag[kk][2], dst_frag[kk][3]);
    }
    if constexpr (K::kPackAfterDp) {
      wgmma_fence();
      wgmma_chain_rs<T, kHeadDim, kBlockM / 16>(dv_acc, pt_frag, sdO_i, kBlockM);  // dV += P^T dO
      wgmma_commit();
    }

    // dQ = dS K over both warpgroups' keys, then dK += dS^T Q, so that dQ's
    // epilogue runs while dK is on the tensor cores. dS^T is
    // double-buffered: the barrier of query block it also means both
    // warpgroups are done with the dQ of block it - 1, whose buffer block
    // it + 1 reuses.
    fence_smem_to_async();
    named_barrier_sync(1, 128 * kConsumers);
    wgmma_fence();
    wgmma_chain_ss<T, K::kDqCols, kBlockN / 16, 1, 1>(
        dq, sdS_i + dq_row0 / 64 * kBlockN * kSwizzleRowBytes, kBlockN, sK_dq, kBlockN);
    wgmma_commit();
    wgmma_chain_rs<T, kHeadDim, kBlockM / 16>(dk_acc, dst_frag, sQ_i, kBlockM);  // dK += dS^T Q
    wgmma_commit();
    wgmma_wait<1>();
    pin_registers(dq);
    store_dq(it);
    wgmma_wait<0>();
    pin_registers(dk_acc);
    pin_registers(dv_acc);
    pin_registers(pt_frag);
    pin_registers(dst_frag);
    mbar_arrive(loads.empty(stage));
  }

  // Epilogue: dK and dV (rows are keys) through the Q and dO stages, free
  // once both warpgroups are past their last GEMM: warpgroup 0 takes Q's,
  // 1 dO's.
  static_assert(kStages * K::kQBytes >= 2 * 64 * kHeadDim * sizeof(T),
                "the epilogue's tiles fit the Q / dO stages");
  store_dk_dv<T, kHeadDim>(dk_acc, dv_acc, smem_base + (wg == 0 ? K::kQOffset : K::kDoOffset),
                           key_row % 64, dk + 64 * wg * p.dk.stride_seq, p.dk.stride_seq,
                           dv + 64 * wg * p.dv.stride_seq, p.dv.stride_seq, keys_valid - 64 * wg,
                           p.head_dim, p.scale, 128 * kConsumers);
#endif  // __CUDA_ARCH_FEAT_SM90_ALL: other targets get an empty body, never launched
}

}  // namespace fa2::cuda::sm90
