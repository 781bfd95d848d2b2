#include "run_case.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <random>

namespace fa2::test {
namespace {

double round_to(fa2_dtype_t dtype, double x) {
  switch (dtype) {
    case FA2_DTYPE_F16:
      return ref::RoundF16::round(x);
    case FA2_DTYPE_BF16:
      return ref::RoundBF16::round(x);
    default:
      return ref::RoundF32::round(x);
  }
}

ref::NaiveResult naive(fa2_dtype_t dtype, const ref::Problem &p, const std::vector<double> &q,
                       const std::vector<double> &k, const std::vector<double> &v,
                       const std::vector<double> *dout) {
  switch (dtype) {
    case FA2_DTYPE_F16:
      return ref::naive_lowp<ref::RoundF16>(p, q, k, v, dout);
    case FA2_DTYPE_BF16:
      return ref::naive_lowp<ref::RoundBF16>(p, q, k, v, dout);
    default:
      return ref::naive_lowp<ref::RoundF32>(p, q, k, v, dout);
  }
}

// Standard normal values representable in the case's dtype.
Inputs fresh_inputs(const Case &c, const ref::Problem &p) {
  std::mt19937_64 rng(c.seed());
  std::normal_distribution<double> normal;
  auto draw = [&](size_t n) {
    std::vector<double> x(n);
    for (double &e : x) e = round_to(c.dtype, normal(rng));
    return x;
  };
  Inputs in;
  in.q = draw(p.q_elements());
  in.k = draw(p.k_elements());
  in.v = draw(p.k_elements());
  in.dout = draw(p.q_elements());
  return in;
}

}  // namespace

Inputs prepare_inputs(Operands &ops, const Case &c) {
  Inputs in = fresh_inputs(c, ops.problem());
  ops.set(Operand::q, in.q);
  ops.set(Operand::k, in.k);
  ops.set(Operand::v, in.v);
  ops.set(Operand::dout, in.dout);
  ops.upload_all();
  return in;
}

fa2_shape_t shape_of(const Case &c) {
  const int64_t batch = c.varlen() ? int64_t(c.lens_q.size()) : c.batch;
  return fa2_shape_t{batch, c.seqlen_q, c.seqlen_k, c.heads_q, c.heads_kv, c.head_dim};
}

fa2_options_t options_of(const Case &c, const Operands &ops) {
  fa2_options_t o = FA2_OPTIONS_INIT;
  o.softmax_scale = c.softmax_scale;
  o.causal = c.causal;
  o.window_left = c.window_left;
  o.window_right = c.window_right;
  o.cu_seqlens_q = ops.cu_q_device();
  o.cu_seqlens_k = ops.cu_k_device();
  return o;
}

namespace {

bool is_refusal(fa2_status_t s) {
  return s == FA2_ERROR_UNSUPPORTED_HEAD_DIM || s == FA2_ERROR_UNSUPPORTED_DTYPE;
}

// Workspace sized by the query; a refused query still makes the call, with
// no workspace, so that the call's own refusal is checked too. The
// workspace starts as all-ones bytes (NaN as floats): a call may not count
// on what it held.
template <class Query, class Call>
fa2_status_t with_workspace(const Session &s, Query query, Call call) {
  size_t bytes = 0;
  const fa2_status_t queried = query(&bytes);
  if (queried != FA2_SUCCESS) bytes = 0;
  std::unique_ptr<DeviceBuffer> workspace;
  if (bytes > 0) {
    workspace = std::make_unique<DeviceBuffer>(s.memory(), bytes);
    workspace->upload(std::vector<uint8_t>(bytes, 0xff));
  }
  const fa2_status_t status = call(workspace ? workspace->get() : nullptr, bytes);
  s.memory().synchronize();
  if (queried != FA2_SUCCESS) {
    EXPECT_EQ(status, queried) << "the workspace query and the call disagree";
  }
  return status;
}

fa2_status_t call_forward(const Session &s, const Case &c, const Operands &ops) {
  const fa2_shape_t shape = shape_of(c);
  const fa2_options_t options = options_of(c, ops);
  const fa2_tensor_t q = ops.tensor(Operand::q), k = ops.tensor(Operand::k),
                     v = ops.tensor(Operand::v), out = ops.tensor(Operand::out);
  return with_workspace(
      s,
      [&](size_t *bytes) {
        return fa2_fwd_workspace_size(s.handle(), &shape, c.dtype, &options, bytes);
      },
      [&](void *ws, size_t bytes) {
        return fa2_fwd(s.handle(), &shape, &q, &k, &v, &out, ops.lse_device(), &options, ws, bytes,
                       s.stream());
      });
}

fa2_status_t call_backward(const Session &s, const Case &c, const Operands &ops) {
  const fa2_shape_t shape = shape_of(c);
  const fa2_options_t options = options_of(c, ops);
  fa2_tensor_t t[int(Operand::count)];
  for (int i = 0; i < int(Operand::count); ++i) t[i] = ops.tensor(Operand(i));
  auto at = [&](Operand op) { return &t[int(op)]; };
  return with_workspace(
      s,
      [&](size_t *bytes) {
        return fa2_bwd_workspace_size(s.handle(), &shape, c.dtype, &options, bytes);
      },
      [&](void *ws, size_t bytes) {
        return fa2_bwd(s.handle(), &shape, at(Operand::dout), at(Operand::q), at(Operand::k),
                       at(Operand::v), at(Operand::out), ops.lse_device(), at(Operand::dq),
                       at(Operand::dk), at(Operand::dv), &options, ws, bytes, s.stream());
      });
}

void expect_refused_cleanly(const Session &s, const Case &c, const Operands &ops,
                            const std::vector<std::vector<uint8_t>> &before, fa2_status_t status,
                            const char *pass) {
  EXPECT_TRUE(ops.output_images() == before) << "a refused " << pass << " wrote to an output";
  EXPECT_STRNE(fa2_last_error(s.handle()), "") << "a refusal must say why";
  std::cout << "[ REFUSED  ] " << c.name() << " " << pass << ": " << fa2_status_string(status)
            << " (" << fa2_last_error(s.handle()) << ")\n";
}

double max_abs(const std::vector<double> &x) {
  double m = 0;
  for (double e : x) m = std::max(m, std::abs(e));
  return m;
}

// Largest |x - ref| and where it is.
std::pair<double, size_t> max_error(const std::vector<double> &x, const std::vector<double> &ref) {
  std::pair<double, size_t> worst{0.0, 0};
  for (size_t e = 0; e < ref.size(); ++e) {
    const double err = std::abs(x[e] - ref[e]);
    if (!(err <= worst.first)) worst = {err, e};  // NaN counts as worst
  }
  return worst;
}

void expect_error_rule(const char *what, fa2_dtype_t dtype, const std::vector<double> &ours,
                       const std::vector<double> &ref64, const std::vector<double> &lowp,
                       double factor) {
  const auto [err, worst] = max_error(ours, ref64);
  const double naive_err = max_error(lowp, ref64).first;
  const double allowed = allowed_error(dtype, factor, naive_err, max_abs(ref64));
  // Kept in the XML report (--gtest_output=xml): how close each case runs to its limit.
  ::testing::Test::RecordProperty(std::string(what) + "_error_over_allowed",
                                  std::to_string(err / allowed));
  EXPECT_LE(err, allowed) << what << ": max |ours - float64| = " << err << " at element " << worst
                          << " (ours " << ours[worst] << ", float64 " << ref64[worst] << "); naive "
                          << dtype_name(dtype) << " error " << naive_err;
}

// lse and the rows that see no key: those must be exactly out 0, lse -inf.
int64_t expect_lse_and_masked_rows(const ref::Problem &p, const std::vector<double> &lse,
                                   const std::vector<double> &out, const ref::Forward &ref64) {
  int64_t masked = 0, wrong_masked = 0, wrong_lse = 0;
  double lse_err = 0;
  for (int b = 0; b < p.batch(); ++b)
    for (int h = 0; h < p.heads_q; ++h)
      for (int i = 0; i < p.seqlen_q(b); ++i) {
        const size_t at = p.lse_at(b, h, i);
        if (ref64.lse[at] == ref::kNegInf) {
          ++masked;
          bool zero = lse[at] == ref::kNegInf;
          for (int c = 0; c < p.head_dim; ++c) zero = zero && out[p.q_at(b, i, h) + c] == 0.0;
          wrong_masked += !zero;
          continue;
        }
        const double err = std::abs(lse[at] - ref64.lse[at]);
        lse_err = std::max(lse_err, err);
        wrong_lse += !(err <= kLseTolerance * std::max(1.0, std::abs(ref64.lse[at])));
      }
  EXPECT_EQ(wrong_masked, 0) << "of " << masked
                             << " rows that see no key, these are not exactly out 0, lse -inf";
  EXPECT_EQ(wrong_lse, 0) << "lse rows off float64 by more than " << kLseTolerance
                          << " relative (max error " << lse_err << ")";
  return masked;
}

}  // namespace

CaseReport run_case(const Session &session, const Case &c) {
  CaseReport report;
  Operands ops(session.memory(), c);
  const ref::Problem &p = ops.problem();
  const Inputs in = prepare_inputs(ops, c);

  const auto poisoned = ops.output_images();
  const fa2_status_t fwd = call_forward(session, c, ops);
  if (is_refusal(fwd)) {
    expect_refused_cleanly(session, c, ops, poisoned, fwd, "forward");
    report.refused = true;
    return report;
  }
  EXPECT_EQ(fwd, FA2_SUCCESS) << fa2_last_error(session.handle());
  if (fwd != FA2_SUCCESS) return report;
  ops.download_outputs();
  ops.expect_written_exactly(false);

  const ref::Forward ref64 = ref::forward(p, in.q, in.k, in.v);
  const ref::NaiveResult lowp =
      naive(c.dtype, p, in.q, in.k, in.v, c.backward ? &in.dout : nullptr);
  const std::vector<double> out = ops.get(Operand::out);
  expect_error_rule("out", c.dtype, out, ref64.out, lowp.fwd.out, kForwardFactor);
  report.fully_masked_rows = expect_lse_and_masked_rows(p, ops.lse(), out, ref64);
  if (!c.backward) return report;

  const auto after_forward = ops.output_images();
  const fa2_status_t bwd = call_backward(session, c, ops);
  if (is_refusal(bwd)) {
    expect_refused_cleanly(session, c, ops, after_forward, bwd, "backward");
    report.refused = true;
    return report;
  }
  EXPECT_EQ(bwd, FA2_SUCCESS) << fa2_last_error(session.handle());
  if (bwd != FA2_SUCCESS) return report;
  const auto after_backward = ops.output_images();
  EXPECT_TRUE(after_backward.front() == after_forward.front()) << "the backward changed out";
  EXPECT_TRUE(after_backward.back() == after_forward.back()) << "the backward changed lse";
  ops.download_outputs();
  ops.expect_written_exactly(true);

  const ref::Grads grads = ref::backward(p, in.q, in.k, in.v, in.dout);
  expect_error_rule("dq", c.dtype, ops.get(Operand::dq), grads.dq, lowp.grads.dq, kGradientFactor);
  expect_error_rule("dk", c.dtype, ops.get(Operand::dk), grads.dk, lowp.grads.dk, kGradientFactor);
  expect_error_rule("dv", c.dtype, ops.get(Operand::dv), grads.dv, lowp.grads.dv, kGradientFactor);
  return report;
}

std::vector<std::vector<uint8_t>> forward_images(const Session &session, const Case &c) {
  Operands ops(session.memory(), c);
  prepare_inputs(ops, c);
  const fa2_status_t status = call_forward(session, c, ops);
  if (is_refusal(status)) return {};
  EXPECT_EQ(status, FA2_SUCCESS) << fa2_last_error(session.handle());
  const auto images = ops.output_images();
  return {images.front(), images.back()};
}

}  // namespace fa2::test
