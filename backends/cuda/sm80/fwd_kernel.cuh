// FlashAttention-2 forward on sm80 Tensor Cores.
//
// One CTA per (batch, query head, query block) (core::fwd_item, in the
// order the launcher picks: sm80_fwd_rows_first_above). Each warp
// owns kSlabs slabs of 16 query rows (split-Q): it computes S = Q K^T for
// its rows, runs the online softmax on them, keeps P in registers as the A
// operand of P V and accumulates an unscaled O that is rescaled once at
// the end. K/V blocks stream through a kStages-deep cp.async pipeline,
// walked from the last visible block to the first so that the diagonal
// (masked) blocks of causal attention come first and the rest run
// unmasked (kBlindLast: but for a diagonal block some warps do not see,
// which comes last). kStages = 1 is for the large head dims, where two
// stages of 64-key blocks do not fit in an A100's shared memory: one K and
// one V buffer, each loaded while the other is in use (FlashAttention-2's
// sm80 scheme): V_i during Q K_i^T, K_{i+1} during the softmax and P V_i
// (kLateKIssue: during P V_i only).
#pragma once

#include <cstdint>

#include "core/online_softmax.h"
#include "core/work.h"
#include "empty_rows.cuh"
#include "sm80/smem_tile.cuh"
#include "sm80/warp_gemm.cuh"

