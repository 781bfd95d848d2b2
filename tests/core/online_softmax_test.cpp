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
    const float correction = online_softmax_step(block, row, scale_log2, ThreadRowReduce{});
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
    const RowOutput got = online(scores, values, scale), want = one_shot(scores, values, scale);
    if (want.lse == -INFINITY) {
      EXPECT_EQ(got.lse, -INFINITY);
    } else {
      EXPECT_NEAR(got.lse, want.lse, 1e-5 * (1 + std::fabs(want.lse))) << "trial " << trial;
    }
    for (int d = 0; d < dim; ++d) EXPECT_NEAR(got.out[d], want.out[d], 1e-5) << "trial " << trial;
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

}  // namespace
}  // namespace fa2::core
