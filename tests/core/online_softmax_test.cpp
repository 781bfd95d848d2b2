// online_softmax.h: block-by-block processing equals a one-shot softmax in
// double; rows without a visible key give output 0 and lse -inf, never NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/online_softmax.h"

namespace fa2::core {
namespace {

constexpr int kCols = 8;

struct RowOutput {
  std::vector<double> out;
  double lse;
};

// Feeds `scores` (raw q.k) and one value column per key through the online
// softmax kCols at a time, as a kernel would, and returns the output row.
template <int kMaxLag = 0>
RowOutput online(const std::vector<float> &scores, const std::vector<std::vector<float>> &values,
                 float scale) {
  const int dim = int(values.empty() ? 0 : values[0].size());
  RowState row;
  std::vector<float> accum(dim, 0.f);
  const float scale_log2 = scale * kLog2e;
  for (size_t start = 0; start < scores.size(); start += kCols) {
    float block[kCols];
    for (int c = 0; c < kCols; ++c)
      block[c] = start + c < scores.size() ? scores[start + c] : -INFINITY;
    const float max_before = row.row_max;
    const float correction =
        online_softmax_step<kCols, 1, kMaxLag>(block, row, scale_log2, ThreadRowReduce{});
    if (kMaxLag > 0 && row.row_max == max_before && max_before != -INFINITY)
      EXPECT_EQ(correction, 1.f);  // what lets a kernel skip its rescale
    for (int c = 0; c < kCols; ++c) EXPECT_LE(block[c], std::exp2(float(kMaxLag)) * 1.0001f);
    for (int d = 0; d < dim; ++d) {
      accum[d] *= correction;
      for (int c = 0; c < kCols && start + c < scores.size(); ++c)
        accum[d] += block[c] * values[start + c][d];
    }
  }
  const RowResult result = online_softmax_finish(row, scale, ThreadRowReduce{});
  RowOutput o{std::vector<double>(dim), result.lse};
  for (int d = 0; d < dim; ++d) o.out[d] = double(accum[d]) * result.out_scale;
  return o;
}

RowOutput one_shot(const std::vector<float> &scores, const std::vector<std::vector<float>> &values,
                   double scale) {
  const int dim = int(values.empty() ? 0 : values[0].size());
  double max = -INFINITY;
  for (float s : scores) max = std::fmax(max, scale * s);
  RowOutput o{std::vector<double>(dim, 0.0), -INFINITY};
  if (max == -INFINITY) return o;
  double sum = 0;
  for (float s : scores) sum += std::exp(scale * s - max);
  for (size_t j = 0; j < scores.size(); ++j)
    for (int d = 0; d < dim; ++d) o.out[d] += std::exp(scale * scores[j] - max) / sum * values[j][d];
  o.lse = max + std::log(sum);
  return o;
}

TEST(OnlineSoftmax, MatchesOneShotSoftmax) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 1 + int(rng() % 100), dim = 1 + int(rng() % 5);
    const float scale = 0.05f + float(rng() % 100) / 50.f;
    const float spread = trial % 3 == 0 ? 30.f : 3.f;  // large spreads stress the rescaling
    std::vector<float> scores(n);
    std::vector<std::vector<float>> values(n, std::vector<float>(dim));
    for (int j = 0; j < n; ++j) {
      scores[j] = rng() % 5 == 0 ? -INFINITY : spread * normal(rng);  // some masked keys
      for (float &v : values[j]) v = normal(rng);
    }
    const RowOutput want = one_shot(scores, values, scale);
    // Both rules: the max always current, and the max lagging by up to 2^8.
    for (const RowOutput &got : {online(scores, values, scale), online<8>(scores, values, scale)}) {
      if (want.lse == -INFINITY) {
        EXPECT_EQ(got.lse, -INFINITY);
      } else {
        EXPECT_NEAR(got.lse, want.lse, 1e-5 * (1 + std::fabs(want.lse))) << "trial " << trial;
      }
      for (int d = 0; d < dim; ++d) EXPECT_NEAR(got.out[d], want.out[d], 1e-5) << "trial " << trial;
    }
  }
}

TEST(OnlineSoftmax, FullyMaskedRowGivesZeroAndMinusInf) {
  std::vector<float> scores(3 * kCols, -INFINITY);
  std::vector<std::vector<float>> values(scores.size(), std::vector<float>{1.f, -2.f});
  const RowOutput got = online(scores, values, 0.125f);
  EXPECT_EQ(got.lse, -INFINITY);
  for (double v : got.out) EXPECT_EQ(v, 0.0);

  RowState row;
  float block[kCols];
  for (float &s : block) s = -INFINITY;
  online_softmax_step(block, row, 1.f, ThreadRowReduce{});
  for (float p : block) EXPECT_EQ(p, 0.f);
  const RowResult r = online_softmax_finish(row, 1.f, ThreadRowReduce{});
  EXPECT_EQ(r.out_scale, 0.f);
  EXPECT_EQ(r.lse, -INFINITY);
}

// A masked first block followed by scores so negative that exp2(-max) would
// overflow: the first visible block must not rescale by inf (0 * inf = NaN).
TEST(OnlineSoftmax, MaskedThenVeryNegativeScoresStayFinite) {
  std::vector<float> scores(2 * kCols, -INFINITY);
  for (int c = kCols; c < 2 * kCols; ++c) scores[c] = -5000.f - float(c);
  std::vector<std::vector<float>> values(scores.size(), std::vector<float>{1.f});
  const RowOutput got = online(scores, values, 1.f), want = one_shot(scores, values, 1.f);
  ASSERT_FALSE(std::isnan(got.lse));
  EXPECT_NEAR(got.lse, want.lse, 1e-3);
  EXPECT_NEAR(got.out[0], 1.0, 1e-6);
}

