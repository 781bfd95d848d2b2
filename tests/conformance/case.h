// One attention problem to run on one backend, and the backends to run on.
// Test grids are lists of Cases; their names carry the backend first so that
// --gtest_filter='*cuda*' selects one backend.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "fa2/fa2.h"
#include "reference.h"

namespace fa2::test {

// How the operands sit in memory.
enum class Layout {
  contiguous,       // [batch, seqlen, heads, head_dim], no gaps
  padded,           // gaps (kept poisoned) after each head, row and batch
  head_major,       // [batch, heads, seqlen, head_dim] through the strides
  packed_qkv,       // q, k, v interleaved in one [batch, seqlen, hq + 2 hkv, d] buffer
  transposed_dout,  // contiguous, except dout which is head-major
};

struct Case {
  fa2_backend_t backend = FA2_BACKEND_CPU;
  fa2_dtype_t dtype = FA2_DTYPE_F16;
  int head_dim = 64;
  int batch = 1;
  int seqlen_q = 1;  // max length when varlen
  int seqlen_k = 1;
  int heads_q = 1;
  int heads_kv = 1;
  bool causal = false;
  int window_left = -1;
  int window_right = -1;
  float softmax_scale = 0.f;  // 0 = 1/sqrt(head_dim)
  std::vector<int> lens_q;    // varlen when not empty: one length per sequence
  std::vector<int> lens_k;
  Layout layout = Layout::contiguous;
  bool backward = false;

  bool varlen() const { return !lens_q.empty(); }
  std::string name() const;  // unique, [A-Za-z0-9_] only
  uint64_t seed() const;     // distinct per case (a hash of the name)
  ref::Problem problem() const;
};

// gtest prints a parameter with this: the case's name, not its bytes.
void PrintTo(const Case &c, std::ostream *os);

// Every backend this build holds, in enum order.
std::vector<fa2_backend_t> built_backends();

// Copies of `cases` for each built backend.
std::vector<Case> on_every_backend(const std::vector<Case> &cases);

std::string dtype_name(fa2_dtype_t dtype);

}  // namespace fa2::test
