// FlashAttention-2 backward on sm80 Tensor Cores.
//
// One CTA per (batch, kv head, key block) (core::bwd_item). K and V of the
// block stay in shared memory; the CTA walks every query head of the GQA
// group and every query block that sees its keys (core::query_blocks).
// Per query block:
//   S = Q K^T, dP = dO V^T            warp tiles: queries x 32 keys
//   P = exp2(S c - lse), dS = P (dP - D)  (D = rowsum(dO * O), precomputed)
//   P, dS -> shared memory (b16)
//   dV += P^T dO, dK += dS^T Q        warp tiles: 32 keys x head-dim columns
//   dQ  = dS K -> fp32 accumulator (atomics)  warp tiles: queries x columns
// Each GEMM has its own warp layout (FlashAttention-2's): every warp tile
// spans two or more 16-row slabs and 32+ columns, so each ldmatrix fragment
// feeds several mma. A layout where each warp owned 16 keys x all of d (the
// previous kernel) re-read all of Q and dO per warp and needed 255
// registers: shared-memory bandwidth, not the Tensor Cores, bounded it.
// Every k loop is software-pipelined (warp_gemm.cuh): with two warps per
// scheduler, nothing else hides the ldmatrix latency between k steps.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/online_softmax.h"
#include "core/work.h"
#include "dependent_launch.cuh"
#include "sm80/bwd_scratch.h"
#include "sm80/smem_tile.cuh"
#include "sm80/tile_plan.h"
#include "sm80/warp_gemm.cuh"

namespace fa2::cuda {

template <class T, int kHeadDim, int kBlockM, int kBlockN, int kDSplit, int kStages,
          int kDoStages>
struct BwdKernel {
  static constexpr int kSlabKeys = 32;  // keys per warp, in S / dP and in dK / dV
  static constexpr int kKeyWarps = kBlockN / kSlabKeys;
  static constexpr int kWarps = kKeyWarps * kDSplit;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kSRows = kBlockM / kDSplit;    // S / dP queries per warp
  static constexpr int kDCols = kHeadDim / kDSplit;   // dK / dV columns per warp
  // dQ: 32-query warp tiles where the columns then split into multiples of
  // 16, else 16-query tiles (e.g. d96 with 8 warps).
  static constexpr int kDqRowWarps =
      (kHeadDim * (kBlockM / 32)) % (16 * kWarps) == 0 ? kBlockM / 32 : kBlockM / 16;
  static constexpr int kDqRows = kBlockM / kDqRowWarps;
  static constexpr int kDqCols = kHeadDim / (kWarps / kDqRowWarps);
  static_assert(kBlockN % kSlabKeys == 0 && kSRows % 16 == 0 && kDCols % 16 == 0 &&
                    kWarps % kDqRowWarps == 0 && kDqRows % 16 == 0 && kDqCols % 16 == 0 &&
                    (kStages == 1 || kStages == 2) &&
                    (kDoStages == 1 || (kDoStages == 2 && kStages == 2)),
                "bad backward tile plan");
  // Padded tiles: XorTiles (smem_tile.cuh) measured nothing here. H200
  // through FA2_CUDA_PATH=sm80, 2026-12-02 ~10:19 / ~10:33, d64 and d256
  // -0.7..+0.8% at 1k-16k; ~11:07, with unsigned offsets, -1.3..+0.1%; at
  // d128 they spilled 32 bytes.
  using KVTile = SmemTile<kBlockN, kHeadDim>;
  using QTile = SmemTile<kBlockM, kHeadDim>;
  using PTile = SmemTile<kBlockM, kBlockN>;  // P and dS: [query][key]
  // K, V, kStages Q tiles, kDoStages dO tiles, P, dS, then lse and D for
  // two query blocks (the next one's are written while the current is read).
  static constexpr int kStatsOffset =
      2 * KVTile::kBytes + (kStages + kDoStages) * QTile::kBytes + 2 * PTile::kBytes;
  static constexpr int kSmemBytes = kStatsOffset + int(sizeof(float)) * 2 * 2 * kBlockM;
  // Q / dO tiles wholly inside the sequence skip load_tile_async's per-row
  // test at d256, as the forward's K / V: H200 through FA2_CUDA_PATH=sm80,
  // 2026-11-30 04:55, +1..2% at 1k-16k; at d192 -1..-2%.
  static constexpr bool kWholeTileLoads = kHeadDim == 256;
  // One stage: the next Q / dO copies go out a few per k step of dQ's GEMM
  // instead of in one burst before it (the forward's kSpreadV). H200 through
  // FA2_CUDA_PATH=sm80, 2026-12-01 22:39: d256 +1..2% at 1k-16k; d192 -5%.
  static constexpr bool kSpreadLoads = kStages == 1 && kHeadDim == 256;
  // lse / D copies in load_floats_async's constant-trip loop. H200 through
  // FA2_CUDA_PATH=sm80, against the plain loop: 2026-12-02 00:29, d64
  // +1.5..2.5% at 1k-16k, d256 +0..1%, d128 -1% at every point; 00:53,
  // this choice, d64 +2..3%, d128 / d256 within 1% (d32 and d192 share
  // d64's and d256's plans; d96 d128's).
  static constexpr bool kConstantTripStats = kHeadDim <= 64 || kHeadDim >= 192;
  // P and dS go to shared memory by stmatrix on sm_90 (store_acc): at d128
  // 8 instructions a warp an iteration instead of 32 4-byte stores.
  // H100 through FA2_CUDA_PATH=sm80, CUDA events, against the stores:
  // 2026-12-06 ~10:42, d256 +0.3..0.7% at 1k-16k, d128 -0.4..+1.3%, d64
  // 0..-1.5% (its main loop came out of ptxas in another order); ~10:52,
  // d256 +0.6..1.6%, d128 -0.4..+1%; sustained d256 8k +0.5%. The same
  // plans write dK / dV so in the epilogue (after which ptxas laid out the
  // d128 main loop differently): 2026-12-06 ~14:20, three runs each, d128
  // +1.3..2.6% at 512-16k, d192 / d256 -0.4..+0.4%; sustained d128 8k
  // +1.6..3% (d64 -2% at 2k-8k with it: its loop, again).
  static constexpr bool kStoreMatrix = kHeadDim >= 128;
};

// Writes a [slabs x 16][kN] accumulator to a b16 tile at (row0, col0):
// 4-byte stores of element pairs or, with kMatrix on sm_90, one stmatrix a
// 16 x 16 block (tile_put_acc).
template <class T, class Tile, int kSlabs, int kN, bool kMatrix>
__device__ inline void store_acc(uint32_t tile, int row0, int col0,
                                 const float (&acc)[kSlabs][2][kN / 4], int lane) {
  static_assert(std::is_same_v<Tile, SmemTile<Tile::kRows, Tile::kCols>>,
                "row offsets from a lane base: padded tiles only");
#if __CUDA_ARCH__ >= 900
  if constexpr (kMatrix) {
    tile_put_acc<T, Tile, kSlabs, kN>(tile, row0, col0, acc, lane);
    return;
  }
#endif
  const uint32_t base =
      Tile::addr(tile, row0 + Sm80MmaLayout::group(lane), col0 + 2 * Sm80MmaLayout::in_quad(lane));
#pragma unroll
  for (int s = 0; s < kSlabs; ++s)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int t = 0; t < kN / 8; ++t)
        st_shared_b32(base + 2 * Tile::offset(16 * s + 8 * h, 8 * t),
                      Element<T>::pack(acc[s][h][2 * t], acc[s][h][2 * t + 1]));
}