namespace fa2::cuda {

template <class T, int kHeadDim, int kBlockM, int kBlockN, int kWarps, int kStages>
struct FwdKernel {
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kWarpRows = kBlockM / kWarps;
  static constexpr int kSlabs = kWarpRows / 16;
  // Q K^T fully unrolled where a warp's registers allow it (one-slab warps,
  // no spills up to d256); two-slab warps unroll by 4 at d128, else keep
  // the k loop rolled. At d192 / d256: H200 through FA2_CUDA_PATH=sm80,
  // 2026-11-30 06:43, against the rolled loop, +1..2% / +0..1% at 512-16k
  // (unrolled by 2 or 4: -1..-3%). d128: 2026-12-02 06:01 / 06:11, by 4
  // +0.5..2.5% at 1k-16k (by 2 -1..0%; fully: 8 bytes spilled); d64 by 2
  // within noise (by 4, fully: 8 bytes spilled).
  static constexpr int kUnrollK = kSlabs == 1 ? kHeadDim / 16 : kHeadDim == 128 ? 4 : 1;
  // kStages = 1, two-slab warps: K_{i+1} is issued once P is packed, not
  // before the softmax. Its address arithmetic there ran while S (fp32)
  // and O were both live and spilled these plans (8-24 B at d64 / d128);
  // after packing S is dead. One-slab warps have the registers, and the
  // early issue measured 5-10% faster for them (more of the copy hidden).
  static constexpr bool kLateKIssue = kStages == 1 && kSlabs > 1;
  // The softmax's row max and sum in 8 chains (core::fold_row) at d64:
  // H200 through FA2_CUDA_PATH=sm80, 2026-11-30 03:38, against one chain
  // (both with fmaxf), +1..3%; at d128 8 chains cost 4-6% (03:31), d256
  // neither way.
  static constexpr int kSoftmaxChains = kHeadDim == 64 ? 8 : 1;
  // K / V tiles that lie wholly inside the sequence skip the per-row bounds
  // test and fallback address (load_tile_async's kWholeTiles) at d256:
  // H200 through FA2_CUDA_PATH=sm80, 2026-11-30 04:49 / 04:55, +1..2% at
  // 1k-16k; d192 -1..+2%; at d128 the branch spilled 144 bytes (01:00).
  static constexpr bool kWholeTileLoads = kHeadDim == 256;
  static_assert(kWarpRows % 16 == 0 && kStages >= 1, "bad forward tile plan");
  // XOR-swizzled tiles (smem_tile.cuh) at d128 and d256: a 128-byte line of
  // K or V lands in one aligned 128 bytes of shared memory (a padded row's
  // lines straddle two). H200 through FA2_CUDA_PATH=sm80, against padded
  // tiles: 2026-12-02 ~10:49, d128 +4.5..8% at 512-16k (causal +1.7..5%);
  // ~10:27 / ~10:33, d256 +2.7..4.8% (causal -0.2..+3.8%). d192 -1..+1.4%
  // with XorTile's signed offsets, -3.2..0% with the unsigned ones that gave
  // d128 +1.2..4.5% of the above (~10:45); d64: K or V swizzled -1.7..+1.3%,
  // both spilled 12 bytes (two-slab warps: S of 128 keys takes 128 registers).
  static constexpr bool kSwizzle = kHeadDim == 128 || kHeadDim == 256;
  using QTile = TileFor<kBlockM, kHeadDim, kSwizzle>;
  using KVTile = TileFor<kBlockN, kHeadDim, kSwizzle>;
  static constexpr int kSmemBytes = QTile::kBytes + 2 * kStages * KVTile::kBytes;
  // d192 / d256 (one stage): a thread's copies of V_i go out one per k step of
  // the first part of Q K_i^T rather than in one burst before it, which stalled
  // the warps behind the copies (ncu, 2026-11-30 01:00 session: long_scoreboard at
  // the registers of queued LDGSTS). H200 through FA2_CUDA_PATH=sm80: d256
  // 2026-11-30 06:59, +2..6% at 512-16k (one copy every other step: -3..+1%);
  // d192 2026-12-01 22:39, +1..4% at 512-16k but for 1k causal (-1%).
  static constexpr bool kSpreadV = kStages == 1 && kSlabs == 1 && kHeadDim >= 192;
  static constexpr int kVCopies = tile_pieces<KVTile, kThreads>();  // a thread's, per tile
  static_assert(!kSpreadV || (kStages == 1 && kUnrollK == kHeadDim / 16 &&
                              kVCopies <= kHeadDim / 16),
                "V's copies spread over an unrolled Q K^T");
  // d192 / d256: Q and K_0 come in groups of 64 columns, one cp.async group
  // each, and the first Q K^T starts on the first group while the others
  // land: with one CTA an SM nothing else hides a CTA's prologue. H200
  // through FA2_CUDA_PATH=sm80, 2026-12-02 04:07, against one group: d256
  // +4..4.5% at 512, +2..3% at 1k, +1.5% at 2k-4k, +1% at 16k; d192 +1..4%
  // at 512-4k, +1..2% at 16k. The waits sit in the one Q K^T, behind
  // i == 0: a separate copy of the first block's Q K^T cost d192 2-7% at
  // every length (03:59).
  static constexpr int kGroupCols = 64;
  // Plans whose kernel may walk the blind block last (fwd_kernel's
  // kBlindLast; where, sm80_fwd_blind_last): with 128 queries and 64 keys
  // a block, the causal diagonal's later key block is seen by the lower
  // warps only. It is visited last instead of first, and the warps that see
  // none of it skip its GEMMs and softmax (copies and barriers they still
  // share) and go on to their epilogue while the others finish it: one CTA
  // an SM at d192 / d256, so nothing else would cover that epilogue.
  static constexpr bool kCanWalkBlindLast = kSpreadV && !kLateKIssue;
  static constexpr int kPrologueGroups = kSpreadV ? kHeadDim / kGroupCols : 1;
  // From d128, O reaches shared memory by stmatrix on sm_90 (tile_put_acc:
  // one a 16 x 16 block instead of four 4-byte stores; the d256 epilogue
  // shrank from 1049 to 753 instructions). H100 through
  // FA2_CUDA_PATH=sm80, CUDA events, 2026-12-06 ~14:20, three runs each:
  // d128 +0.5..2.6% at 512-1k, d256 +0.5..1.6% at 512-2k, d192 +0..0.6%,
  // level from 8k; sustained d256 causal 512 +1..1.5%. Below d128 the
  // kernels are left as they were (d64's loops move with any edit).
  static constexpr bool kStoreMatrix = kHeadDim >= 128;
  static_assert(kPrologueGroups == 1 || kHeadDim % kGroupCols == 0, "whole column groups");
  static_assert(kSmemBytes <= 163 * 1024, "over the A100's shared memory per block");
};

template <class T, int kHeadDim, int kBlockM, int kBlockN, int kWarps, int kStages,
          bool kBlindLast>
__global__ void __launch_bounds__(kWarps * 32)
    fwd_kernel(const core::AttnParams p, const core::FwdOrder order) {
  using K = FwdKernel<T, kHeadDim, kBlockM, kBlockN, kWarps, kStages>;
  static_assert(!kBlindLast || K::kCanWalkBlindLast, "the blind block's skip copies V itself");
  using QTile = typename K::QTile;
  using KVTile = typename K::KVTile;
  constexpr int kSlabs = K::kSlabs;
  extern __shared__ __align__(128) unsigned char smem_raw[];  // XorTile bases
  const uint32_t sQ = smem_address(smem_raw);
  const uint32_t sK = sQ + QTile::kBytes;             // kStages tiles
  const uint32_t sV = sK + kStages * KVTile::kBytes;  // kStages tiles

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const core::FwdItem item = core::fwd_item(p, kBlockM, int64_t(blockIdx.x), order);
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int row0 = item.m_block * kBlockM;
  if (row0 >= seq.seqlen_q) return;  // a shorter sequence of a varlen batch
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

  // Prologue: Q, then the first kStages - 1 K/V blocks, one group each
  // (kStages = 1: K of the first block; kPrologueGroups > 1: Q and that K
  // together, a group per kGroupCols columns).
  const core::FwdOperands<T> operands = core::fwd_operands<T>(p, item, seq, row0);
  const T *q = operands.q, *k = operands.k, *v = operands.v;
  if constexpr (K::kPrologueGroups == 1) {
    load_tile_async<QTile, K::kThreads>(sQ, q, p.q.stride_seq, rows_valid, p.head_dim, tid);
    cp_async_commit();
  }
  const int num_blocks = blocks.end - blocks.begin;
  // The later diagonal block to the end of the walk where warp 0's rows see
  // none of it (kBlindLast).
  const bool blind_last = kBlindLast && num_blocks >= 2 &&
                          core::keys_end_by(mask, row0 + K::kWarpRows - 1,
                                            (blocks.end - 1) * kBlockN);
  const int loop_blocks = num_blocks - (blind_last ? 1 : 0);
  // i-th block visited: key block blocks.end - 1 - i (with blind_last, that
  // block moved last), into stage i % kStages of sK or sV. Past the last
  // block nothing is loaded, but the group is still committed: empty
  // groups keep the wait counts uniform.
  const int first_block = blocks.end - 1 - (blind_last ? 1 : 0);
  auto key_block = [&](int i) {
    return !kBlindLast ? blocks.end - 1 - i : i < loop_blocks ? first_block - i : blocks.end - 1;
  };
  auto load_block = [&](uint32_t tiles, const T *src, int64_t stride, int i) {
    if (i < num_blocks) {
      const int key0 = key_block(i) * kBlockN;
      load_tile_async<KVTile, K::kThreads, K::kWholeTileLoads>(
          tiles + (i % kStages) * KVTile::kBytes, src + key0 * stride, stride,
          seq.seqlen_k - key0, p.head_dim, tid);
    }
  };
  if constexpr (K::kPrologueGroups > 1) {
    constexpr int kCols = K::kGroupCols;
    using QSlice = ColumnSlice<QTile, kCols>;
    using KSlice = ColumnSlice<KVTile, kCols>;
    const int key0 = key_block(0) * kBlockN;
#pragma unroll
    for (int g = 0; g < K::kPrologueGroups; ++g) {
      load_tile_async<QSlice, K::kThreads>(sQ + 2 * kCols * g, q + kCols * g, p.q.stride_seq,
                                           rows_valid, p.head_dim - kCols * g, tid);
      load_tile_async<KSlice, K::kThreads, K::kWholeTileLoads>(
          sK + 2 * kCols * g, k + key0 * p.k.stride_seq + kCols * g, p.k.stride_seq,
          seq.seqlen_k - key0, p.head_dim - kCols * g, tid);
      cp_async_commit();
    }
  } else if constexpr (kStages == 1) {
    load_block(sK, k, p.k.stride_seq, 0);
    cp_async_commit();
  }
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    load_block(sK, k, p.k.stride_seq, i);
    load_block(sV, v, p.v.stride_seq, i);
    cp_async_commit();
  }

