// Forward and backward against float64 on every grid, for every backend.
// Test names: <Grid>/<Fixture>.<Test>/<backend>_<dtype>_d<dim>_q<len>_k<len>..._<fwd|bwd>.
#include <gtest/gtest.h>

#include "grids.h"
#include "run_case.h"
#include "session.h"

namespace fa2::test {
namespace {

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return info.param.name() + (info.param.backward ? "_bwd" : "_fwd");
}

using Attention = OnBackend<Case>;

TEST_P(Attention, MatchesFloat64) { run_case(session_, GetParam()); }

INSTANTIATE_TEST_SUITE_P(HeadDims, Attention, ::testing::ValuesIn(grids::head_dims()), case_name);
INSTANTIATE_TEST_SUITE_P(SeqLens, Attention, ::testing::ValuesIn(grids::seqlens()), case_name);
INSTANTIATE_TEST_SUITE_P(Heads, Attention, ::testing::ValuesIn(grids::heads()), case_name);
INSTANTIATE_TEST_SUITE_P(Windows, Attention, ::testing::ValuesIn(grids::windows()), case_name);
INSTANTIATE_TEST_SUITE_P(Varlen, Attention, ::testing::ValuesIn(grids::varlen()), case_name);
INSTANTIATE_TEST_SUITE_P(Layouts, Attention, ::testing::ValuesIn(grids::layouts()), case_name);
INSTANTIATE_TEST_SUITE_P(Scales, Attention, ::testing::ValuesIn(grids::scales()), case_name);
INSTANTIATE_TEST_SUITE_P(Decode, Attention, ::testing::ValuesIn(grids::decode()), case_name);

// Rows that see no key: out exactly 0, lse exactly -inf, finite gradients.
using FullyMasked = OnBackend<Case>;

TEST_P(FullyMasked, RowsGetZeroAndMinusInfinity) {
  const CaseReport report = run_case(session_, GetParam());
  if (!report.refused) {
    EXPECT_GT(report.fully_masked_rows, 0) << "the case masks no row: fix the grid";
  }
}

INSTANTIATE_TEST_SUITE_P(Masking, FullyMasked, ::testing::ValuesIn(grids::fully_masked()),
                         case_name);

// FlashAttention-2's core configurations: every backend must run them.
using Baseline = OnBackend<Case>;

TEST_P(Baseline, IsSupported) {
  const CaseReport report = run_case(session_, GetParam());
  EXPECT_FALSE(report.refused) << "every backend must support f16 and bf16 at head dims 64 and 128";
}

INSTANTIATE_TEST_SUITE_P(Required, Baseline, ::testing::ValuesIn(grids::baseline()), case_name);

}  // namespace
}  // namespace fa2::test