template <class T, int kHeadDim, int kBlockM, int kBlockN, int kDSplit, int kStages,
          int kDoStages>
__global__ void __launch_bounds__(kBlockN / 32 * kDSplit * 32)
    bwd_kernel(const core::AttnParams p, const BwdScratch scratch) {
  using K = BwdKernel<T, kHeadDim, kBlockM, kBlockN, kDSplit, kStages, kDoStages>;
  using KVTile = typename K::KVTile;
  using QTile = typename K::QTile;
  using PTile = typename K::PTile;
  constexpr int kSSlabs = K::kSRows / 16, kKSlabs = K::kSlabKeys / 16, kDqSlabs = K::kDqRows / 16;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const uint32_t sK = smem_address(smem_raw);
  const uint32_t sV = sK + KVTile::kBytes;
  const uint32_t sQ = sV + KVTile::kBytes;             // kStages tiles
  const uint32_t sdO = sQ + kStages * QTile::kBytes;   // kDoStages tiles
  const uint32_t sP = sdO + kDoStages * QTile::kBytes;
  const uint32_t sdS = sP + PTile::kBytes;
  // lse (as the forward wrote it, natural log) and D of two query blocks,
  // loaded with cp.async alongside Q.
  const uint32_t sStats = sK + K::kStatsOffset;
  const float *sLse = reinterpret_cast<const float *>(smem_raw + K::kStatsOffset);
  const float *sDelta = sLse + 2 * kBlockM;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const core::BwdItem item = core::bwd_item(p, kBlockN, blockIdx.x, kSm80BwdCacheBytes);
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int key0 = item.n_block * kBlockN;
  if (key0 >= seq.seqlen_k) return;
  const core::Mask mask = core::mask_of(p, seq);
  const core::BlockRange blocks = core::query_blocks(mask, item.n_block, kBlockN, kBlockM);
  const int num_m = blocks.empty() ? 0 : blocks.end - blocks.begin;
  const int num_iters = num_m * p.group_size;

  const T *k = static_cast<const T *>(p.k.data) +
               core::row_offset(p.k, item.batch, seq.k_row0, key0, item.head_kv);
  const T *v = static_cast<const T *>(p.v.data) +
               core::row_offset(p.v, item.batch, seq.k_row0, key0, item.head_kv);
  load_tile_async<KVTile, K::kThreads>(sK, k, p.k.stride_seq, seq.seqlen_k - key0, p.head_dim, tid);
  load_tile_async<KVTile, K::kThreads>(sV, v, p.v.stride_seq, seq.seqlen_k - key0, p.head_dim, tid);

  // Iteration i: query head group_first + i / num_m, query block
  // blocks.begin + i % num_m, stepped to rather than divided (the division
  // took ~40 instructions an iteration, ncu 2026-11-30). Q (with its lse
  // and D) and dO are loaded separately: their buffers free up at different
  // points of an iteration.
  struct Step {
    int m_block, head_q;
  };
  auto step_after = [&](Step at) {
    return at.m_block + 1 < blocks.end ? Step{at.m_block + 1, at.head_q}
                                       : Step{blocks.begin, at.head_q + 1};
  };
  auto load_stats = [&](int i, Step at) {
    if (i >= num_iters) return;
    const int row0 = at.m_block * kBlockM, head_q = at.head_q;
    const int64_t index = core::row_stat_index(p, item.batch, head_q, row0);
    // Rows past the sequence read lse 0 and D 0 (zero-filled, as are their
    // Q and dO rows): their S is 0 and p 1, but dP and D are 0, so their dS
    // is 0 and P^T dO adds 0; their dQ is never written. (A +inf fill
    // would cost the main loop registers it does not have.)
    load_floats_async<kBlockM, K::kThreads, K::kConstantTripStats>(
        sStats + 4 * (i % 2) * kBlockM, p.lse + index, seq.seqlen_q - row0, tid);
    load_floats_async<kBlockM, K::kThreads, K::kConstantTripStats>(
        sStats + 4 * (2 + i % 2) * kBlockM, scratch.delta + index, seq.seqlen_q - row0, tid);
  };
  // The first row of query block `at` in Q or dO, from the strides each
  // time. Offsets stepped with the blocks instead (25 instructions fewer an
  // iteration at d64) lost 2-4.5%: H100 through FA2_CUDA_PATH=sm80, d64
  // 8k-16k, 2026-12-07 00:19 (NOTES.md).
  auto block_rows = [&](const core::TensorRef &t, Step at) {
    return static_cast<const T *>(t.data) +
           core::row_offset(t, item.batch, seq.q_row0, at.m_block * kBlockM, at.head_q);
  };
  auto load_q = [&](int i, Step at) {
    if (i >= num_iters) return;
    load_tile_async<QTile, K::kThreads, K::kWholeTileLoads>(
        sQ + (i % kStages) * QTile::kBytes, block_rows(p.q, at), p.q.stride_seq,
        seq.seqlen_q - at.m_block * kBlockM, p.head_dim, tid);
    load_stats(i, at);
  };
  auto load_do = [&](int i, Step at) {
    if (i >= num_iters) return;
    load_tile_async<QTile, K::kThreads, K::kWholeTileLoads>(
        sdO + (i % kDoStages) * QTile::kBytes, block_rows(p.dout, at), p.dout.stride_seq,
        seq.seqlen_q - at.m_block * kBlockM, p.head_dim, tid);
  };
  Step at{blocks.begin, item.head_kv * p.group_size};
  load_q(0, at);
  load_do(0, at);
  cp_async_commit();

  // The same warp keeps its 32 keys in S / dP and in dK / dV.
  const int key_warp = warp % K::kKeyWarps;
  const int split = warp / K::kKeyWarps;  // query rows in S / dP, columns in dK / dV
  const int dq_rows = warp % K::kDqRowWarps, dq_cols = warp / K::kDqRowWarps;
  const int group = Sm80MmaLayout::group(lane), in_quad = Sm80MmaLayout::in_quad(lane);
  float dk[kKSlabs][2][K::kDCols / 4], dv[kKSlabs][2][K::kDCols / 4];
  zero<kKSlabs, K::kDCols>(dk);
  zero<kKSlabs, K::kDCols>(dv);

  for (int i = 0; i < num_iters; ++i) {
    // Q_i, dO_i (and at first K, V) have landed, and every warp is done
    // with the previous iteration's P, dS, Q and (two dO stages) dO buffers.
    cp_async_wait<0>();
    __syncthreads();
    const Step next = step_after(at);
    if constexpr (kStages == 2) load_q(i + 1, next);
    if constexpr (kDoStages == 2) load_do(i + 1, next);
    cp_async_commit();
    const uint32_t sQ_i = sQ + (i % kStages) * QTile::kBytes;
    const uint32_t sdO_i = sdO + (i % kDoStages) * QTile::kBytes;
    const int head_q = at.head_q, m_block = at.m_block;

    {
      float s[kSSlabs][2][K::kSlabKeys / 4], dp[kSSlabs][2][K::kSlabKeys / 4];
      zero<kSSlabs, K::kSlabKeys>(s);
      zero<kSSlabs, K::kSlabKeys>(dp);
      // S and dP in one k loop (gemm_smem_pair): each GEMM's next k step
      // loads while the other multiplies, with one step of fragments per
      // GEMM: the registers for two (gemm_smem's prefetch) are not there
      // next to dK / dV (NOTES.md, 17:05 UTC: 2-4% over two loops).
      using SGemm = SmemGemm<RowsA<QTile>, RowsB<KVTile>, kSSlabs, K::kSlabKeys, kHeadDim>;
      gemm_smem_pair<T>(SGemm(s, sQ_i, split * K::kSRows, sK, key_warp * K::kSlabKeys, lane),
                        SGemm(dp, sdO_i, split * K::kSRows, sV, key_warp * K::kSlabKeys, lane));
      const bool needs_mask = core::tile_needs_mask(mask, m_block, item.n_block, kBlockM, kBlockN);
      const float *lse_i = sLse + (i % 2) * kBlockM, *delta_i = sDelta + (i % 2) * kBlockM;
#pragma unroll
      for (int sl = 0; sl < kSSlabs; ++sl)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = split * K::kSRows + 16 * sl + 8 * h + group;  // within the block
          // Rows past the sequence read lse 0 (zero-filled): see load_q.
          const float lse = core::lse_log2(lse_i[row]);
          const float delta = delta_i[row];
#pragma unroll
          for (int c = 0; c < K::kSlabKeys / 4; ++c) {
            const float prob = core::prob_from_lse(s[sl][h][c], p.scale_log2, lse, FastExp2{});
            s[sl][h][c] = prob;
            dp[sl][h][c] = prob * (dp[sl][h][c] - delta);  // dS, unscaled
          }
        }
      // The mask in a loop of its own behind one branch: unmasked tiles pay
      // one test, not one an element (nor one a row: each taken branch cost
      // a fetch bubble, ncu 2026-11-30).
      if (needs_mask) {
#pragma unroll
        for (int sl = 0; sl < kSSlabs; ++sl)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = split * K::kSRows + 16 * sl + 8 * h + group;
            const core::IndexRange seen = mask.keys_seen_by(m_block * kBlockM + row);
#pragma unroll
            for (int c = 0; c < K::kSlabKeys / 4; ++c)
              if (!seen.contains(key0 + key_warp * K::kSlabKeys + 8 * (c / 2) + 2 * in_quad +
                                 c % 2))
                s[sl][h][c] = dp[sl][h][c] = 0.f;
          }
      }
      store_acc<T, PTile, kSSlabs, K::kSlabKeys, K::kStoreMatrix>(
          sP, split * K::kSRows, key_warp * K::kSlabKeys, s, lane);
      store_acc<T, PTile, kSSlabs, K::kSlabKeys, K::kStoreMatrix>(
          sdS, split * K::kSRows, key_warp * K::kSlabKeys, dp, lane);
    }
    __syncthreads();

    gemm_smem<T, ColsA<PTile>, ColsB<QTile>, kKSlabs, K::kDCols, kBlockM>(
        dv, sP, key_warp * K::kSlabKeys, sdO_i, split * K::kDCols, lane);
    // dK: with one Q stage before the barrier that frees Q; with two last,
    // dQ's atomics issued among its mma (`between`, below).
    auto update_dk = [&](auto between) {
      gemm_smem<T, ColsA<PTile>, ColsB<QTile>, kKSlabs, K::kDCols, kBlockM>(
          dk, sdS, key_warp * K::kSlabKeys, sQ_i, split * K::kDCols, lane, between);
    };
    if constexpr (kStages == 1) update_dk(NoWork{});
    // dO (with one stage also Q) is free: the next one loads during dQ. With
    // two dO stages it went out at the top, and nothing here needs a barrier.
    if constexpr (kDoStages == 1) __syncthreads();
    float dq[kDqSlabs][2][K::kDqCols / 4];
    zero<kDqSlabs, K::kDqCols>(dq);
    if constexpr (K::kSpreadLoads) {
      // Copy `it` of the next Q and dO after step kk of dQ's GEMM, kPerStep a step.
      load_stats(i + 1, next);
      const bool has_next = i + 1 < num_iters;
      const int next_row0 = next.m_block * kBlockM;
      const T *q_next = block_rows(p.q, next), *dout_next = block_rows(p.dout, next);
      using Copies = TileCopies<QTile, K::kThreads, K::kWholeTileLoads, T>;
      Copies q_copies(sQ, q_next, p.q.stride_seq, seq.seqlen_q - next_row0, p.head_dim, tid);
      Copies do_copies(sdO, dout_next, p.dout.stride_seq, seq.seqlen_q - next_row0, p.head_dim,
                       tid);
      constexpr int kPerStep = (Copies::kCount + kBlockN / 16 - 1) / (kBlockN / 16);
      gemm_smem<T, RowsA<PTile>, ColsB<KVTile>, kDqSlabs, K::kDqCols, kBlockN>(
          dq, sdS, dq_rows * K::kDqRows, sK, dq_cols * K::kDqCols, lane, [&](int kk) {
            if (!has_next) return;
#pragma unroll
            for (int it = kPerStep * kk; it < kPerStep * (kk + 1); ++it)
              if (it < Copies::kCount) q_copies.issue(it), do_copies.issue(it);
          });
      cp_async_commit();
    } else {
      if constexpr (kDoStages == 1) load_do(i + 1, next);
      if constexpr (kStages == 1) load_q(i + 1, next);
      cp_async_commit();
      gemm_smem<T, RowsA<PTile>, ColsB<KVTile>, kDqSlabs, K::kDqCols, kBlockN>(
          dq, sdS, dq_rows * K::kDqRows, sK, dq_cols * K::kDqCols, lane);
    }
    // One 64-bit address per query block; the rows and columns of the warp
    // tile are small offsets from it, tested only in a block that reaches
    // past the sequence or a head dim below the tile's. (Computed per
    // atomic, the 64-bit row index took ~20 instructions and a branch each:
    // 30% of the kernel's instructions at d128, ncu 2026-11-30.) On sm_90
    // each lane adds its own 16 bytes a row and 16 columns in the paired
    // layout (bwd_scratch.h; the head dims sm80_bwd_pairs_dq names), else
    // whole 128-byte row pieces gathered by shuffles (RowPieces); on sm_80,
    // which has no vector atomics, 4-byte ones into rows.
