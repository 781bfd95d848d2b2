// Host unit test of the wave64 lane logic of the HIP backend, with the very
// traits header the kernels use (backends/hip/mfma_traits.h), against a
// lane-level emulation of the instructions built from the ISA tables in
// isa_tables.h (see there for the AMD documents they come from).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "core/online_softmax.h"
#include "isa_tables.h"
#include "mfma_traits.h"

namespace fa2::hip {
namespace {

using isa::IsaTable;
using isa::kItems;
using isa::kLanes;
using isa::Slot;

template <class L>
const IsaTable &isa_of() {
  return isa::table(L::kM);
}

using Operand = std::vector<std::array<float, kItems>>;  // [lane][item]
template <class L>
using Accum = std::vector<std::array<float, L::kAccRegs>>;  // [lane][register]

// One wave-wide instruction, D = A * B + C, per the ISA tables.
template <class L>
Accum<L> emulate_mfma(const Operand &a, const Operand &b, const Accum<L> &c) {
  const IsaTable &isa = isa_of<L>();
  Accum<L> d = c;
  for (int i = 0; i < isa.m; ++i)
    for (int j = 0; j < isa.m; ++j) {
      const Slot out = isa.d(i, j);
      float sum = c[out.lane][out.item];
      for (int k = 0; k < isa.k; ++k) {
        const Slot sa = isa.a(i, k), sb = isa.b(k, j);
        sum += a[sa.lane][sa.item] * b[sb.lane][sb.item];
      }
      d[out.lane][out.item] = sum;
    }
  return d;
}

// A lane-wide __shfl_xor: every lane reads the value of lane ^ offset.
std::vector<float> shfl_xor(const std::vector<float> &v, int offset) {
  std::vector<float> out(kLanes);
  for (int lane = 0; lane < kLanes; ++lane) out[lane] = v[lane ^ offset];
  return out;
}

// The butterfly of ColumnReduce (mfma_ops.h) over a whole wave.
template <class L, class Op>
std::vector<float> column_reduce(std::vector<float> v, Op op) {
  for (int s = 0; s < L::kReduceSteps; ++s) {
    const std::vector<float> other = shfl_xor(v, L::reduce_offset(s));
    for (int lane = 0; lane < kLanes; ++lane) v[lane] = op(v[lane], other[lane]);
  }
  return v;
}

template <class L>
class MfmaLayoutTest : public ::testing::Test {};
using Layouts = ::testing::Types<Mfma32x32x8, Mfma16x16x16>;
TYPED_TEST_SUITE(MfmaLayoutTest, Layouts);

TYPED_TEST(MfmaLayoutTest, TraitsMatchTheIsaTables) {
  using L = TypeParam;
  const IsaTable &isa = isa_of<L>();
  EXPECT_EQ(L::kWaveSize, kLanes);
  EXPECT_EQ(L::kM, isa.m);
  EXPECT_EQ(L::kK, isa.k);
  EXPECT_EQ(L::kOperandElems, kItems);
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int e = 0; e < kItems; ++e) {
      const Slot a = isa.a(L::a_row(lane), L::a_k(lane, e));
      EXPECT_EQ(a.lane, lane);
      EXPECT_EQ(a.item, e);
      const Slot b = isa.b(L::b_k(lane, e), L::b_col(lane));
      EXPECT_EQ(b.lane, lane);
      EXPECT_EQ(b.item, e);
    }
    for (int r = 0; r < L::kAccRegs; ++r) {
      const Slot d = isa.d(L::c_row(lane, r), L::c_col(lane));
      EXPECT_EQ(d.lane, lane) << "register " << r;
      EXPECT_EQ(d.item, r);
    }
  }
}

// Integers keep every product and sum exact in float.
std::vector<float> random_matrix(int rows, int cols, std::mt19937 &rng) {
  std::uniform_int_distribution<int> value(-8, 8);
  std::vector<float> m(size_t(rows) * cols);
  for (float &x : m) x = float(value(rng));
  return m;
}

