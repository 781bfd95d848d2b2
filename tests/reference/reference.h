// The float64 reference for fa2: attention written the slow, obvious way.
//
// Data layout (all host, all double): tensors are packed per token,
//   q, out, dout, dq : [total_q, heads_q,  head_dim]
//   k, v, dk, dv     : [total_k, heads_kv, head_dim]
// where sequence b owns tokens [cu_q[b], cu_q[b+1]) (and cu_k for keys). A
// fixed-length batch is the special case cu_q = {0, L, 2L, ...}, which is
// exactly the contiguous [batch, seqlen, heads, head_dim] layout of the API.
// lse is the API's layout, [batch, heads_q, max seqlen_q], natural log;
// entries past a sequence's own length are NaN (they are not results).
//
// The visibility rule is written here from the API's definition, not taken
// from src/core/mask.h, so that the tests check the core instead of
// repeating it. Also here: naive_lowp.h (the same attention rounded like a
// framework would, for the error rule) and sampled.h (out/lse of a few rows
// of a big problem, read from host memory of any dtype, for the benchmark).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace fa2::ref {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Problem {
  int heads_q = 1;
  int heads_kv = 1;
  int head_dim = 1;
  std::vector<int> cu_q{0};  // batch + 1 token offsets of the queries
  std::vector<int> cu_k{0};  // batch + 1 token offsets of the keys
  double scale = 1.0;        // already resolved (the API's 0 means 1/sqrt(head_dim))
  bool causal = false;
  int window_left = -1;   // -1 = unlimited
  int window_right = -1;  // -1 = unlimited; causal means 0

  int batch() const { return int(cu_q.size()) - 1; }
  int seqlen_q(int b) const { return cu_q[b + 1] - cu_q[b]; }
  int seqlen_k(int b) const { return cu_k[b + 1] - cu_k[b]; }
  int total_q() const { return cu_q.back(); }
  int total_k() const { return cu_k.back(); }
  int max_seqlen_q() const {
    int m = 0;
    for (int b = 0; b < batch(); ++b) m = std::max(m, seqlen_q(b));
    return m;
  }
  // GQA / MQA: consecutive query heads share one key/value head.
  int kv_head(int hq) const { return hq / (heads_q / heads_kv); }

  // Key j of sequence b is visible to its query i. Bottom-right aligned:
  // the last query lines up with the last key, so with more queries than
  // keys the first queries of a causal problem see nothing at all.
  bool visible(int b, int i, int j) const {
    const int diag = seqlen_k(b) - seqlen_q(b);
    const int right = causal ? 0 : window_right;
    if (j < 0 || j >= seqlen_k(b)) return false;
    if (window_left >= 0 && j < i + diag - window_left) return false;
    if (right >= 0 && j > i + diag + right) return false;
    return true;
  }

  // Flat offsets into the packed tensors described above.
  size_t q_at(int b, int i, int h) const { return (size_t(cu_q[b] + i) * heads_q + h) * head_dim; }
  size_t k_at(int b, int j, int h) const { return (size_t(cu_k[b] + j) * heads_kv + h) * head_dim; }
  size_t lse_at(int b, int h, int i) const {
    return (size_t(b) * heads_q + h) * max_seqlen_q() + i;
  }
  size_t q_elements() const { return size_t(total_q()) * heads_q * head_dim; }
  size_t k_elements() const { return size_t(total_k()) * heads_kv * head_dim; }
  size_t lse_elements() const { return size_t(batch()) * heads_q * max_seqlen_q(); }
};

// Offsets {0, n0, n0+n1, ...} of a list of lengths.
inline std::vector<int> offsets_of(const std::vector<int> &lengths) {
  std::vector<int> cu{0};
  for (int n : lengths) cu.push_back(cu.back() + n);
  return cu;
}

inline Problem fixed_problem(int batch, int seqlen_q, int seqlen_k, int heads_q, int heads_kv,
                             int head_dim) {
  Problem p;
  p.heads_q = heads_q;
  p.heads_kv = heads_kv;
  p.head_dim = head_dim;
  p.cu_q = offsets_of(std::vector<int>(batch, seqlen_q));
  p.cu_k = offsets_of(std::vector<int>(batch, seqlen_k));
  p.scale = 1.0 / std::sqrt(double(head_dim));
  return p;
}