#if __CUDA_ARCH__ >= 900
    constexpr bool kPaired = sm80_bwd_pairs_dq(kHeadDim);
    constexpr bool kPieces = !kPaired;
    static_assert(kPaired || K::kDqCols % 32 == 0, "RowPieces: 32-column units");
#else
    constexpr bool kPaired = false, kPieces = false;
#endif
    static_assert(!kPaired || (kHeadDim % 16 == 0 && K::kDqCols % 16 == 0), "whole pieces");
    // (lane_id(): RowPieces from `lane` stayed live across the loop and
    // spilled at d64 or d128, 255 registers.)
    const RowPieces pieces(lane_id());
    const int dq_row0 = m_block * kBlockM + dq_rows * K::kDqRows + (kPieces ? group & ~1 : group);
    const int dq_col0 = dq_cols * K::kDqCols + (kPieces ? pieces.lane_col : 2 * in_quad);
    float *const dq_base = scratch.dq_accum +
                           core::row_stat_index(p, item.batch, head_q, 0) * p.head_dim +
                           int64_t(dq_row0) * p.head_dim + dq_col0;
    // The lane's 16 bytes of its first row and piece (paired layout).
    [[maybe_unused]] float *const dq_lane =
        kPaired ? scratch.dq_accum +
                      dq_pair_offset(core::row_stat_index(p, item.batch, head_q, 0) + dq_row0,
                                     dq_cols * K::kDqCols + 2 * in_quad, kHeadDim)
                : nullptr;
    // Unit u of each accumulator row (slab sl, half h) is 32 columns (two
    // 16-byte atomics a lane, pieces) or 8 (two 4-byte ones, sm_80);
    // paired, a whole row (a 16-byte atomic a 16 columns).
    constexpr int kUnitsPerRow = kPaired ? 1 : K::kDqCols / (kPieces ? 32 : 8);
    constexpr int kUnits = kDqSlabs * 2 * kUnitsPerRow;
    auto add_dq = [&](auto checked, int first, int last) {
#pragma unroll
      for (int a = 0; a < kUnits; ++a) {
        if (a < first || a >= last) continue;
        const int sl = a / (2 * kUnitsPerRow), h = (a / kUnitsPerRow) % 2;
        [[maybe_unused]] const int u = a % kUnitsPerRow;
        const int row = 16 * sl + 8 * h;
        [[maybe_unused]] float *const dq_row = dq_base + row * p.head_dim;
        [[maybe_unused]] auto in_bounds = [&](int row_offset, int col) {
          return !decltype(checked)::value ||
                 (dq_row0 + row + row_offset < seq.seqlen_q && dq_col0 + col < p.head_dim);
        };
        if constexpr (kPaired) {
          // Rows 16 sl + 8 h on keep the lane's row parity: whole pairs on.
#pragma unroll
          for (int t = 0; t < K::kDqCols / 16; ++t) {
            if (!in_bounds(0, 16 * t)) continue;  // (head_dim: a multiple of 8)
            float *const at_piece = dq_lane + row * kHeadDim + 32 * t;
            const float *v = &dq[sl][h][4 * t];
            red_add_v4_f32(at_piece, v[0], v[1], v[2], v[3]);
          }
        } else if constexpr (kPieces) {
          float even_row[4], odd_row[4];
          pieces.gather(&dq[sl][h][8 * u], 2, even_row, odd_row);
          if (in_bounds(0, 32 * u))
            red_add_v4_f32(dq_row + 32 * u, even_row[0], even_row[1], even_row[2], even_row[3]);
          if (in_bounds(1, 32 * u))
            red_add_v4_f32(dq_row + p.head_dim + 32 * u, odd_row[0], odd_row[1], odd_row[2],
                           odd_row[3]);
        } else if (in_bounds(0, 8 * u)) {
          atomicAdd(dq_row + 8 * u, dq[sl][h][2 * u]);
          atomicAdd(dq_row + 8 * u + 1, dq[sl][h][2 * u + 1]);
        }
      }
    };
    // With two stages a few atomics after each of dK's k steps: in a row they
    // filled the global-memory queue and held their warp there while the
    // others waited at the next barrier (ncu, H200, d128 2k: 7% of the
    // samples each). H200, CUDA events, bf16 16k tokens, against 8-byte
    // atomics after dK (2026-11-30): d64 2k 213 -> 225 TFLOP/s, 16k 232 ->
    // 244; d128 2k 242 -> 263, 16k 265 -> 290 (pieces after dK: 255, 280);
    // d256 (one stage, pieces) 2k 188 -> 204, 16k 202 -> 220. Where there
    // are fewer units than steps (d64: 4 units, 8 steps) they go after the
    // last steps: 2026-12-02 02:52 / 03:00, d64 +0.2..1.3% at 1k-16k in
    // both runs against the first steps (evenly spread: +0..0.5%).
    auto add_dq_all = [&](auto checked) {
      if constexpr (kStages == 2) {
        constexpr int kSteps = kBlockM / 16, kPerStep = (kUnits + kSteps - 1) / kSteps;
        constexpr int kFirstStep = kSteps - (kUnits + kPerStep - 1) / kPerStep;
        update_dk([&](int kk) {
          add_dq(checked, kPerStep * (kk - kFirstStep), kPerStep * (kk - kFirstStep + 1));
        });
      } else {
        add_dq(checked, 0, kUnits);
      }
    };
    if ((m_block + 1) * kBlockM <= seq.seqlen_q && p.head_dim == kHeadDim)
      add_dq_all(std::false_type{});
    else
      add_dq_all(std::true_type{});
    at = next;
  }
  cp_async_wait<0>();

  // Epilogue: dK gets the softmax scale (dS was unscaled), then both go out
  // through shared memory in 16-byte pieces of rows (store_acc's stmatrix or
  // tile_put_pair), dK in K's tile and dV in V's, free once every warp is
  // past the last dQ GEMM.
  __syncthreads();
  unsigned char *const dk_tile = smem_raw, *const dv_tile = smem_raw + KVTile::kBytes;  // sK, sV
  if constexpr (K::kStoreMatrix) {
#pragma unroll
    for (int sl = 0; sl < kKSlabs; ++sl)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int c = 0; c < K::kDCols / 4; ++c) dk[sl][h][c] *= p.scale;
    store_acc<T, KVTile, kKSlabs, K::kDCols, true>(sK, key_warp * K::kSlabKeys, split * K::kDCols,
                                                   dk, lane_id());
    store_acc<T, KVTile, kKSlabs, K::kDCols, true>(sV, key_warp * K::kSlabKeys, split * K::kDCols,
                                                   dv, lane_id());
  } else {
    // Not store_acc's 4-byte form: with it ptxas reordered the d64 main loop
    // (1881 -> 1864 instructions, -2%, 2026-12-06); this keeps it as it was.
#pragma unroll
    for (int sl = 0; sl < kKSlabs; ++sl)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int key = key_warp * K::kSlabKeys + 16 * sl + 8 * h + group;
#pragma unroll
        for (int t = 0; t < K::kDCols / 8; ++t) {
          const int col = split * K::kDCols + 8 * t + 2 * in_quad;
          tile_put_pair<KVTile>(dk_tile, key, col,
                                Element<T>::pack(dk[sl][h][2 * t] * p.scale,
                                                 dk[sl][h][2 * t + 1] * p.scale));
          tile_put_pair<KVTile>(dv_tile, key, col,
                                Element<T>::pack(dv[sl][h][2 * t], dv[sl][h][2 * t + 1]));
        }
      }
  }
  __syncthreads();
  const int keys_valid = seq.seqlen_k - key0;
  tile_copy_out<KVTile>(dk_tile,
                        static_cast<T *>(p.dk.data) +
                            core::row_offset(p.dk, item.batch, seq.k_row0, key0, item.head_kv),
                        p.dk.stride_seq, keys_valid, p.head_dim, tid, K::kThreads);
  tile_copy_out<KVTile>(dv_tile,
                        static_cast<T *>(p.dv.data) +
                            core::row_offset(p.dv, item.batch, seq.k_row0, key0, item.head_kv),
                        p.dv.stride_seq, keys_valid, p.head_dim, tid, K::kThreads);
}