  float o[kSlabs][2][kHeadDim / 4];
  zero<kSlabs, kHeadDim>(o);
  // Assigned explicitly: nvcc 13.0 left the default member initializers of
  // the second slab's RowStates out (row_max started at 0, not -inf; seen
  // in the PTX), which skewed P's rounding and could underflow whole rows.
  core::RowState row_state[kSlabs][2];
#pragma unroll
  for (int sl = 0; sl < kSlabs; ++sl) row_state[sl][0] = row_state[sl][1] = core::RowState{};
  const QuadRowReduce reduce;
  const int warp_row0 = warp * K::kWarpRows;
  // The lanes' walks of Q, K and V (warp_gemm.cuh), one register each across
  // the loop; with more stages the K / V walks restart at each block's stage.
  typename QTile::Walk q_walk = RowsA<QTile>::walk(sQ, warp_row0, lane);
  typename KVTile::Walk k_walk = RowsB<KVTile>::walk(sK, 0, lane);
  typename KVTile::Walk v_walk = ColsB<KVTile>::walk(sV, 0, lane);
  const int group = Sm80MmaLayout::group(lane), in_quad = Sm80MmaLayout::in_quad(lane);

  // This warp's rows see none of the walk's last block (blind_last): for it
  // the warp only copies its share of V and meets the barriers. (Broadcast
  // from lane 0: ptxas then knows the branch is warp-uniform; else it put
  // convergence checks around the loop's mma.sync and ldmatrix at d256.)
  const bool warp_blind = blind_last && core::keys_end_by(mask, row0 + warp_row0 + K::kWarpRows - 1,
                                                          (blocks.end - 1) * kBlockN);
  const int skip_at = kBlindLast ? __shfl_sync(0xffffffffu, warp_blind ? loop_blocks : -1, 0) : -1;
  for (int i = 0; i < num_blocks; ++i) {
    const bool skip = kBlindLast && i == skip_at;
    if constexpr (kStages == 1) {
      if (K::kPrologueGroups > 1 && i == 0)  // Q and K_0's first column group
        cp_async_wait<K::kPrologueGroups - 1>();
      else
        cp_async_wait<0>();
      __syncthreads();  // K_i is visible to all; every warp is done with V_{i-1}
      if constexpr (!K::kSpreadV) {
        load_block(sV, v, p.v.stride_seq, i);
        cp_async_commit();
      }
    } else {
      cp_async_wait<kStages - 2>();
      __syncthreads();  // block i is visible to all; the stage of block i-1 is free
      load_block(sK, k, p.k.stride_seq, i + kStages - 1);
      load_block(sV, v, p.v.stride_seq, i + kStages - 1);
      cp_async_commit();
    }
    if constexpr (kStages > 1) {
      k_walk = RowsB<KVTile>::walk(sK + (i % kStages) * KVTile::kBytes, 0, lane);
      v_walk = ColsB<KVTile>::walk(sV + (i % kStages) * KVTile::kBytes, 0, lane);
    }
    const int n_block = key_block(i);

    float s[kSlabs][2][kBlockN / 4];
    zero<kSlabs, kBlockN>(s);
    if constexpr (K::kSpreadV) {  // V_i's copies among Q K_i^T's k steps
      const int key0 = n_block * kBlockN;
      TileCopies<KVTile, K::kThreads, K::kWholeTileLoads, T> v_copies(
          sV, v + key0 * p.v.stride_seq, p.v.stride_seq, seq.seqlen_k - key0, p.head_dim, tid);
      if (skip) {
#pragma unroll
        for (int kk = 0; kk < K::kVCopies; ++kk) v_copies.issue(kk);
      } else {
        gemm_nt<T, QTile, KVTile, kSlabs, kBlockN, kHeadDim, K::kUnrollK>(
            s, q_walk, k_walk, [&](int kk) {
              if (kk < K::kVCopies) v_copies.issue(kk);
              // The first block: each further column group of Q and K_0 waited for.
              constexpr int kGroupSteps = K::kGroupCols / 16;
              const int next_group = (kk + 1) / kGroupSteps;
              if (K::kPrologueGroups > 1 && i == 0 && (kk + 1) % kGroupSteps == 0 &&
                  next_group < K::kPrologueGroups) {
                cp_async_wait_unrolled<K::kPrologueGroups - 1>(K::kPrologueGroups - 1 -
                                                               next_group);
                __syncthreads();
              }
            });
      }
      cp_async_commit();
    } else {
      gemm_nt<T, QTile, KVTile, kSlabs, kBlockN, kHeadDim, K::kUnrollK>(s, q_walk, k_walk);
    }

    if (!skip && core::tile_needs_mask(mask, item.m_block, n_block, kBlockM, kBlockN)) {
#pragma unroll
      for (int sl = 0; sl < kSlabs; ++sl)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row0 + warp_row0 + 16 * sl + 8 * h + group;
#pragma unroll
          for (int c = 0; c < kBlockN / 4; ++c) {
            const int col = n_block * kBlockN + 8 * (c / 2) + 2 * in_quad + c % 2;
            if (!mask.visible(row, col)) s[sl][h][c] = -INFINITY;
          }
        }
    }
    if constexpr (kStages == 1) {
      cp_async_wait<0>();
      __syncthreads();  // V_i is visible to all; every warp is done with K_i
      if constexpr (!K::kLateKIssue) {
        load_block(sK, k, p.k.stride_seq, i + 1);
        cp_async_commit();
      }
    }

