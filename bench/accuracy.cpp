#include "accuracy.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "error_rule.h"
#include "reference.h"

namespace fa2::bench {
namespace {

using ref::SampledRow;

// How a row is computed: Exact in float64; Lowp<R> accumulating in float
// with every stage's result rounded to the storage type, like a framework.
struct Exact {
  using Acc = double;
  static double round(double x) { return x; }
};
template <class R>
struct Lowp {
  using Acc = float;
  static double round(double x) { return R::round(x); }
};

// Calls f with the Lowp policy of the dtype.
template <class F>
void with_lowp(fa2_dtype_t dtype, F &&f) {
  switch (dtype) {
    case FA2_DTYPE_F16: return f(Lowp<ref::RoundF16>{});
    case FA2_DTYPE_BF16: return f(Lowp<ref::RoundBF16>{});
    default: return f(Lowp<ref::RoundF32>{});
  }
}

// Reads the operands of one (fixed-length) problem as doubles.
struct Operands {
  const HostProblem &hp;
  ref::Problem problem = ref::problem_of(hp.shape, hp.options);

  static double at(const fa2_tensor_t &t, int b, int i, int h, int c) {
    return ref::load_element(t, b * t.stride_batch + int64_t(i) * t.stride_seq +
                                    int64_t(h) * t.stride_head + c);
  }
  double lse(int b, int h, int i) const {
    return hp.lse[(int64_t(b) * hp.shape.heads_q + h) * hp.shape.seqlen_q + i];
  }
  // Inner product of two rows, accumulated in P::Acc.
  template <class P>
  double dot(const fa2_tensor_t &x, int b, int i, int h, const fa2_tensor_t &y, int j, int hy) const {
    typename P::Acc acc = 0;
    for (int c = 0; c < problem.head_dim; ++c)
      acc += typename P::Acc(at(x, b, i, h, c)) * typename P::Acc(at(y, b, j, hy, c));
    return double(acc);
  }
};

// Naive low-precision forward of one query row (the exact one is ref::forward_rows).
template <class P>
void naive_forward_row(const Operands &ops, SampledRow row, double *out, double &lse) {
  const ref::Problem &p = ops.problem;
  const auto [b, h, i] = row;
  const int d = p.head_dim, lk = p.seqlen_k(b), hk = p.kv_head(h);
  std::vector<float> score(size_t(lk), -INFINITY);
  float row_max = -INFINITY;
  for (int j = 0; j < lk; ++j) {
    if (!p.visible(b, i, j)) continue;
    float acc = 0.f;
    for (int c = 0; c < d; ++c)
      acc += float(Operands::at(ops.hp.q, b, i, h, c)) *
             float(P::round(Operands::at(ops.hp.k, b, j, hk, c) * p.scale));
    score[j] = float(P::round(acc));
    row_max = std::max(row_max, score[j]);
  }
  std::fill(out, out + d, 0.0);
  lse = -INFINITY;
  if (row_max == -INFINITY) return;
  float sum = 0.f;
  for (int j = 0; j < lk; ++j) sum += std::exp(score[j] - row_max);
  std::vector<float> acc(size_t(d), 0.f);
  for (int j = 0; j < lk; ++j) {
    if (score[j] == -INFINITY) continue;
    const float prob = float(P::round(std::exp(score[j] - row_max) / sum));
    for (int c = 0; c < d; ++c) acc[c] += prob * float(Operands::at(ops.hp.v, b, j, hk, c));
  }
  for (int c = 0; c < d; ++c) out[c] = P::round(acc[c]);
  lse = row_max + std::log(sum);
}

// The backward's terms for query i and key j of sequence b:
// prob = exp(scale q.k - lse_i), ds = prob (dO_i.v_j - rowsum(dO_i * O_i)).
template <class P>
bool gradient_terms(const Operands &ops, int b, int h, int i, int j, double &prob, double &ds) {
  const ref::Problem &p = ops.problem;
  const double lse = ops.lse(b, h, i);
  if (!p.visible(b, i, j) || lse == -INFINITY) return false;
  const HostProblem &hp = ops.hp;
  const int hk = p.kv_head(h);
  const double delta = P::round(ops.template dot<P>(hp.dout, b, i, h, hp.out, i, h));
  const double score = P::round(ops.template dot<P>(hp.q, b, i, h, hp.k, j, hk) * p.scale);
  prob = P::round(std::exp(score - lse));
  const double dprob = P::round(ops.template dot<P>(hp.dout, b, i, h, hp.v, j, hk));
  ds = P::round(prob * (dprob - delta));
  return true;
}

template <class P>
void dq_row(const Operands &ops, SampledRow row, double *dq) {
  const ref::Problem &p = ops.problem;
  const auto [b, h, i] = row;
  const int d = p.head_dim, hk = p.kv_head(h);
  std::vector<typename P::Acc> acc(size_t(d), 0);
  double prob, ds;
  for (int j = 0; j < p.seqlen_k(b); ++j)
    if (gradient_terms<P>(ops, b, h, i, j, prob, ds))
      for (int c = 0; c < d; ++c)
        acc[c] += typename P::Acc(ds) * typename P::Acc(Operands::at(ops.hp.k, b, j, hk, c));
  for (int c = 0; c < d; ++c) dq[c] = P::round(acc[c] * p.scale);
}

// dk and dv of key row (b, kv head, j): a sum over every query of the group.
template <class P>
void dkv_row(const Operands &ops, SampledRow row, double *dk, double *dv) {
  const ref::Problem &p = ops.problem;
  const auto [b, hk, j] = row;
  const int d = p.head_dim, group = p.heads_q / p.heads_kv;
  std::vector<typename P::Acc> acc_k(size_t(d), 0), acc_v(size_t(d), 0);
  double prob, ds;
  for (int h = hk * group; h < (hk + 1) * group; ++h)
    for (int i = 0; i < p.seqlen_q(b); ++i)
      if (gradient_terms<P>(ops, b, h, i, j, prob, ds))
        for (int c = 0; c < d; ++c) {
          acc_k[c] += typename P::Acc(ds) * typename P::Acc(Operands::at(ops.hp.q, b, i, h, c));
          acc_v[c] += typename P::Acc(prob) * typename P::Acc(Operands::at(ops.hp.dout, b, i, h, c));
        }
  for (int c = 0; c < d; ++c) dk[c] = P::round(acc_k[c] * p.scale), dv[c] = P::round(acc_v[c]);
}

// Accumulates one row's comparison; the tolerance is set by finish().
void compare(ErrorCheck &check, double &ref_magnitude, const double *result, const double *exact,
             const double *naive, int n) {
  for (int c = 0; c < n; ++c) {
    if (std::isinf(exact[c]) && result[c] == exact[c]) continue;  // -inf lse of an empty row
    check.max_error = std::max(check.max_error, std::abs(result[c] - exact[c]));
    if (!std::isfinite(result[c])) check.max_error = INFINITY;
    check.naive_error = std::max(check.naive_error, std::abs(naive[c] - exact[c]));
    ref_magnitude = std::max(ref_magnitude, std::abs(exact[c]));
  }
}

// The conformance suite's rule (tests/reference/error_rule.h).
void finish(ErrorCheck &check, double ref_magnitude, fa2_dtype_t dtype, double factor) {
  check.tolerance = test::allowed_error(dtype, factor, check.naive_error, ref_magnitude);
}

std::vector<SampledRow> sample_rows(int batch, int heads, int seqlen, int count, unsigned seed) {
  std::vector<SampledRow> rows{{0, 0, 0}, {batch - 1, heads - 1, seqlen - 1}};
  std::mt19937 engine(seed);
  while (int(rows.size()) < count)
    rows.push_back({int(engine() % batch), int(engine() % heads), int(engine() % seqlen)});
  return rows;
}

// One tensor's rows compared: fa2's values are read from `result`.
struct RowSet {
  ErrorCheck check;
  double magnitude = 0;
  void add(const fa2_tensor_t &result, SampledRow row, const double *exact, const double *naive,
           int d) {
    std::vector<double> values(static_cast<size_t>(d));
    for (int c = 0; c < d; ++c) values[c] = Operands::at(result, row.batch, row.row, row.head, c);
    compare(check, magnitude, values.data(), exact, naive, d);
  }
};

}  // namespace

std::vector<ErrorCheck> check_forward(const HostProblem &hp, int count, unsigned seed) {
  const Operands ops{hp};
  const int d = ops.problem.head_dim;
  const auto rows = sample_rows(int(hp.shape.batch), int(hp.shape.heads_q),
                                int(hp.shape.seqlen_q), count, seed);
  const ref::SampledForward exact = ref::forward_rows(hp.shape, hp.options, hp.q, hp.k, hp.v, rows);
  RowSet out{{"out"}}, lse{{"lse"}};
  std::vector<double> naive(static_cast<size_t>(d));
  for (size_t r = 0; r < rows.size(); ++r) {
    double naive_lse = 0;
    with_lowp(hp.q.dtype, [&](auto policy) {
      naive_forward_row<decltype(policy)>(ops, rows[r], naive.data(), naive_lse);
    });
    out.add(hp.out, rows[r], &exact.out[r * d], naive.data(), d);
    const double fa2_lse = ops.lse(rows[r].batch, rows[r].head, rows[r].row);
    compare(lse.check, lse.magnitude, &fa2_lse, &exact.lse[r], &naive_lse, 1);
  }
  finish(out.check, out.magnitude, hp.q.dtype, test::kForwardFactor);
  lse.check.tolerance = test::kLseTolerance * std::max(1.0, lse.magnitude);
  return {out.check, lse.check};
}

std::vector<ErrorCheck> check_backward(const HostProblem &hp, int count, unsigned seed) {
  const Operands ops{hp};
  const int d = ops.problem.head_dim;
  const int batch = int(hp.shape.batch);
  RowSet dq{{"dq"}}, dk{{"dk"}}, dv{{"dv"}};
  const size_t n = static_cast<size_t>(d);
  std::vector<double> exact(n), naive(n), exact_v(n), naive_v(n);
  for (SampledRow row : sample_rows(batch, int(hp.shape.heads_q), int(hp.shape.seqlen_q), count, seed)) {
    dq_row<Exact>(ops, row, exact.data());
    with_lowp(hp.q.dtype, [&](auto policy) { dq_row<decltype(policy)>(ops, row, naive.data()); });
    dq.add(hp.dq, row, exact.data(), naive.data(), d);
  }
  for (SampledRow row :
       sample_rows(batch, int(hp.shape.heads_kv), int(hp.shape.seqlen_k), count, seed + 1)) {
    dkv_row<Exact>(ops, row, exact.data(), exact_v.data());
    with_lowp(hp.q.dtype, [&](auto policy) {
      dkv_row<decltype(policy)>(ops, row, naive.data(), naive_v.data());
    });
    dk.add(hp.dk, row, exact.data(), naive.data(), d);
    dv.add(hp.dv, row, exact_v.data(), naive_v.data(), d);
  }
  for (RowSet *set : {&dq, &dk, &dv}) finish(set->check, set->magnitude, hp.q.dtype, test::kGradientFactor);
  return {dq.check, dk.check, dv.check};
}

const ErrorCheck &worst(const std::vector<ErrorCheck> &checks) {
  auto ratio = [](const ErrorCheck &c) {
    return c.tolerance > 0 ? c.max_error / c.tolerance : (c.max_error > 0 ? INFINITY : 0.0);
  };
  return *std::max_element(checks.begin(), checks.end(),
                           [&](const ErrorCheck &a, const ErrorCheck &b) { return ratio(a) < ratio(b); });
}

}  // namespace fa2::bench
