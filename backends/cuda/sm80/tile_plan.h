// Block sizes of the sm80 kernels: one constexpr table per direction,
// indexed by the kernel's head-dim bucket. Shared memory stays under the
// A100's 163 KB opt-in limit so the same plans run on sm80 and sm90; the
// backward has a second budget, Hopper's 227 KB, where a larger plan pays.
#pragma once

#include <cstdint>

#include "core/tile_plan.h"

namespace fa2::cuda {

inline constexpr int kHeadDimBuckets[] = {32, 64, 96, 128, 192, 256};

// Forward: core::TilePlan; `workers` are warps, each owning
// block_m / workers query rows (split-Q: no warp exchanges partial output).
// d32 / d64 / d128: 4 warps of two 16-row slabs each (FlashAttention-2's
// sm80 choice): every K / V fragment read by ldmatrix feeds both slabs, and
// two CTAs share an SM, so one's softmax and barriers overlap the other's
// GEMMs (d128: 343 vs 290 TF/s for 8 one-slab warps of 128x128, d64 128
// keys: 305 vs 279 for 64, s16k non-causal, H200). 64-key blocks above 128
// too, as in FlashAttention-2: smaller ones reload Q from shared memory for
// every few keys. One K and one V buffer each loaded while the other is in
// use (stages 1) beat two stages of K/V: it fits d256's 64-key blocks
// (132 KB; two stages would be 198 KB), and measured 7% faster at d192.
constexpr core::TilePlan sm80_fwd_plan(int head_dim) {
  switch (head_dim) {
    case 32: return {128, 64, 32, 4, 2};
    case 64: return {128, 128, 64, 4, 1};
    case 96: return {128, 64, 96, 8, 2};
    case 128: return {128, 64, 128, 4, 1};
    case 192: return {128, 64, 192, 8, 1};
    case 256: return {128, 64, 256, 8, 1};
    default: return {0, 0, 0, 0, 0};
  }
}

// Forward tile order under a mask (core::fwd_order): one head's query
// blocks together up to this many blocks a head, longest rows first above.
// Longest rows first does more a clock (the heaviest tiles start first),
// but it streams every running head's K / V from DRAM, and under the H200's
// 700 W cap that costs clock; at the short lengths the clock wins. H200
// through FA2_CUDA_PATH=sm80, bf16, causal, 2026-12-04 ~18:00-18:19, heads
// together against rows first, sustained (bench/power_probe.py, clock
// ~1720 -> ~1890 MHz) / do_bench: d64 s512 +4% / +1%, s1k +4% / -0.5%,
// s2k +5% / -1%, s4k +3% / -3%, s8k -1% / -5%, s16k -1% / -3%; d128 s512
// +3% / -1%, s1k +4% / -2%, s2k -2% / -5%, s4k -3% / -7%; d256 s2k -4% /
// -9%, s8k -6% / -9%. ~19:12, one run each: d32 s1k-4k +2..4% / -2..-3%;
// d96 s1k-4k +0.4..4% / -1..+1%; d192 s1k +5% / +1%, s2k +5% / -2%, s4k
// +0.3% / -4%. d256 (H100, 2026-12-06, two calls): s512 +2..7% / +3%
// (off the cap: 1980 MHz at 620-660 W against 1940-1970 MHz at 680 W; of
// flash sustained 0.90-0.92 -> 0.92-0.97), s1k +1% / -3%.
constexpr int sm80_fwd_rows_first_above(int head_dim) {
  switch (head_dim) {
    case 128: return 8;
    case 192: return 16;
    case 256: return 4;
    default: return 32;  // 32, 64, 96
  }
}

// With a mask and at most 8 query blocks a head, the d192 / d256 forward
// takes the kernel that walks the causal diagonal's later key block last
// and lets the warps blind to it skip it (fwd_kernel's kBlindLast). H100
// through FA2_CUDA_PATH=sm80, 2026-12-05, causal, against the plain kernel
// (CUDA events, two calls): d256 s512 +2..3.3%, s1k +0.7..1.5%; d192 s512
// +3..4.6%, s1k +0.5..2%. From 2k it loses (s4k -1.5..-2.1%, s16k
// -2.7..-3.5%: its loop carries the skip), and without a mask 2-3.5%, so
// the plain kernel stays for those. Against flash at d256 causal 512,
// sustained: 0.85-0.87 -> 0.90-0.91.
constexpr bool sm80_fwd_blind_last(bool has_mask, int m_blocks) {
  return has_mask && m_blocks <= 8;
}

// Decoding (dispatch.cpp's fwd_route, decode_kernel.cuh): calls of at most
// kDecodeMaxRows query rows an item (after folding a group's query heads
// into rows; typically 1-8) in items of 16 or 32 rows, their key blocks split
// into at most kMaxKvSplits parts, a part costing kKvSplitPartCost blocks
// beyond its own (core::kv_splits). A plan's block_m is a slab's 16 rows;
// its warps (a slab's) split each key block. d128, H100 2026-12-05 (decode
// grid): three stages of 64 keys (two CTAs an SM) level with two of 128
// but for batch 1 at 1k keys (-4%) and batch 8 at 64k-128k (+1-1.5%); 8
// warps of 16 keys spilled. d64, H100 2026-12-06 (two runs, rotated):
// three stages of 128 keys (two CTAs an SM) faster or level everywhere
// against two (batch 32 4k -7%, 16k -3%); 256 keys in two stages lost 5-8%
// at 1k-4k keys and won 1-2% from 64k. d96, the same day: three stages
// (one CTA an SM on an H100) 1-3% faster from 4k keys; d32: level either
// way, left at two.
inline constexpr int kDecodeMaxRows = 64;
// Items of two slabs (32 rows, the plan's warps for each slab) where the
// call has more than 16 (folded) rows: the slabs share each K / V stage,
// where two 16-row items each read the keys. H100 2026-12-06, against
// 16-row items (decode grid, bf16, 32 / 8 heads, two rounds each): 8
// drafted tokens x GQA 4 at d128 0.87-0.92 of the time at batch 32,
// 0.91-0.96 at batch 1 from 16k keys; at d64 0.59-0.92 at batch 8 / 32
// from 4k keys; 16 tokens at d128 0.65-0.72 from batch 8. Halving the
// items, the second slab would also split keys that 16-row items ran
// unsplit (batch 8 at d128): from 16k keys that won 4-9%, at 1k-4k the
// combine cost 3-15%, so below kDecodeSlabSplitMinBlocks key blocks such
// items stay unsplit.
inline constexpr int kDecodeMaxSlabs = 2;
inline constexpr int kDecodeSlabSplitMinBlocks = 64;
constexpr int sm80_fwd_decode_slabs(int rows) { return rows > 16 ? 2 : 1; }
inline constexpr int kMaxKvSplits = 64;
inline constexpr int kKvSplitPartCost = 2;
constexpr core::TilePlan sm80_fwd_decode_plan(int head_dim) {
  switch (head_dim) {
    case 32: return {16, 128, 32, 4, 2};
    case 64: return {16, 128, 64, 4, 3};
    case 96: return {16, 128, 96, 4, 3};
    case 128: return {16, 128, 128, 4, 2};
    case 192: return {16, 64, 192, 4, 2};
    case 256: return {16, 64, 256, 4, 2};
    default: return {};
  }
}

// Backward (FlashAttention-2's warp layout): every warp owns 32 of the
// block_n keys, and d_split warps share each such key slab. For S / dP they
// split the block_m queries between them (warp tiles of block_m / d_split
// queries x 32 keys); for dK / dV they split the head-dim columns (32 keys
// x head_dim / d_split). Two-slab tiles on both sides of every GEMM are
// what reuses each ldmatrix fragment for several mma; P and dS change
// hands through shared memory. `stages` 2 double-buffers the Q tile, 1
// loads Q after dK. `do_stages` 2 double-buffers dO too, loaded with the
// next Q a whole iteration ahead; 1 reloads it as soon as dV is done with
// it, behind a barrier of its own between dV and dQ.
struct BwdPlan {
  int block_m;
  int block_n;
  int d_split;
  int stages;
  int do_stages;
  constexpr int warps() const { return block_n / 32 * d_split; }
  constexpr bool operator==(const BwdPlan &o) const {
    return block_m == o.block_m && block_n == o.block_n && d_split == o.d_split &&
           stages == o.stages && do_stages == o.do_stages;
  }
};

// The shared memory per block a backward plan may take: the A100's opt-in
// limit (163 KB), or the H100 / H200's (227 KB).
enum class SmemBudget { a100, hopper };
constexpr int smem_budget_bytes(SmemBudget budget) {
  return (budget == SmemBudget::a100 ? 163 : 227) * 1024;
}

// The larger budget buys second buffers: dO's (no barrier between dV and
// dQ, and dO's copies a whole iteration ahead instead of behind dQ and dK
// alone) and, at d192, Q's as well. H200 through FA2_CUDA_PATH=sm80, CUDA
// events, bf16, 16k tokens, both orders, 1k-16k: 2026-12-04 ~14:40, d64
// +1..4.4% (16k 268 -> 280 TF/s), d128 +4..6% (16k 299 -> 316), d32
// -1..+0.7% and d96 -0.7..0% (those two keep one); ~14:55, d192 +1..2%
// (16k 200.5 -> 204). d256 with both spilled 268 bytes. They take 178 /
// 171 / 169 KB at d64 / d128 / d192: Hopper's budget only.
constexpr BwdPlan sm80_bwd_plan(int head_dim, SmemBudget budget) {
  const int roomy = budget == SmemBudget::hopper ? 2 : 1;  // buffers where the room allows
  switch (head_dim) {
    case 32: return {128, 128, 2, 2, 1};
    case 64: return {128, 128, 2, 2, roomy};
    case 96: return {64, 128, 2, 2, 1};
    case 128: return {64, 128, 2, 2, roomy};
    case 192: return {64, 64, 4, roomy, roomy};
    case 256: return {64, 64, 4, 1, 1};
    default: return {0, 0, 0, 0, 0};
  }
}

// The backward kernels whose sm_90 code adds dQ in the paired accumulator
// layout (bwd_scratch.h's dq_pair_offset: a 16-byte atomic a lane, no
// shuffles) rather than in RowPieces' rows (gathered by shuffles). Through
// FA2_CUDA_PATH=sm80, bf16, CUDA events at 1k-16k (NOTES.md): H100
// 2026-12-07 ~16:33, d128 +0.5..1.5% (sustained 8k 313 -> 318 TF/s, 1.06
// of flash); H200 ~18:24, against 8-byte atomics, d32 +3..6%, d96
// +9..12%, d192 +14..21%; d256 against pieces staged in shared memory
// (an H100 ~22:45, 16k) +1.0% by events, +1.2% sustained (241 -> 244
// TF/s, 0.92 -> 0.93 of flash). Not d64: level sustained, -1..-2% by
// events from 8k (its main loop 217 instructions shorter but in another
// order). On sm_80 code the atomics would be 4-byte ones, each touching
// twice the sectors it does in rows.
constexpr bool sm80_bwd_pairs_dq(int head_dim) { return head_dim != 64; }

// L2 bytes a masked backward may count on for the Q and dO of the heads
// whose key blocks it interleaves (core::bwd_item: heavy causal blocks
// start first). H200 through FA2_CUDA_PATH=sm80, 2026-11-29 22:01, against
// the plain order: causal 1k-4k +2..4% at d64, +3..5% at d128 and d256;
// 16 MB is also well inside the A100's 40 MB (not measured there).
inline constexpr int64_t kSm80BwdCacheBytes = int64_t(16) << 20;

}  // namespace fa2::cuda