    if (skip) continue;
#pragma unroll
    for (int sl = 0; sl < kSlabs; ++sl)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float correction = core::online_softmax_step<kBlockN / 4, K::kSoftmaxChains>(
            s[sl][h], row_state[sl][h], p.scale_log2, reduce, FastExp2{});
#pragma unroll
        for (int c = 0; c < kHeadDim / 4; ++c) o[sl][h][c] *= correction;
      }
    PackedA<kSlabs, kBlockN> p_frag;  // P in b16: the fp32 scores die here
    pack_acc<T, kSlabs, kBlockN>(p_frag, s);
    if constexpr (K::kLateKIssue) {
      load_block(sK, k, p.k.stride_seq, i + 1);
      cp_async_commit();
    }
    gemm_rn<T, KVTile, kSlabs, kHeadDim, kBlockN>(o, p_frag, v_walk);
  }
  cp_async_wait<0>();  // nothing may stay in flight past the kernel's end

  // Epilogue: one rescale per row, then out and lse. Out goes through the
  // warp's own rows of the Q tile, which only this warp read
  // (tile_put_pair or kStoreMatrix's tile_put_acc, then 16-byte pieces of
  // rows), not in 4-byte stores
  // from the accumulators: H200 through FA2_CUDA_PATH=sm80, 2026-11-30
  // 06:17, d128 +5..6% at 1k, +2..4% at 2k, d64 +1..4% at 1k-4k;
  // 2026-12-02 02:10 / 02:17, d256 / d192 +7..12% at 512, +2..8% at 1k,
  // +1..4% at 2k, at 16k -1..1.5% / -1..+1% (kept: the short sequences are
  // where these forwards were furthest behind FlashAttention-2). The lane is
  // read afresh (derived from `lane`, ptxas kept the indices live across
  // the main loop and spilled at d64).
  unsigned char *const out_tile = smem_raw;  // sQ
  const int out_lane = lane_id();
  const int out_group = out_lane / 4, out_col = 2 * (out_lane % 4);
  __syncwarp();  // all lanes past their last Q read
