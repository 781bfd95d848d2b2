// The FlashAttention-2 online softmax, written once for every backend.
//
// Per query row we keep the running maximum of the raw scores (row_max; a
// kernel may let it lag, online_softmax_step's kMaxLag) and a running sum of
// exp2((s - row_max) * scale_log2) (row_sum). The output
// accumulator stays *unscaled*: each new key block multiplies it by one
// correction factor, and the division by the sum happens once, at the end.
// Only the logsumexp leaves the forward pass.
//
// A backend gives each thread kCols scores of a row, and a RowReduce whose
// max() / sum() combine values across the lanes that share that row (the
// identity on a CPU, shuffles on a GPU). The core never knows how wide a
// warp is or which lanes share a row.
#pragma once

#include <cmath>

#include "core/portability.h"

namespace fa2::core {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

// Lanes-of-one reducer, for backends where one thread owns whole rows.
struct ThreadRowReduce {
  FA2_INLINE float max(float x) const { return x; }
  FA2_INLINE float sum(float x) const { return x; }
};

// On a GPU fmaxf is one instruction; the compare-and-select form would be
// two, a compare then a select waiting on its predicate. Host compilers
// vectorise the select form.
FA2_INLINE float fmax_f(float a, float b) {
#if FA2_DEVICE_PASS
  return fmaxf(a, b);
#else
  return a > b ? a : b;
#endif
}

struct MaxOp {
  FA2_INLINE float operator()(float a, float b) const { return fmax_f(a, b); }
};
struct SumOp {
  FA2_INLINE float operator()(float a, float b) const { return a + b; }
};

// A row's max or sum as kChains independent chains over its kCols values,
// combined pairwise at the end. One chain is the plain left-to-right loop.
// More give a GPU thread shorter dependency chains: its softmax then ends
// sooner, which pays where the warp waits on it, but changes how the
// instructions interleave with the rest (measured per kernel: the callers'
// tile plans say which they take).
template <int kChains, int kCols, class Op>
FA2_INLINE float fold_row(const float (&values)[kCols], Op op) {
  constexpr int kParts = kCols < kChains ? kCols : kChains;
  float part[kParts];
FA2_UNROLL
  for (int i = 0; i < kParts; ++i) part[i] = values[i];
FA2_UNROLL
  for (int c0 = kParts; c0 < kCols; c0 += kParts)
FA2_UNROLL
    for (int i = 0; i < kParts; ++i)
      if (c0 + i < kCols) part[i] = op(part[i], values[c0 + i]);
FA2_UNROLL
  for (int stride = 1; stride < kParts; stride *= 2)
FA2_UNROLL
    for (int i = 0; i + stride < kParts; i += 2 * stride) part[i] = op(part[i], part[i + stride]);
  return part[0];
}

// exp2 used by the softmax. A backend whose compiler cannot vectorise the
// libm call (the CPU) passes its own functor with the same contract:
// exp2(-inf) == 0, finite elsewhere for arguments <= 0.
struct StdExp2 {
  FA2_INLINE float operator()(float x) const { return exp2f(x); }
};

struct RowState {
  float row_max = -INFINITY;  // over raw (unscaled) scores seen so far
  float row_sum = 0.f;        // this thread's share of the row's sum
};

// Subtracted inside exp2: for a row with no visible key yet (max -inf)
// use 0 so that exp2(-inf - 0) = 0 instead of NaN.
FA2_INLINE float max_scaled(float row_max, float scale_log2) {
  return row_max == -INFINITY ? 0.f : row_max * scale_log2;
}

// One key block. On entry `scores` hold raw q.k (invisible ones -inf); on
// exit they hold the unnormalised probabilities p = exp2(s*c - max*c).
// Returns the factor by which the caller rescales its output accumulator.
// kChains: fold_row.
// kMaxLag > 0: the max the probabilities are taken against (row_max) moves
// only when the block's max exceeds it by more than a factor 2^kMaxLag
// after scaling; until then p <= 2^kMaxLag (to rounding) and the
// correction is exactly 1, so a caller may skip its rescale
// (FlashAttention-4's conditional rescaling). Still exact: the sum, the
// accumulator and the lse all use the same max, and 2^kMaxLag is far
// inside fp32, f16 and bf16 range.
template <int kCols, int kChains = 1, int kMaxLag = 0, class RowReduce, class Exp2 = StdExp2>
FA2_INLINE float online_softmax_step(float (&scores)[kCols], RowState &row, float scale_log2,
                                     const RowReduce &reduce, const Exp2 &exp2 = Exp2{}) {
  const float block_max = fold_row<kChains>(scores, MaxOp{});
  float new_max = reduce.max(fmax_f(row.row_max, block_max));
  if constexpr (kMaxLag > 0) {
    // From row_max -inf the difference is +inf (a first key: the max moves)
    // or NaN (still no key: -inf stays).
    if ((new_max - row.row_max) * scale_log2 <= float(kMaxLag)) new_max = row.row_max;
  }
  const float shift = max_scaled(new_max, scale_log2);
  // A row that had no visible key has nothing to rescale; exp2(0 - shift)
  // would overflow to inf for very negative scores and turn 0 * inf into NaN.
  const float correction = row.row_max == -INFINITY               ? 0.f
                           : kMaxLag > 0 && new_max == row.row_max ? 1.f
                           : exp2(row.row_max * scale_log2 - shift);
FA2_UNROLL
  for (int c = 0; c < kCols; ++c) scores[c] = exp2(scores[c] * scale_log2 - shift);
  row.row_max = new_max;
  row.row_sum = row.row_sum * correction + fold_row<kChains>(scores, SumOp{});
  return correction;
}

struct RowResult {
  float out_scale;  // multiply the unscaled accumulator by this once
  float lse;        // natural-log logsumexp of scale * scores
};

// After the last key block. A row that saw no visible key gets output 0 and
// lse -inf (the exact value).
template <class RowReduce>
FA2_INLINE RowResult online_softmax_finish(const RowState &row, float scale,
                                           const RowReduce &reduce) {
  const float total = reduce.sum(row.row_sum);
  if (total == 0.f || row.row_max == -INFINITY) return {0.f, -INFINITY};
  return {1.f / total, row.row_max * scale + logf(total)};
}

// Backward: the probabilities recomputed from the stored logsumexp,
// p = exp(scale*s - lse) = exp2(s*scale_log2 - lse*log2e). A row with
// lse -inf saw no key; its p is 0 (not exp2(inf)).
FA2_INLINE float lse_log2(float lse) { return lse == -INFINITY ? INFINITY : lse * kLog2e; }
template <class Exp2 = StdExp2>
FA2_INLINE float prob_from_lse(float score, float scale_log2, float lse_in_log2,
                               const Exp2 &exp2 = Exp2{}) {
  return exp2(score * scale_log2 - lse_in_log2);
}

}  // namespace fa2::core
