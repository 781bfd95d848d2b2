// Attention as a framework computes it in low precision: every stage's
// result is rounded to the storage type (matmuls accumulate in float, the
// softmax runs in float), and the operations come in a different order from
// the kernels (K is scaled, not Q). Its distance from the float64 reference
// measures ordinary rounding; the error rule allows a kernel a few times that.
// Layout and visibility as in reference.h (included from there).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/numeric.h"

namespace fa2::ref {

// Rounding policies: the storage type of one dtype, as a double.
struct RoundF32 {
  static double round(double x) { return double(float(x)); }
};
struct RoundF16 {
  static double round(double x) { return core::f16_to_float(core::float_to_f16(float(x))); }
};
struct RoundBF16 {
  static double round(double x) { return core::bf16_to_float(core::float_to_bf16(float(x))); }
};

struct NaiveResult {
  Forward fwd;
  Grads grads;  // empty when no dout was given
};

// Forward (and backward when dout != nullptr), one (sequence, head) at a
// time with the full score matrix, exactly like an eager framework.
template <class Round>
NaiveResult naive_lowp(const Problem &p, const std::vector<double> &q, const std::vector<double> &k,
                       const std::vector<double> &v, const std::vector<double> *dout) {
  auto R = [](double x) { return Round::round(x); };
  const int d = p.head_dim;
  NaiveResult r;
  r.fwd = Forward{std::vector<double>(p.q_elements(), 0.0),
                  std::vector<double>(p.lse_elements(), kNaN)};
  if (dout)
    r.grads =
        Grads{std::vector<double>(p.q_elements(), 0.0), std::vector<double>(p.k_elements(), 0.0),
              std::vector<double>(p.k_elements(), 0.0)};
  // dK and dV sum over a group's query heads: accumulate in float, round once.
  std::vector<float> dk_acc(p.k_elements(), 0.f), dv_acc(p.k_elements(), 0.f);
  std::vector<double> k_scaled, prob;
  for (int b = 0; b < p.batch(); ++b)
    for (int h = 0; h < p.heads_q; ++h) {
      const int lq = p.seqlen_q(b), lk = p.seqlen_k(b), hk = p.kv_head(h);
      k_scaled.assign(size_t(lk) * d, 0.0);
      for (int j = 0; j < lk; ++j)
        for (int c = 0; c < d; ++c)
          k_scaled[size_t(j) * d + c] = R(k[p.k_at(b, j, hk) + c] * p.scale);
      prob.assign(size_t(lq) * lk, 0.0);
      for (int i = 0; i < lq; ++i) {
        const double *qr = &q[p.q_at(b, i, h)];
        std::vector<double> score(size_t(lk), kNegInf);
        float row_max = -INFINITY;
        for (int j = 0; j < lk; ++j) {
          if (!p.visible(b, i, j)) continue;
          float acc = 0.f;
          for (int c = 0; c < d; ++c) acc += float(qr[c]) * float(k_scaled[size_t(j) * d + c]);
          score[j] = R(acc);
          row_max = std::max(row_max, float(score[j]));
        }
        if (row_max == -INFINITY) continue;  // fully masked: out 0, defined like ours
        float sum = 0.f;
        for (int j = 0; j < lk; ++j)
          if (score[j] != kNegInf) sum += std::exp(float(score[j]) - row_max);
        for (int j = 0; j < lk; ++j)
          if (score[j] != kNegInf)
            prob[size_t(i) * lk + j] = R(std::exp(float(score[j]) - row_max) / sum);
        r.fwd.lse[p.lse_at(b, h, i)] = double(row_max + std::log(sum));
        double *o = &r.fwd.out[p.q_at(b, i, h)];
        for (int c = 0; c < d; ++c) {
          float acc = 0.f;
          for (int j = 0; j < lk; ++j)
            acc += float(prob[size_t(i) * lk + j]) * float(v[p.k_at(b, j, hk) + c]);
          o[c] = R(acc);
        }
      }
      if (!dout) continue;
      for (int i = 0; i < lq; ++i) {
        const double *dor = &(*dout)[p.q_at(b, i, h)];
        const double *pr = prob.data() + size_t(i) * lk;
        std::vector<double> dprob(static_cast<size_t>(lk));
        float rowsum = 0.f;
        for (int j = 0; j < lk; ++j) {
          float acc = 0.f;
          for (int c = 0; c < d; ++c) acc += float(dor[c]) * float(v[p.k_at(b, j, hk) + c]);
          dprob[j] = R(acc);
          rowsum += float(pr[j]) * float(dprob[j]);
        }
        std::vector<double> dscore(static_cast<size_t>(lk));
        for (int j = 0; j < lk; ++j) dscore[j] = R(float(pr[j]) * (float(dprob[j]) - rowsum));
        double *dqr = &r.grads.dq[p.q_at(b, i, h)];
        for (int c = 0; c < d; ++c) {
          float acc = 0.f;
          for (int j = 0; j < lk; ++j) acc += float(dscore[j]) * float(k_scaled[size_t(j) * d + c]);
          dqr[c] = R(acc);
        }
        const double *qr = &q[p.q_at(b, i, h)];
        for (int j = 0; j < lk; ++j)
          for (int c = 0; c < d; ++c) {
            dk_acc[p.k_at(b, j, hk) + c] += float(dscore[j]) * float(qr[c]);
            dv_acc[p.k_at(b, j, hk) + c] += float(pr[j]) * float(dor[c]);
          }
      }
    }
  if (dout)
    for (size_t e = 0; e < p.k_elements(); ++e) {
      r.grads.dk[e] = R(R(dk_acc[e]) * p.scale);  // the gradient of K * scale, scaled back
      r.grads.dv[e] = R(dv_acc[e]);
    }
  return r;
}

}  // namespace fa2::ref
