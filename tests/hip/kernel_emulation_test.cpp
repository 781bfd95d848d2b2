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
#include <string>
#include <vector>

#include "core/numeric.h"
#include "core/online_softmax.h"
#include "emulated_kernels.h"
#include "launch.h"
#include "reference.h"

namespace fa2::hip {
namespace {

struct Case {
  std::string name;
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

// Operands in the reference's packed layout, [total, heads, head_dim],
// rounded to the dtype once so kernel and reference read the same values.
struct Operand {
  std::vector<uint16_t> bits;
  std::vector<double> values;
};
Operand random_operand(core::Dtype dtype, size_t elements, std::mt19937 &rng) {
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  Operand o{std::vector<uint16_t>(elements), std::vector<double>(elements)};
  for (size_t i = 0; i < elements; ++i) {
    o.bits[i] = to_bits(dtype, value(rng));
    o.values[i] = from_bits(dtype, o.bits[i]);
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

core::TensorRef tensor(void *data, const core::AttnParams &p, int seqlen, int heads, bool varlen) {
  core::TensorRef t;
  t.data = data;
  t.stride_head = p.head_dim;
  t.stride_seq = int64_t(heads) * p.head_dim;
  t.stride_batch = varlen ? 0 : int64_t(seqlen) * heads * p.head_dim;
  return t;
}

// Largest |a - b| relative to the largest |b| (plus a floor for tiny values).
double relative_error(const std::vector<uint16_t> &got, core::Dtype dtype,
                      const std::vector<double> &want) {
  double error = 0, scale = 1e-3;
  for (size_t i = 0; i < want.size(); ++i) {
    error = std::max(error, std::abs(from_bits(dtype, got[i]) - want[i]));
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
  Operand q = random_operand(c.dtype, problem.q_elements(), rng);
  Operand k = random_operand(c.dtype, problem.k_elements(), rng);
  Operand v = random_operand(c.dtype, problem.k_elements(), rng);
  Operand dout = random_operand(c.dtype, problem.q_elements(), rng);
  std::vector<uint16_t> out(problem.q_elements(), 0xffff), dq(out.size(), 0xffff);
  std::vector<uint16_t> dk(problem.k_elements(), 0xffff), dv(dk.size(), 0xffff);
  std::vector<float> lse(problem.lse_elements(), NAN);

  std::vector<int32_t> cu_q, cu_k;
  core::AttnParams p = params_of(c, problem, cu_q, cu_k);
  const int lq = p.seqlen_q, lk = p.seqlen_k;
  p.q = tensor(q.bits.data(), p, lq, c.heads_q, c.varlen);
  p.k = tensor(k.bits.data(), p, lk, c.heads_kv, c.varlen);
  p.v = tensor(v.bits.data(), p, lk, c.heads_kv, c.varlen);
  p.out = tensor(out.data(), p, lq, c.heads_q, c.varlen);
  p.dout = tensor(dout.bits.data(), p, lq, c.heads_q, c.varlen);
  p.dq = tensor(dq.data(), p, lq, c.heads_q, c.varlen);
  p.dk = tensor(dk.data(), p, lk, c.heads_kv, c.varlen);
  p.dv = tensor(dv.data(), p, lk, c.heads_kv, c.varlen);
  p.lse = lse.data();

  emulated::fwd(p);
  const ref::Forward want = ref::forward(problem, q.values, k.values, v.values);
  EXPECT_LT(relative_error(out, c.dtype, want.out), c.dtype == core::Dtype::bf16 ? 2e-2 : 4e-3);
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
  const double tolerance = c.dtype == core::Dtype::bf16 ? 4e-2 : 1e-2;
  EXPECT_LT(relative_error(dq, c.dtype, grads.dq), tolerance) << "dq";
  EXPECT_LT(relative_error(dk, c.dtype, grads.dk), tolerance) << "dk";
  EXPECT_LT(relative_error(dv, c.dtype, grads.dv), tolerance) << "dv";
}

TEST(HipKernelEmulation, F16CausalGqaPaddedHeadDim) {
  run_case({"causal gqa", core::Dtype::f16, {70, 70}, {90, 90}, false, 4, 2, 40, true,
                     -1, -1});
}

TEST(HipKernelEmulation, F16VarlenWindowWithEmptySequences) {
  run_case({"varlen window", core::Dtype::f16, {37, 0, 45, 20}, {50, 20, 0, 33}, true,
                      2, 1, 72, false, 8, 3});
}

TEST(HipKernelEmulation, Bf16HeadDim256On16x16Tiles) {
  run_case({"bf16 d256", core::Dtype::bf16, {33}, {40}, false, 2, 2, 256, false, -1,
                       -1});
}

// More queries than keys, bottom-right causal: the first rows see no key
// (out 0, lse -inf, no gradient), and one kv head serves all query heads.
TEST(HipKernelEmulation, F16MqaCausalWithFullyMaskedRows) {
  run_case({"mqa causal", core::Dtype::f16, {80}, {30}, false, 3, 1, 128, true, -1, -1});
}

// Two forward query blocks and several backward key blocks, so the band
// skipping of a left window is exercised; the smallest head dim.
TEST(HipKernelEmulation, Bf16LeftWindowAcrossBlocks) {
  run_case({"left window", core::Dtype::bf16, {150}, {150}, false, 1, 1, 8, false, 20, -1});
}

}  // namespace
}  // namespace fa2::hip