TYPED_TEST(MfmaLayoutTest, EmulatedInstructionIsAMatrixProduct) {
  using L = TypeParam;
  std::mt19937 rng(7);
  const std::vector<float> a = random_matrix(L::kM, L::kK, rng);  // row-major M x K
  const std::vector<float> b = random_matrix(L::kK, L::kN, rng);  // row-major K x N
  Operand a_regs(kLanes), b_regs(kLanes);
  for (int lane = 0; lane < kLanes; ++lane)
    for (int e = 0; e < kItems; ++e) {
      a_regs[lane][e] = a[L::a_row(lane) * L::kK + L::a_k(lane, e)];
      b_regs[lane][e] = b[L::b_k(lane, e) * L::kN + L::b_col(lane)];
    }
  const Accum<L> d = emulate_mfma<L>(a_regs, b_regs, Accum<L>(kLanes));
  for (int lane = 0; lane < kLanes; ++lane)
    for (int r = 0; r < L::kAccRegs; ++r) {
      const int i = L::c_row(lane, r), j = L::c_col(lane);
      float expected = 0.f;
      for (int k = 0; k < L::kK; ++k) expected += a[i * L::kK + k] * b[k * L::kN + j];
      EXPECT_EQ(d[lane][r], expected) << "lane " << lane << " register " << r;
    }
}

// The property the kernels rely on to feed P^T (and P, dS) to the next
// product without a shuffle: the registers of an accumulator, kOperandElems
// at a time, are the B operands of successive k-steps.
TYPED_TEST(MfmaLayoutTest, AccumulatorColumnIsTheNextBOperand) {
  using L = TypeParam;
  for (int lane = 0; lane < kLanes; ++lane) {
    EXPECT_EQ(L::c_col(lane), L::b_col(lane));
    for (int s = 0; s < L::kKStepsPerAcc; ++s)
      for (int e = 0; e < kItems; ++e)
        EXPECT_EQ(L::c_row(lane, s * kItems + e), s * L::kK + L::b_k(lane, e));
  }
  EXPECT_EQ(L::kKStepsPerAcc * L::kK, L::kM);
}

TYPED_TEST(MfmaLayoutTest, ButterflyReducesExactlyOneColumn) {
  using L = TypeParam;
  std::mt19937 rng(11);
  const std::vector<float> c = random_matrix(L::kM, L::kN, rng);
  std::vector<float> lane_max(kLanes, -INFINITY), lane_sum(kLanes, 0.f);
  for (int lane = 0; lane < kLanes; ++lane)
    for (int r = 0; r < L::kAccRegs; ++r) {
      const float x = c[L::c_row(lane, r) * L::kN + L::c_col(lane)];
      lane_max[lane] = std::max(lane_max[lane], x);
      lane_sum[lane] += x;
    }
  const auto maxes = column_reduce<L>(lane_max, [](float x, float y) { return std::max(x, y); });
  const auto sums = column_reduce<L>(lane_sum, [](float x, float y) { return x + y; });
  for (int lane = 0; lane < kLanes; ++lane) {
    float expected_max = -INFINITY, expected_sum = 0.f;
    for (int i = 0; i < L::kM; ++i) {
      expected_max = std::max(expected_max, c[i * L::kN + L::c_col(lane)]);
      expected_sum += c[i * L::kN + L::c_col(lane)];
    }
    EXPECT_EQ(maxes[lane], expected_max) << "lane " << lane;
    EXPECT_EQ(sums[lane], expected_sum) << "lane " << lane;
  }
}

// The whole-wave RowReduce of core::online_softmax_*: the core calls it once
// per lane, so the emulation is handed every lane's value beforehand (the
// lockstep a wavefront gives for free) and checks the caller's own value.
template <class L>
struct EmulatedColumnReduce {
  const std::vector<float> *wave;
  int lane;
  float max(float x) const {
    EXPECT_EQ(x, (*wave)[lane]);
    return column_reduce<L>(*wave, [](float u, float v) { return std::max(u, v); })[lane];
  }
  float sum(float x) const {
    EXPECT_EQ(x, (*wave)[lane]);
    return column_reduce<L>(*wave, [](float u, float v) { return u + v; })[lane];
  }
};

