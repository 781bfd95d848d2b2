// The HIP backend's kernel templates, run on the CPU through the device
// emulation of emulation/hip/hip_runtime.h, against the float64 reference
// of the conformance suite. This checks everything the lane-layout test
// does not: tile loops, masks and band skipping, varlen with empty
// sequences, GQA, head-dim padding, the LDS tiles, the dQ atomics and the
// backward's auxiliary passes. The emulated kernels are slow (a thread per
// lane), so the problems are small.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/numeric.h"
#include "core/online_softmax.h"
#include "emulated_kernels.h"
#include "launch.h"
#include "reference.h"

namespace fa2::hip {
namespace {

struct Case {
  core::Dtype dtype;
  std::vector<int> lengths_q, lengths_k;
  bool varlen;
  int heads_q, heads_kv, head_dim;
  bool causal;
  int window_left, window_right;  // -1 = unlimited
};

uint16_t to_bits(core::Dtype dtype, float x) {
  return dtype == core::Dtype::bf16 ? core::float_to_bf16(x) : core::float_to_f16(x);
}
double from_bits(core::Dtype dtype, uint16_t h) {
  return dtype == core::Dtype::bf16 ? core::bf16_to_float(h) : core::f16_to_float(h);
}

// A [tokens, heads, head_dim] operand as the kernels see it: every head row
// and every token row is followed by a gap of kGap elements (the API's
// element strides), filled with NaN bits, so that a kernel that reads a
// gap poisons its result and one that writes into a gap is caught.
constexpr int kGap = 8;               // elements: keeps 16-byte alignment
constexpr uint16_t kPoison = 0xffff;  // NaN in f16 and in bf16
struct Strided {
  int heads, head_dim;
  int64_t stride_head, stride_seq;
  std::vector<uint16_t> bits;

