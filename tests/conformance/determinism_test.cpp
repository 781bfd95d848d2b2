// The forward twice on the same inputs gives bit-identical out and lse.
#include <gtest/gtest.h>

#include "grids.h"
#include "run_case.h"
#include "session.h"

namespace fa2::test {
namespace {

using Determinism = OnBackend<Case>;

TEST_P(Determinism, ForwardIsBitIdentical) {
  const auto first = forward_images(session_, GetParam());
  const auto second = forward_images(session_, GetParam());
  if (first.empty()) {
    EXPECT_TRUE(second.empty()) << "refused once, accepted once";
    std::cout << "[ REFUSED  ] " << GetParam().name() << ": not supported by this backend\n";
    return;
  }
  ASSERT_EQ(second.size(), 2u);
  EXPECT_TRUE(first[0] == second[0]) << "out differs between two identical runs";
  EXPECT_TRUE(first[1] == second[1]) << "lse differs between two identical runs";
}

INSTANTIATE_TEST_SUITE_P(Repeat, Determinism, ::testing::ValuesIn(grids::determinism()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.name();
                         });

}  // namespace
}  // namespace fa2::test