// One query row: softmax(scale * q.K^T) V over the visible keys. q(c),
// k(j, c), v(j, c) read the row's operands; out_row gets head_dim values.
// Returns the logsumexp, or -inf (and a zero row) when nothing is visible.
template <class Visible, class QAt, class KAt, class VAt>
double attend_row(int head_dim, int seqlen_k, double scale, Visible visible, QAt q, KAt k, VAt v,
                  double *out_row) {
  std::vector<double> score(size_t(seqlen_k), kNegInf);
  double row_max = kNegInf;
  for (int j = 0; j < seqlen_k; ++j) {
    if (!visible(j)) continue;
    double dot = 0;
    for (int c = 0; c < head_dim; ++c) dot += q(c) * k(j, c);
    score[j] = scale * dot;
    row_max = std::max(row_max, score[j]);
  }
  std::fill(out_row, out_row + head_dim, 0.0);
  if (row_max == kNegInf) return kNegInf;
  double sum = 0;
  for (int j = 0; j < seqlen_k; ++j) {
    if (score[j] == kNegInf) continue;
    const double p = std::exp(score[j] - row_max);
    sum += p;
    for (int c = 0; c < head_dim; ++c) out_row[c] += p * v(j, c);
  }
  for (int c = 0; c < head_dim; ++c) out_row[c] /= sum;
  return row_max + std::log(sum);
}

struct Forward {
  std::vector<double> out;  // like q
  std::vector<double> lse;  // [batch, heads_q, max seqlen_q], NaN past each length
};

inline Forward forward(const Problem &p, const std::vector<double> &q, const std::vector<double> &k,
                       const std::vector<double> &v) {
  Forward f{std::vector<double>(p.q_elements()), std::vector<double>(p.lse_elements(), kNaN)};
  for (int b = 0; b < p.batch(); ++b)
    for (int h = 0; h < p.heads_q; ++h)
      for (int i = 0; i < p.seqlen_q(b); ++i) {
        const int hk = p.kv_head(h);
        const double *qr = &q[p.q_at(b, i, h)];
        f.lse[p.lse_at(b, h, i)] = attend_row(
            p.head_dim, p.seqlen_k(b), p.scale, [&](int j) { return p.visible(b, i, j); },
            [&](int c) { return qr[c]; }, [&](int j, int c) { return k[p.k_at(b, j, hk) + c]; },
            [&](int j, int c) { return v[p.k_at(b, j, hk) + c]; }, &f.out[p.q_at(b, i, h)]);
      }
  return f;
}

struct Grads {
  std::vector<double> dq;  // like q
  std::vector<double> dk;  // like k (summed over the query heads of a group)
  std::vector<double> dv;  // like v
};

// Gradients of sum(dout * out) by the textbook formulas, P recomputed here:
//   dV += P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(P * dP)),
//   dQ = scale dS K,  dK = scale dS^T Q.
inline Grads backward(const Problem &p, const std::vector<double> &q, const std::vector<double> &k,
                      const std::vector<double> &v, const std::vector<double> &dout) {
  Grads g{std::vector<double>(p.q_elements(), 0.0), std::vector<double>(p.k_elements(), 0.0),
          std::vector<double>(p.k_elements(), 0.0)};
  const int d = p.head_dim;
  std::vector<double> out_row(static_cast<size_t>(d)), prob, dprob;
  for (int b = 0; b < p.batch(); ++b)
    for (int h = 0; h < p.heads_q; ++h)
      for (int i = 0; i < p.seqlen_q(b); ++i) {
        const int hk = p.kv_head(h), lk = p.seqlen_k(b);
        const double *qr = &q[p.q_at(b, i, h)];
        const double *dor = &dout[p.q_at(b, i, h)];
        auto visible = [&](int j) { return p.visible(b, i, j); };
        const double lse = attend_row(
            d, lk, p.scale, visible, [&](int c) { return qr[c]; },
            [&](int j, int c) { return k[p.k_at(b, j, hk) + c]; },
            [&](int j, int c) { return v[p.k_at(b, j, hk) + c]; }, out_row.data());
        if (lse == kNegInf) continue;  // no visible key: no gradient flows
        prob.assign(size_t(lk), 0.0);
        dprob.assign(size_t(lk), 0.0);
        double rowsum = 0;
        for (int j = 0; j < lk; ++j) {
          if (!visible(j)) continue;
          const double *kr = &k[p.k_at(b, j, hk)], *vr = &v[p.k_at(b, j, hk)];
          double dot = 0, dp = 0;
          for (int c = 0; c < d; ++c) dot += qr[c] * kr[c], dp += dor[c] * vr[c];
          prob[j] = std::exp(p.scale * dot - lse);
          dprob[j] = dp;
          rowsum += prob[j] * dp;
        }
        double *dqr = &g.dq[p.q_at(b, i, h)];
        for (int j = 0; j < lk; ++j) {
          if (!visible(j)) continue;
          const double ds = prob[j] * (dprob[j] - rowsum);
          const size_t kj = p.k_at(b, j, hk);
          for (int c = 0; c < d; ++c) {
            dqr[c] += p.scale * ds * k[kj + c];
            g.dk[kj + c] += p.scale * ds * qr[c];
            g.dv[kj + c] += prob[j] * dor[c];
          }
        }
      }
  return g;
}

}  // namespace fa2::ref

#include "naive_lowp.h"  // IWYU pragma: export
#include "sampled.h"     // IWYU pragma: export