// One wavefront of fwd_kernel, emulated: S^T = K * Q^T, online softmax per
// query column with the core, O^T += V^T * P^T with P^T straight from the
// accumulator registers, then the final scale; checked against a plain
// softmax(scale * Q K^T) V in double. Two key blocks, the last one masked
// past seqlen_k, exercise the rescaling.
TYPED_TEST(MfmaLayoutTest, EmulatedForwardWaveMatchesAttention) {
  using L = TypeParam;
  constexpr int kQueries = L::kN, kKeysPerBlock = L::kM, kDim = 2 * L::kM, kBlocks = 2;
  constexpr int kSeqlenK = kBlocks * kKeysPerBlock - 3;
  const float scale = 1.f / std::sqrt(float(kDim));
  const float scale_log2 = scale * core::kLog2e;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  std::vector<float> q(kQueries * kDim), k(kBlocks * kKeysPerBlock * kDim), v(k.size());
  for (float &x : q) x = value(rng);
  for (float &x : k) x = value(rng);
  for (float &x : v) x = value(rng);

  std::vector<Accum<L>> o(kDim / L::kM, Accum<L>(kLanes));
  std::vector<core::RowState> rows(kLanes);
  for (int block = 0; block < kBlocks; ++block) {
    Accum<L> s(kLanes);
    for (int step = 0; step < kDim / L::kK; ++step) {
      Operand a(kLanes), b(kLanes);
      for (int lane = 0; lane < kLanes; ++lane)
        for (int e = 0; e < kItems; ++e) {
          const int key = block * kKeysPerBlock + L::a_row(lane);
          a[lane][e] = k[key * kDim + step * L::kK + L::a_k(lane, e)];
          b[lane][e] = q[L::b_col(lane) * kDim + step * L::kK + L::b_k(lane, e)];
        }
      s = emulate_mfma<L>(a, b, s);
    }
    std::vector<std::array<float, L::kAccRegs>> scores(kLanes);
    std::vector<float> wave_max(kLanes);
    for (int lane = 0; lane < kLanes; ++lane) {
      float block_max = -INFINITY;
      for (int r = 0; r < L::kAccRegs; ++r) {
        const int key = block * kKeysPerBlock + L::c_row(lane, r);
        scores[lane][r] = key < kSeqlenK ? s[lane][r] : -INFINITY;
        block_max = std::max(block_max, scores[lane][r]);
      }
      wave_max[lane] = std::max(rows[lane].row_max, block_max);
    }
    for (int lane = 0; lane < kLanes; ++lane) {
      float(&lane_scores)[L::kAccRegs] =
          *reinterpret_cast<float(*)[L::kAccRegs]>(scores[lane].data());
      const float correction = core::online_softmax_step(lane_scores, rows[lane], scale_log2,
                                                         EmulatedColumnReduce<L>{&wave_max, lane});
      for (auto &tile : o)
        for (float &x : tile[lane]) x *= correction;
    }
    for (int step = 0; step < L::kKStepsPerAcc; ++step)
      for (size_t t = 0; t < o.size(); ++t) {
        Operand a(kLanes), b(kLanes);
        for (int lane = 0; lane < kLanes; ++lane)
          for (int e = 0; e < kItems; ++e) {
            const int key = block * kKeysPerBlock + step * L::kK + L::a_k(lane, e);
            a[lane][e] = v[key * kDim + int(t) * L::kM + L::a_row(lane)];
            b[lane][e] = scores[lane][step * kItems + e];
          }
        o[t] = emulate_mfma<L>(a, b, o[t]);
      }
  }
  std::vector<float> sums(kLanes);
  for (int lane = 0; lane < kLanes; ++lane) sums[lane] = rows[lane].row_sum;
  for (int lane = 0; lane < kLanes; ++lane) {
    const core::RowResult result =
        core::online_softmax_finish(rows[lane], scale, EmulatedColumnReduce<L>{&sums, lane});
    const int query = L::c_col(lane);
    std::vector<double> p(kSeqlenK);
    double max_score = -INFINITY, total = 0.0;
    for (int j = 0; j < kSeqlenK; ++j) {
      double dot = 0.0;
      for (int d = 0; d < kDim; ++d) dot += double(q[query * kDim + d]) * k[j * kDim + d];
      p[j] = dot * scale;
      max_score = std::max(max_score, p[j]);
    }
    for (double &x : p) total += (x = std::exp(x - max_score));
    EXPECT_NEAR(result.lse, max_score + std::log(total), 1e-5) << "query " << query;
    for (size_t t = 0; t < o.size(); ++t)
      for (int r = 0; r < L::kAccRegs; ++r) {
        const int d = int(t) * L::kM + L::c_row(lane, r);
        double expected = 0.0;
        for (int j = 0; j < kSeqlenK; ++j) expected += p[j] / total * v[j * kDim + d];
        EXPECT_NEAR(o[t][lane][r] * result.out_scale, expected, 1e-5)
            << "query " << query << " dim " << d;
      }
  }
}

}  // namespace
}  // namespace fa2::hip
