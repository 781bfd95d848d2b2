// Block sizes of the Hopper forward kernel, one constexpr table indexed by
// the kernel's head-dim bucket. Query blocks are 64 rows per consumer
// warpgroup (the M of one wgmma); key blocks are the N of Q K^T. Shared
// memory: Q plus `stages` K and V tiles, within the H100/H200's 227 KB.
#pragma once

#include "core/tile_plan.h"
#include "core/work.h"

namespace fa2::cuda::sm90 {

// Head dims up to 32 stay on the sm80 kernels (a 64-wide Hopper tile would
// be half padding); everything else rounds up to one of these.
inline constexpr int kHeadDimBuckets[] = {64, 128, 256};
// Shared memory one CTA may opt into on the H100 / H200.
inline constexpr int kMaxSmemBytes = 227 * 1024;
inline constexpr int kMinHeadDim = 33;

// workers = consumer warpgroups; block_m = 64 * workers. d64 and d128 have
// a second, `wide` plan with 192-key blocks (more work per softmax round
// and per barrier), chosen from 8k keys on (sm90_fwd_wide). H200, 2026-11-29
// 17:51, fa2_cuda_check bench, 128 / 192 keys: d64 s16k 453 / 484 TFLOP/s,
// s8k 451 / 476, causal s16k 455 / 472; d128 s16k 645 / 685, s8k 643 / 659,
// causal s8k 616 / 634; below 8k the wide blocks lose (d128 causal s2k 470 /
// 448, s512 266 / 212: fewer query blocks to balance, more masked columns;
// again at 23:18 with the plans below: wide from 2k, d128 causal s2k 489 ->
// 450, d64 causal s2k 352 -> 317).
// The 128-key d128 plan keeps three K / V stages in place of a second Q
// buffer (23:05-23:18: with the persistent launch s1k 505 -> 533, s2k 556
// -> 598, s4k 616 -> 637, causal s2k 470 -> 489; without it nothing). More
// stages at d64 (4, 6) or three consumer warpgroups there (192-query
// blocks, 160 registers each: -12..-25%) did not help (23:12, 23:18).
// d256 takes 80 keys (64 before: s16k 683 -> 753, s2k 596 -> 654, causal
// s4k 586 -> 626), two stages in 224 KB with one Q buffer.
constexpr core::TilePlan sm90_fwd_plan(int head_dim, bool wide) {
  switch (head_dim) {
    case 64: return {128, wide ? 192 : 128, 64, 2, 3};
    case 128: return {128, wide ? 192 : 128, 128, 2, wide ? 2 : 3};
    case 256: return {128, 80, 256, 2, 2};
    default: return {0, 0, 0, 0, 0};
  }
}
constexpr bool sm90_fwd_has_wide(int head_dim) { return head_dim == 64 || head_dim == 128; }
// (Fixed-length calls; varlen calls take the standard plan, FwdPlan::varlen.)
constexpr bool sm90_fwd_wide(int head_dim, int seqlen_k) {
  return sm90_fwd_has_wide(head_dim) && seqlen_k >= 8192;
}

// How the forward is launched (backends/cuda/NOTES.md, 2026-11-29 16:51 and
// later; H200):
//  - persistent, always: one CTA per SM, each loading its next tile while
//    it finishes the current one, tiles in a snake order (fwd_kernel.cuh).
//    Against one CTA per tile: with a mask d64 +2..39%, d128 +1..25%, d256
//    +2..12%; without, d64 +2..32%, d256 +1..11%, d128 +8..18% up to 1k
//    keys and from 2k +1.5..8% since 23:05 (the three-stage plan above
//    from 2k to 4k, the wide one from 8k on: +3% at 8k, +1.5% at 16k; at
//    16:51, with two stages, it had lost 1-9% from 2k).
//  - order (core::fwd_order): one head's blocks together (K/V shared in the
//    L2: +15..23% at 512-2k tokens), except with a mask and more query
//    blocks a head than sm90_fwd_rows_first_above, where the snake no
//    longer balances rounds that hold one head's heavy and light blocks
//    (d128 causal s16k: 451 vs 650 TF/s; d256 causal s8k 748 vs 543,
//    2026-12-02 06:11): there the longest rows go first. Below that the L2
//    wins twice: fewer bytes, and (2026-12-04) a higher clock under the
//    board's 700 W cap, since longest rows first streams every running
//    head's K / V from DRAM. Causal, heads together against longest rows
//    first, sustained (bench/power_probe.py) / side by side (do_bench):
//    d64 s8k +9% (1642 -> 1821 MHz) / +8.5%, s16k +3% / +1%, d128 s8k
//    +5% / +2.6%; but d128 s16k -20% / -22% and d256 s8k -18%: there the
//    imbalance outweighs it.
constexpr int sm90_fwd_rows_first_above(int head_dim) {
  return head_dim <= 64 ? 128 : head_dim <= 128 ? 64 : 32;
}

// Backward: block_m queries per step, `stages` deep Q / dO ring. Up to
// d128 each consumer warpgroup owns 64 keys (block_n = 64 * workers,
// bwd_kernel.cuh); d64 takes 128-query blocks: half the barriers and stats
// fetches per GEMM of the 64-query ones (H200, 2026-11-29 19:00, against
// 64: s16k 282 -> 338 TFLOP/s, s2k 242 -> 282, causal s2k 186 -> 208, s512
// 161 -> 178). At d256 dK and dV of 64 keys do not fit a warpgroup's
// registers next to the rest: the two warpgroups share 64 keys and split
// the columns (bwd_split_kernel.cuh; H200 2026-11-29 20:07, against the
// sm80 kernel it replaces: s16k 188 -> 292 TFLOP/s, s2k 177 -> 262, s512
// 145 -> 195; then 384 / 339 / 233 at 20:53, with dQ atomics in 128-byte
// pieces from clusters of two CTAs).
inline constexpr int kBwdHeadDimBuckets[] = {64, 128, 256};
constexpr core::TilePlan sm90_bwd_plan(int head_dim) {
  switch (head_dim) {
    case 64: return {128, 128, 64, 2, 2};
    case 128: return {64, 128, 128, 2, 2};
    case 256: return {64, 64, 256, 2, 2};
    default: return {0, 0, 0, 0, 0};
  }
}
constexpr bool sm90_bwd_splits_columns(int head_dim) {
  return sm90_bwd_plan(head_dim).block_n < 64 * sm90_bwd_plan(head_dim).workers;
}

// Whether the backward counts the keys whose dQ it has added (kv_done,
// sm80/bwd_scratch.h), so that the conversion of a head's dQ runs on the
// SMs that the grid's last CTAs leave rather than after the grid. H100,
// 2026-12-08, CUDA events against HEAD's kernels (conversion after the
// grid): d128 +2..4% at 512-4k (2k 507 -> 527 TFLOP/s, causal 403 -> 415);
// d64 -3.5% at 512 (also against the conversion after the grid as a
// programmatic dependent: -5%; the count moved its kernel's SASS order),
// level at 1k-2k, +1% at 4k, so d64 converts after the grid. d256's CTAs
// add dQ for their partner's keys too (pairs), so they cannot count their
// own keys alone.
constexpr bool sm90_bwd_counts_keys(int head_dim) { return head_dim == 128; }

// L2 bytes a masked backward may count on for the Q and dO of the heads
// whose key blocks it interleaves (core::bwd_item): a third of the H100's
// 50 MB. Measured on the H200 (2026-11-29): causal d128 +4% at 2k-4k
// tokens, d256 +3% at 1k-4k; d64 (128-key blocks) nothing, so it keeps the
// plain order (0). The sm80 kernels: sm80/tile_plan.h, kSm80BwdCacheBytes.
constexpr int64_t sm90_bwd_cache_bytes(int head_dim) {
  return head_dim > 64 ? int64_t(16) << 20 : 0;
}

}  // namespace fa2::cuda::sm90
