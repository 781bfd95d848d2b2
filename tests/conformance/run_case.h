// Runs one Case on an opened backend and checks everything the suite
// promises: fresh random inputs, poisoned outputs, forward (and backward)
// against float64 under the error rule, exact handling of rows that see no
// key, and that a refusal (unsupported head dim / dtype) wrote nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "buffers.h"
#include "case.h"
#include "session.h"

namespace fa2::test {

struct CaseReport {
  bool refused = false;           // the backend has no kernel for this head dim / dtype
  int64_t fully_masked_rows = 0;  // (batch, head, row) triples that see no key
};

struct Inputs {
  std::vector<double> q, k, v, dout;  // packed reference layout (reference.h)
};

// Fresh standard-normal inputs (exact in the case's dtype, seeded by the
// case) written into the operand buffers; then every buffer is uploaded.
Inputs prepare_inputs(Operands &ops, const Case &c);
// The API arguments that describe a case.
fa2_shape_t shape_of(const Case &c);
fa2_options_t options_of(const Case &c, const Operands &ops);

// Checks with gtest EXPECT/ASSERT; the report lets a test add its own checks.
CaseReport run_case(const Session &session, const Case &c);

// The error rule. Low precision: max|ours - ref| <= factor * max|naive - ref|
// + slack, slack = eps(dtype) * max(1, max|ref|): one ulp at the largest
// value, FlashAttention's own atol (2 roundings of ref + 0.3). f32: slack
// 1e-4 * max(1, max|ref|). Factors: 2 for the forward output, 3 for gradients.
double allowed_error(fa2_dtype_t dtype, double factor, double naive_error, double ref_max);
inline constexpr double kForwardFactor = 2.0;
inline constexpr double kGradientFactor = 3.0;
// lse (float32, natural log) against float64: |ours - ref| <= this * max(1, |ref|).
inline constexpr double kLseTolerance = 1e-3;

// Host images of out and lse after one forward on fresh inputs seeded by
// the case (empty if the backend refused it). Same case -> same inputs.
std::vector<std::vector<uint8_t>> forward_images(const Session &session, const Case &c);

}  // namespace fa2::test