  Strided(int tokens, int heads_, int head_dim_)
      : heads(heads_),
        head_dim(head_dim_),
        stride_head(head_dim_ + kGap),
        stride_seq(heads_ * stride_head + kGap),
        bits(size_t(tokens) * stride_seq, kPoison) {}
  size_t at(size_t packed) const {  // packed index of [tokens, heads, head_dim]
    const size_t d = packed % head_dim, h = packed / head_dim % heads;
    const size_t t = packed / head_dim / heads;
    return t * stride_seq + h * stride_head + d;
  }
  std::vector<uint16_t> packed() const {
    std::vector<uint16_t> out(bits.size() / stride_seq * heads * head_dim);
    for (size_t i = 0; i < out.size(); ++i) out[i] = bits[at(i)];
    return out;
  }
  bool gaps_untouched() const {
    std::vector<bool> payload(bits.size(), false);
    for (size_t i = 0; i < bits.size() / stride_seq * heads * head_dim; ++i) payload[at(i)] = true;
    for (size_t i = 0; i < bits.size(); ++i)
      if (!payload[i] && bits[i] != kPoison) return false;
    return true;
  }
  core::TensorRef ref(int seqlen, bool varlen) {
    core::TensorRef t;
    t.data = bits.data();
    t.stride_head = stride_head, t.stride_seq = stride_seq;
    t.stride_batch = varlen ? 0 : seqlen * stride_seq;
    return t;
  }
};

// A random input, rounded to the dtype once so kernel and reference read
// the same values: `values` packed for the reference, `memory` for the kernels.
struct Operand {
  std::vector<double> values;
  Strided memory;
};
Operand random_operand(core::Dtype dtype, int tokens, int heads, int head_dim, std::mt19937 &rng) {
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  Operand o{std::vector<double>(size_t(tokens) * heads * head_dim),
            Strided(tokens, heads, head_dim)};
  for (size_t i = 0; i < o.values.size(); ++i) {
    const uint16_t bits = to_bits(dtype, value(rng));
    o.memory.bits[o.memory.at(i)] = bits;
    o.values[i] = from_bits(dtype, bits);
  }
  return o;
}

// What src/validate.cpp hands a backend for this case.
core::AttnParams params_of(const Case &c, const ref::Problem &problem, std::vector<int32_t> &cu_q,
                           std::vector<int32_t> &cu_k) {
  core::AttnParams p;
  p.dtype = c.dtype;
  p.batch = problem.batch();
  p.seqlen_q = problem.max_seqlen_q();
  p.seqlen_k = 0;
  for (int b = 0; b < p.batch; ++b) p.seqlen_k = std::max(p.seqlen_k, problem.seqlen_k(b));
  p.heads_q = c.heads_q, p.heads_kv = c.heads_kv, p.group_size = c.heads_q / c.heads_kv;
  p.head_dim = c.head_dim;
  p.scale = float(problem.scale);
  p.scale_log2 = p.scale * core::kLog2e;
  p.causal = c.causal;
  p.window_left = c.window_left < 0 ? core::kUnlimited : c.window_left;
  p.window_right = c.causal ? 0 : c.window_right < 0 ? core::kUnlimited : c.window_right;
  p.has_mask = c.causal || c.window_left >= 0 || c.window_right >= 0;
  if (c.varlen) {
    cu_q.assign(problem.cu_q.begin(), problem.cu_q.end());
    cu_k.assign(problem.cu_k.begin(), problem.cu_k.end());
    p.cu_seqlens_q = cu_q.data(), p.cu_seqlens_k = cu_k.data();
  }
  return p;
}

// Largest |a - b| relative to the largest |b| (plus a floor for tiny
// values); infinite when the kernel left a NaN (a poisoned read).
double relative_error(const std::vector<uint16_t> &got, core::Dtype dtype,
                      const std::vector<double> &want) {
  double error = 0, scale = 1e-3;
  for (size_t i = 0; i < want.size(); ++i) {
    const double x = from_bits(dtype, got[i]);
    if (std::isnan(x)) return INFINITY;
    error = std::max(error, std::abs(x - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return error / scale;
}

void run_case(const Case &c) {
  ref::Problem problem;
  problem.heads_q = c.heads_q, problem.heads_kv = c.heads_kv, problem.head_dim = c.head_dim;
  problem.cu_q = ref::offsets_of(c.lengths_q);
  problem.cu_k = ref::offsets_of(c.lengths_k);
  problem.scale = 1.0 / std::sqrt(double(c.head_dim));
  problem.causal = c.causal;
  problem.window_left = c.window_left, problem.window_right = c.window_right;

  std::mt19937 rng(42);
  const int total_q = problem.total_q(), total_k = problem.total_k();
  Operand q = random_operand(c.dtype, total_q, c.heads_q, c.head_dim, rng);
  Operand k = random_operand(c.dtype, total_k, c.heads_kv, c.head_dim, rng);
  Operand v = random_operand(c.dtype, total_k, c.heads_kv, c.head_dim, rng);
  Operand dout = random_operand(c.dtype, total_q, c.heads_q, c.head_dim, rng);
  Strided out(total_q, c.heads_q, c.head_dim), dq(total_q, c.heads_q, c.head_dim);
  Strided dk(total_k, c.heads_kv, c.head_dim), dv(total_k, c.heads_kv, c.head_dim);
  std::vector<float> lse(problem.lse_elements(), NAN);

  std::vector<int32_t> cu_q, cu_k;
  core::AttnParams p = params_of(c, problem, cu_q, cu_k);
  const int lq = p.seqlen_q, lk = p.seqlen_k;
  p.q = q.memory.ref(lq, c.varlen), p.k = k.memory.ref(lk, c.varlen);
  p.v = v.memory.ref(lk, c.varlen), p.dout = dout.memory.ref(lq, c.varlen);
  p.out = out.ref(lq, c.varlen), p.dq = dq.ref(lq, c.varlen);
  p.dk = dk.ref(lk, c.varlen), p.dv = dv.ref(lk, c.varlen);
  p.lse = lse.data();

  emulated::fwd(p);
  const ref::Forward want = ref::forward(problem, q.values, k.values, v.values);
  // About four ulps of the output dtype: the kernels round P and dS to it.
  const double tolerance = c.dtype == core::Dtype::bf16 ? 1.6e-2 : 2e-3;
  EXPECT_LT(relative_error(out.packed(), c.dtype, want.out), tolerance) << "out";
  EXPECT_TRUE(out.gaps_untouched());
  for (int b = 0; b < problem.batch(); ++b)
    for (int h = 0; h < c.heads_q; ++h)
      for (int i = 0; i < problem.seqlen_q(b); ++i) {
        const size_t at = problem.lse_at(b, h, i);
        if (std::isinf(want.lse[at]))
          EXPECT_EQ(lse[at], -INFINITY) << "b " << b << " h " << h << " row " << i;
        else
          EXPECT_NEAR(lse[at], want.lse[at], 1e-4 * std::abs(want.lse[at]) + 1e-4)
              << "b " << b << " h " << h << " row " << i;
      }

  std::vector<float> workspace(bwd_workspace(p).bytes / sizeof(float) + 1);
  emulated::bwd(p, workspace.data());
  const ref::Grads grads = ref::backward(problem, q.values, k.values, v.values, dout.values);
  EXPECT_LT(relative_error(dq.packed(), c.dtype, grads.dq), tolerance) << "dq";
  EXPECT_LT(relative_error(dk.packed(), c.dtype, grads.dk), tolerance) << "dk";
  EXPECT_LT(relative_error(dv.packed(), c.dtype, grads.dv), tolerance) << "dv";
  EXPECT_TRUE(dq.gaps_untouched() && dk.gaps_untouched() && dv.gaps_untouched());
}

TEST(HipKernelEmulation, F16CausalGqaPaddedHeadDim) {
  run_case({core::Dtype::f16, {70, 70}, {90, 90}, false, 4, 2, 40, true, -1, -1});
}

TEST(HipKernelEmulation, F16VarlenWindowWithEmptySequences) {
  run_case({core::Dtype::f16, {37, 0, 45, 20}, {50, 20, 0, 33}, true, 2, 1, 72, false, 8, 3});
}

TEST(HipKernelEmulation, Bf16HeadDim256On16x16Tiles) {
  run_case({core::Dtype::bf16, {33}, {40}, false, 2, 2, 256, false, -1, -1});
}

// More queries than keys, bottom-right causal: the first rows see no key
// (out 0, lse -inf, no gradient), and one kv head serves all query heads.
TEST(HipKernelEmulation, F16MqaCausalWithFullyMaskedRows) {
  run_case({core::Dtype::f16, {80}, {30}, false, 3, 1, 128, true, -1, -1});
}

// Two forward query blocks and several backward key blocks, so the band
// skipping of a left window is exercised; the smallest head dim.
TEST(HipKernelEmulation, Bf16LeftWindowAcrossBlocks) {
  run_case({core::Dtype::bf16, {150}, {150}, false, 1, 1, 8, false, 20, -1});
}

// Varlen + causal where some sequences have more queries than keys, GQA.
TEST(HipKernelEmulation, Bf16VarlenCausalGqa) {
  run_case({core::Dtype::bf16, {40, 9, 66}, {25, 30, 66}, true, 4, 2, 96, true, -1, -1});
}

// A right-only window (keys ahead of the diagonal), head dim 160 -> 256.
TEST(HipKernelEmulation, F16RightWindowHeadDim160) {
  run_case({core::Dtype::f16, {45}, {60}, false, 2, 1, 160, false, -1, 5});
}

}  // namespace
}  // namespace fa2::hip
