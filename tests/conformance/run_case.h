// Runs one Case on an opened backend and checks everything the suite
// promises: fresh random inputs, poisoned outputs, forward (and backward)
// against float64 under the error rule, exact handling of rows that see no
// key, and that a refusal (unsupported head dim / dtype) wrote nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "buffers.h"
#include "case.h"
#include "error_rule.h"
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

// Host images of out and lse after one forward on fresh inputs seeded by
// the case (empty if the backend refused it). Same case -> same inputs.
std::vector<std::vector<uint8_t>> forward_images(const Session &session, const Case &c);

}  // namespace fa2::test
