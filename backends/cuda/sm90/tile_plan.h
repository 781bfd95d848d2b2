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