// The two row kernels around the backward. A CTA takes kRowBlock rows
// (queries) of one (batch, head): its indices come from blockIdx.x once, in
// 32 bits (per-thread 64-bit divisions had made these kernels
// instruction-bound: 58 and 79 us at 16k tokens d128 against cuDNN's 68 and
// 57 us for the same bytes plus a 30 us memset, H200 2026-11-30 04:55).
// Each row gets a group of `lanes` threads, a power of two so that a group
// is an aligned part of one warp (its shuffles stay inside it), each thread
// `per_lane` consecutive elements per step: 16-byte accesses, and every
// lane busy at head dims below 256.
FA2_INLINE constexpr int row_lanes(int head_dim, int per_lane) {
  int lanes = 1;
  while (lanes < 32 && lanes * per_lane < head_dim) lanes *= 2;
  return lanes;
}
inline constexpr int kDeltaPerLane = 8;     // b16 elements: 16 bytes of O, of dO
inline constexpr int kConvertPerLane = 4;   // floats: 16 bytes of the accumulator
inline constexpr int kRowKernelThreads = 256;
inline constexpr int kRowBlock = kStatBlockRows;  // rows per CTA

// The rows of a row kernel's CTA: (batch, head) and its first row; CTAs
// run over row blocks fastest, then heads, then batches.
struct RowBlock {
  int batch, head, row0;
};
__device__ inline RowBlock row_block(const core::AttnParams &p, unsigned row_blocks) {
  const unsigned bh = blockIdx.x / row_blocks;
  return {int(bh / unsigned(p.heads_q)), int(bh % unsigned(p.heads_q)),
          int(blockIdx.x % row_blocks) * kRowBlock};
}