TEST(OnlineSoftmax, ProbabilityFromLse) {
  const float scale = 0.3f, scale_log2 = scale * kLog2e;
  const float scores[] = {-4.f, 0.f, 2.5f, 7.f};
  double sum = 0;
  for (float s : scores) sum += std::exp(double(scale) * s);
  const float lse = float(std::log(sum));
  double total = 0;
  for (float s : scores) {
    const float p = prob_from_lse(s, scale_log2, lse_log2(lse));
    EXPECT_NEAR(p, std::exp(double(scale) * s) / sum, 1e-6);
    total += p;
  }
  EXPECT_NEAR(total, 1.0, 1e-6);
  // lse -inf: a row that saw no key; its probabilities are 0, not exp(inf).
  EXPECT_EQ(prob_from_lse(3.f, scale_log2, lse_log2(-INFINITY)), 0.f);
  EXPECT_EQ(prob_from_lse(-INFINITY, scale_log2, lse_log2(-INFINITY)), 0.f);
  EXPECT_EQ(prob_from_lse(-INFINITY, scale_log2, lse_log2(lse)), 0.f);
}

// The Exp2 policy replaces exp2f everywhere in the step.
TEST(OnlineSoftmax, Exp2PolicyIsUsed) {
  struct CountingExp2 {
    int *calls;
    float operator()(float x) const { return ++*calls, exp2f(x); }
  };
  int calls = 0;
  RowState row;
  float block[kCols] = {1, 2, 3, 4, 5, 6, 7, 8};
  online_softmax_step(block, row, 1.f, ThreadRowReduce{}, CountingExp2{&calls});
  EXPECT_GE(calls, kCols);
  EXPECT_EQ(block[kCols - 1], 1.f);
}

// fold_row's chains: the max is the same whatever their number, the sum
// the same up to rounding, also for widths that are not a multiple of the
// chain count and widths below it.
template <int kChains, int kWidth>
void expect_fold_matches_loop(std::mt19937 &rng) {
  std::normal_distribution<float> normal;
  float scores[kWidth], terms[kWidth];
  float max = -INFINITY;
  double sum = 0;
  for (int c = 0; c < kWidth; ++c) {
    scores[c] = rng() % 4 == 0 ? -INFINITY : 10.f * normal(rng);
    terms[c] = std::fabs(normal(rng));
    max = std::fmax(max, scores[c]);
    sum += terms[c];
  }
  EXPECT_EQ(fold_row<kChains>(scores, MaxOp{}), max) << kChains << " chains, " << kWidth;
  EXPECT_NEAR(fold_row<kChains>(terms, SumOp{}), sum, 1e-5 * sum) << kChains << " chains, " << kWidth;
}

TEST(OnlineSoftmax, FoldRowChainsAgree) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    expect_fold_matches_loop<8, 32>(rng);
    expect_fold_matches_loop<8, 13>(rng);
    expect_fold_matches_loop<8, 5>(rng);
    expect_fold_matches_loop<4, 7>(rng);
    expect_fold_matches_loop<1, 9>(rng);
  }
  const float row[] = {-3.f, 7.f, -INFINITY, 2.f, 7.5f, 0.f, -1.f, 4.f, 6.f, 1.f};
  EXPECT_EQ(fold_row<8>(row, MaxOp{}), 7.5f);
  EXPECT_EQ(fold_row<4>(row, MaxOp{}), 7.5f);
}

// With a lag the max moves only past 2^kMaxLag (after scaling), and then to
// the block's max.
TEST(OnlineSoftmax, LaggingMaxMovesOnlyPastTheLag) {
  const float scale_log2 = 0.5f;  // raw 16 = 2^8 after scaling
  RowState row;
  float first[kCols] = {1.f, -INFINITY, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  EXPECT_EQ((online_softmax_step<kCols, 1, 8>(first, row, scale_log2, ThreadRowReduce{})), 0.f);
  EXPECT_EQ(row.row_max, 1.f);
  float within[kCols] = {17.f, 3.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};  // 1 + 16: at the lag
  EXPECT_EQ((online_softmax_step<kCols, 1, 8>(within, row, scale_log2, ThreadRowReduce{})), 1.f);
  EXPECT_EQ(row.row_max, 1.f);
  EXPECT_EQ(within[0], 256.f);
  float past[kCols] = {17.5f, 3.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  const float correction =
      online_softmax_step<kCols, 1, 8>(past, row, scale_log2, ThreadRowReduce{});
  EXPECT_EQ(row.row_max, 17.5f);
  EXPECT_FLOAT_EQ(correction, std::exp2(-16.5f * scale_log2));
  EXPECT_EQ(past[0], 1.f);
}

// A step with 8 chains gives the probabilities and state of one chain.
TEST(OnlineSoftmax, StepWithChainsMatchesOneChain) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  for (int trial = 0; trial < 100; ++trial) {
    float one[24], eight[24];
    for (int c = 0; c < 24; ++c) one[c] = eight[c] = rng() % 5 == 0 ? -INFINITY : 4.f * normal(rng);
    RowState row_one{2.f, 3.f}, row_eight{2.f, 3.f};
    const float c1 = online_softmax_step<24, 1>(one, row_one, 0.7f, ThreadRowReduce{});
    const float c8 = online_softmax_step<24, 8>(eight, row_eight, 0.7f, ThreadRowReduce{});
    EXPECT_EQ(c1, c8);
    EXPECT_EQ(row_one.row_max, row_eight.row_max);
    EXPECT_NEAR(row_one.row_sum, row_eight.row_sum, 1e-5f * row_one.row_sum);
    for (int c = 0; c < 24; ++c) EXPECT_EQ(one[c], eight[c]);
  }
}

}  // namespace
}  // namespace fa2::core
