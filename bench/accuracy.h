// The benchmark's correctness check: a few sampled rows of each result
// against float64, with the conformance suite's error rule — a result
// passes when its error is at most 2x (forward) or 3x (gradients) that of a
// naive attention rounded like a framework, computed on the same rows, plus
// a small slack relative to the magnitude.
#pragma once

#include <string>
#include <vector>

#include "fa2/fa2.h"

namespace fa2::bench {

struct ErrorCheck {
  std::string what;        // "out", "lse", "dq", "dk", "dv"
  double max_error = 0;    // max |fa2 - float64| over the sampled rows
  double naive_error = 0;  // max |naive low precision - float64|
  double tolerance = 0;
  bool ok() const { return max_error <= tolerance; }
};

// Host copies of one problem's operands, in the API's own descriptors.
struct HostProblem {
  fa2_shape_t shape;
  fa2_options_t options;
  fa2_tensor_t q, k, v, out, dout, dq, dk, dv;
  const float *lse;  // [batch, heads_q, seqlen_q]
};

// out and lse of `rows` sampled query rows.
std::vector<ErrorCheck> check_forward(const HostProblem &problem, int rows, unsigned seed);

// dq of sampled query rows, dk and dv of sampled key rows. The backward's
// inputs out and lse are taken as given (the forward check covers them).
std::vector<ErrorCheck> check_backward(const HostProblem &problem, int rows, unsigned seed);

// The check with the largest error relative to its tolerance.
const ErrorCheck &worst(const std::vector<ErrorCheck> &checks);

}  // namespace fa2::bench