// Before the main kernel: D_i = rowsum(dO_i * O_i) for every row, and the
// dQ accumulator's rows zeroed. D goes into scratch.delta (every row the
// layout has, 0 where a varlen sequence is shorter), or, when the Hopper
// kernel reads them (bwd_scratch.h), into scratch.block_stats with the
// row's lse, 0 for both past the sequence and in a head's padding: the
// grid then covers block_stat_head_blocks row blocks a head.
template <class T>
__global__ void bwd_delta_kernel(const core::AttnParams p, const BwdScratch scratch,
                                 unsigned row_blocks) {
  // The Hopper main kernel, launched as this one's dependent, may start its
  // CTAs as this grid's last ones run (they wait for its end).
  grid_launch_dependents();
  const RowBlock at = row_block(p, row_blocks);
  const core::SeqInfo seq = core::seq_info(p, at.batch);
  if (scratch.kv_done != nullptr && at.row0 == 0 && at.head % p.group_size == 0 &&
      threadIdx.x == 0)
    scratch.kv_done[kv_done_index(p, at.batch, at.head / p.group_size)] = 0u;
  const int lanes = row_lanes(p.head_dim, kDeltaPerLane), lane = threadIdx.x % lanes;
  const int rows_per_step = kRowKernelThreads / lanes;
#pragma unroll 2
  for (int row = at.row0 + threadIdx.x / lanes; row < at.row0 + kRowBlock; row += rows_per_step) {
    float sum = 0.f;
    if (row < seq.seqlen_q) {
      const T *dout = static_cast<const T *>(p.dout.data) +
                      core::row_offset(p.dout, at.batch, seq.q_row0, row, at.head);
      const T *out = static_cast<const T *>(p.out.data) +
                     core::row_offset(p.out, at.batch, seq.q_row0, row, at.head);
      for (int col = kDeltaPerLane * lane; col < p.head_dim; col += kDeltaPerLane * lanes) {
        const uint4 a = *reinterpret_cast<const uint4 *>(dout + col);
        const uint4 o = *reinterpret_cast<const uint4 *>(out + col);
        const T *ae = reinterpret_cast<const T *>(&a);
        const T *oe = reinterpret_cast<const T *>(&o);
#pragma unroll
        for (int e = 0; e < kDeltaPerLane; ++e)
          sum += Element<T>::to_float(ae[e]) * Element<T>::to_float(oe[e]);
      }
    }
    for (int offset = lanes / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane != 0) continue;
    if (scratch.block_stats != nullptr) {
      float *stats = scratch.block_stats + block_stat_index(p, at.batch, at.head, row);
      stats[0] = row < seq.seqlen_q ? core::lse_log2(p.lse[core::row_stat_index(
                                          p, at.batch, at.head, row)])
                                    : 0.f;
      stats[kStatBlockRows] = sum;
    } else if (row < p.seqlen_q) {
      scratch.delta[core::row_stat_index(p, at.batch, at.head, row)] = sum;
    }
  }
  // The block's accumulator rows: contiguous, kRowBlock * head_dim floats
  // (fewer at the end of the layout's rows); paired, the pairs they touch
  // (a pair at either end may be its neighbour's too: both write zeros).
  const int rows = core::min_i(kRowBlock, p.seqlen_q - at.row0);
  if (rows <= 0) return;
  const int64_t first = core::row_stat_index(p, at.batch, at.head, at.row0);
  int64_t begin = first * p.head_dim, count = int64_t(rows) * p.head_dim;
  if (scratch.dq_pair_cols != 0) {
    begin = (first & ~int64_t(1)) * scratch.dq_pair_cols;
    count = ((first + rows + 1) & ~int64_t(1)) * scratch.dq_pair_cols - begin;
  }
  float4 *acc = reinterpret_cast<float4 *>(scratch.dq_accum + begin);
  for (int i = threadIdx.x; i < count / 4; i += kRowKernelThreads)
    acc[i] = float4{0.f, 0.f, 0.f, 0.f};
}

