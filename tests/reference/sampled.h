// The float64 reference for a few rows of a problem too big to check whole
// (the benchmark's shapes): reads q, k, v through the API's own tensor
// descriptors from HOST memory of any dtype, and returns out and lse for
// the requested (batch, head, row) triples. Varlen problems pass their
// cu_seqlens as host pointers in `options`. Included from reference.h.
#pragma once

#include <cstdint>
#include <vector>

#include "core/numeric.h"
#include "fa2/fa2.h"

namespace fa2::ref {

// One element of a host tensor, as a double.
inline double load_element(const fa2_tensor_t &t, int64_t offset) {
  switch (t.dtype) {
    case FA2_DTYPE_F16:
      return core::f16_to_float(static_cast<const uint16_t *>(t.data)[offset]);
    case FA2_DTYPE_BF16:
      return core::bf16_to_float(static_cast<const uint16_t *>(t.data)[offset]);
    default:
      return static_cast<const float *>(t.data)[offset];
  }
}

// The Problem (visibility, lengths, scale) that an API call describes.
inline Problem problem_of(const fa2_shape_t &shape, const fa2_options_t &options) {
  Problem p = fixed_problem(int(shape.batch), int(shape.seqlen_q), int(shape.seqlen_k),
                            int(shape.heads_q), int(shape.heads_kv), int(shape.head_dim));
  if (options.cu_seqlens_q != nullptr) {
    p.cu_q.assign(options.cu_seqlens_q, options.cu_seqlens_q + shape.batch + 1);
    p.cu_k.assign(options.cu_seqlens_k, options.cu_seqlens_k + shape.batch + 1);
  }
  if (options.softmax_scale != 0.f) p.scale = options.softmax_scale;
  p.causal = options.causal != 0;
  p.window_left = options.window_left;
  p.window_right = options.window_right;
  return p;
}

struct SampledRow {
  int batch;
  int head;  // query head
  int row;   // query index inside its sequence
};

struct SampledForward {
  std::vector<double> out;  // rows.size() x head_dim
  std::vector<double> lse;  // rows.size(); -inf for a row that sees no key
};

inline SampledForward forward_rows(const fa2_shape_t &shape, const fa2_options_t &options,
                                   const fa2_tensor_t &q, const fa2_tensor_t &k,
                                   const fa2_tensor_t &v, const std::vector<SampledRow> &rows) {
  const Problem p = problem_of(shape, options);
  const bool varlen = options.cu_seqlens_q != nullptr;
  // Element offset of (sequence b, token i, head h) in a tensor.
  auto offset = [&](const fa2_tensor_t &t, const std::vector<int> &cu, int b, int i, int h) {
    return varlen ? int64_t(cu[b] + i) * t.stride_seq + h * t.stride_head
                  : b * t.stride_batch + i * t.stride_seq + h * t.stride_head;
  };
  const int d = p.head_dim;
  SampledForward f{std::vector<double>(rows.size() * d), std::vector<double>(rows.size())};
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto [b, h, i] = rows[r];
    const int hk = p.kv_head(h);
    const int64_t q0 = offset(q, p.cu_q, b, i, h);
    f.lse[r] = attend_row(
        d, p.seqlen_k(b), p.scale, [&](int j) { return p.visible(b, i, j); },
        [&](int c) { return load_element(q, q0 + c); },
        [&](int j, int c) { return load_element(k, offset(k, p.cu_k, b, j, hk) + c); },
        [&](int j, int c) { return load_element(v, offset(v, p.cu_k, b, j, hk) + c); },
        &f.out[r * d]);
  }
  return f;
}

}  // namespace fa2::ref
