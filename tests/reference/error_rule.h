// The error rule, shared by the conformance suite and the benchmark's check.
// Low precision: max|ours - ref| <= factor * max|naive - ref| + slack, with
// slack = eps(dtype) * max(1, max|ref|): one ulp at the largest value,
// FlashAttention's own atol (2 roundings of ref + 0.3). f32: slack
// 1e-4 * max(1, max|ref|). Factors: 2 for the forward output, 3 for gradients.
#pragma once

#include <algorithm>
#include <cmath>

#include "fa2/fa2.h"

namespace fa2::test {

inline constexpr double kForwardFactor = 2.0;
inline constexpr double kGradientFactor = 3.0;
// lse (float32, natural log) against float64: |ours - ref| <= this * max(1, |ref|).
inline constexpr double kLseTolerance = 1e-3;

inline double allowed_error(fa2_dtype_t dtype, double factor, double naive_error, double ref_max) {
  const double magnitude = std::max(1.0, ref_max);
  switch (dtype) {
    case FA2_DTYPE_F16: return factor * naive_error + std::ldexp(1.0, -10) * magnitude;
    case FA2_DTYPE_BF16: return factor * naive_error + std::ldexp(1.0, -7) * magnitude;
    default: return factor * naive_error + 1e-4 * magnitude;
  }
}

}  // namespace fa2::test