// After it: dQ = scale * accumulator, converted to the element type. In
// the paired layout (pair_cols != 0) a lane's 4 floats are columns c, c + 1,
// c + 8, c + 9 of its row (bwd_scratch.h). Launched as the main kernel's
// dependent: with kv_done (the Hopper kernels count the keys whose dQ is
// added, bwd_scratch.h) a CTA converts its rows as soon as their kv head's
// count is complete, on the SMs that the main grid's last CTAs leave free;
// otherwise once the main grid has ended. The accumulator is read past
// the L1 (__ldcg): other SMs' adds reached it after this SM may have run.
template <class T>
__global__ void bwd_dq_convert_kernel(const core::AttnParams p, const float *dq_accum,
                                      int pair_cols, const unsigned *kv_done,
                                      unsigned row_blocks) {
  const RowBlock at = row_block(p, row_blocks);
  const core::SeqInfo seq = core::seq_info(p, at.batch);
  if (kv_done != nullptr) {
    if (threadIdx.x == 0) {
      // (Polls back off to 8 us: up to eight CTAs an SM may wait at once.)
      const unsigned *done = kv_done + kv_done_index(p, at.batch, at.head / p.group_size);
      for (unsigned pause = 256; load_acquire_gpu(done) < unsigned(seq.seqlen_k);
           pause = pause < 8192 ? 2 * pause : pause)
        __nanosleep(pause);
    }
    __syncthreads();
  } else {
    grid_dependency_wait();
  }
  const int lanes = row_lanes(p.head_dim, kConvertPerLane), lane = threadIdx.x % lanes;
  const int rows_per_step = kRowKernelThreads / lanes;
  const int row_end = core::min_i(at.row0 + kRowBlock, seq.seqlen_q);
#pragma unroll 4
  for (int row = at.row0 + threadIdx.x / lanes; row < row_end; row += rows_per_step) {
    T *dq = static_cast<T *>(p.dq.data) + core::row_offset(p.dq, at.batch, seq.q_row0, row, at.head);
    const int64_t stat_row = core::row_stat_index(p, at.batch, at.head, row);
    if (pair_cols != 0) {
      // (Slots of 16-column pieces that begin at or past head_dim are padding.)
      const int slots = (p.head_dim + 15) / 16 * 16;
      for (int slot = kConvertPerLane * lane; slot < slots; slot += kConvertPerLane * lanes) {
        const int col = slot / 16 * 16 + slot % 16 / 2;  // the first of the slot's 4 floats
        const float4 x = __ldcg(
            reinterpret_cast<const float4 *>(dq_accum + dq_pair_offset(stat_row, col, pair_cols)));
        *reinterpret_cast<uint32_t *>(dq + col) = Element<T>::pack(x.x * p.scale, x.y * p.scale);
        if (col + 8 < p.head_dim)
          *reinterpret_cast<uint32_t *>(dq + col + 8) =
              Element<T>::pack(x.z * p.scale, x.w * p.scale);
      }
      continue;
    }
    const float *acc = dq_accum + stat_row * p.head_dim;
    for (int col = kConvertPerLane * lane; col < p.head_dim; col += kConvertPerLane * lanes) {
      const float4 x = __ldcg(reinterpret_cast<const float4 *>(acc + col));
      *reinterpret_cast<uint2 *>(dq + col) =
          uint2{Element<T>::pack(x.x * p.scale, x.y * p.scale),
                Element<T>::pack(x.z * p.scale, x.w * p.scale)};
    }
  }
  // This grid ends no earlier than the main one (its dK / dV stores), for
  // whatever the stream runs next: one CTA waits for it.
  if (kv_done != nullptr && blockIdx.x == gridDim.x - 1) grid_dependency_wait();
}

}  // namespace fa2::cuda