#pragma unroll
  for (int sl = 0; sl < kSlabs; ++sl)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const core::RowResult result = core::online_softmax_finish(row_state[sl][h], p.scale, reduce);
      const int row = warp_row0 + 16 * sl + 8 * h + out_group;
#pragma unroll
      for (int c = 0; c < kHeadDim / 4; ++c) o[sl][h][c] *= result.out_scale;
#if __CUDA_ARCH__ >= 900
      if constexpr (!K::kStoreMatrix)
#endif
#pragma unroll
        for (int t = 0; t < kHeadDim / 8; ++t)
          tile_put_pair<QTile>(out_tile, row, 8 * t + out_col,
                               Element<T>::pack(o[sl][h][2 * t], o[sl][h][2 * t + 1]));
      if (out_col == 0 && row < rows_valid)
        p.lse[core::row_stat_index(p, item.batch, item.head_q, row0 + row)] = result.lse;
    }
#if __CUDA_ARCH__ >= 900
  if constexpr (K::kStoreMatrix)
    tile_put_acc<T, QTile, kSlabs, kHeadDim>(sQ, warp_row0, 0, o, out_lane);
#endif
  __syncwarp();
  // The warp's kWarpRows rows, as a tile of their own within the Q tile.
  using WarpRows = typename QTile::template WithRows<K::kWarpRows>;
  tile_copy_out<WarpRows>(out_tile + 2 * QTile::offset(warp_row0, 0),
                          out + warp_row0 * p.out.stride_seq, p.out.stride_seq,
                          rows_valid - warp_row0, p.head_dim, out_lane, 32);
}

}  // namespace fa2::cuda
