// Block sizes of the Hopper forward kernel, one constexpr table indexed by
// the kernel's head-dim bucket. Query blocks are 64 rows per consumer
// warpgroup (the M of one wgmma); key blocks are the N of Q K^T. Shared
// memory: Q plus `stages` K and V tiles, within the H100/H200's 227 KB.
#pragma once

#include "core/tile_plan.h"

namespace fa2::cuda::sm90 {

// Head dims up to 32 stay on the sm80 kernels (a 64-wide Hopper tile would
// be half padding); everything else rounds up to one of these.
inline constexpr int kHeadDimBuckets[] = {64, 128, 256};
// Shared memory one CTA may opt into on the H100 / H200.
inline constexpr int kMaxSmemBytes = 227 * 1024;
inline constexpr int kMinHeadDim = 33;

// workers = consumer warpgroups; block_m = 64 * workers.
constexpr core::TilePlan sm90_fwd_plan(int head_dim) {
  switch (head_dim) {
    case 64: return {128, 128, 64, 2, 3};
    case 128: return {128, 128, 128, 2, 2};
    case 256: return {128, 64, 256, 2, 2};
    default: return {0, 0, 0, 0, 0};
  }
}

// Whether the forward runs persistent CTAs (one per SM, each loading its
// next tile while it finishes the current one, masked work balanced by the
// snake order; see fwd_kernel.cuh) instead of one CTA per tile. Measured on
// the H200, 2026-11-29, against one CTA per tile (backends/cuda/NOTES.md),
// in core::fwd_item's order: with a mask, d64 +2..39%, d128 +1..10%, d256
// +3..7% from 2k keys (-7% below: its single Q buffer makes the next tile
// wait for this one's last Q K^T); without, d64 +2..32%, d128 +8..18% up to
// 1k keys (-1..-9% from 2k), d256 +4..11% up to 2k (even at 16k).
constexpr bool persistent_fwd(int head_dim, bool has_mask, int seqlen_k) {
  switch (head_dim) {
    case 64: return true;
    case 128: return has_mask || seqlen_k <= 1024;
    default: return has_mask ? seqlen_k >= 2048 : seqlen_k <= 2048;
  }
}

// Backward: block_m queries per step, block_n = 64 * workers keys per CTA
// (each consumer warpgroup owns 64), `stages` deep Q / dO ring. Head dim
// 256 stays on the sm80 backward (dK and dV of 64 keys x 256 columns do
// not fit a warpgroup's registers next to the rest).
inline constexpr int kBwdHeadDimBuckets[] = {64, 128};
constexpr core::TilePlan sm90_bwd_plan(int head_dim) {
  switch (head_dim) {
    case 64: return {64, 128, 64, 2, 2};
    case 128: return {64, 128, 128, 2, 2};
    default: return {0, 0, 0, 0, 0};
  }
}

}  // namespace fa2::cuda::sm90
