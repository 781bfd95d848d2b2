// The parts of the C API that need no backend run: statuses, version,
// backend enumeration and creation errors.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "case.h"
#include "fa2/fa2.h"

namespace fa2::test {
namespace {

TEST(Api, EveryStatusHasItsOwnString) {
  std::set<std::string> seen;
  for (int s = 0; s < FA2_NUM_STATUS; ++s) {
    const char *text = fa2_status_string(fa2_status_t(s));
    ASSERT_NE(text, nullptr) << "status " << s;
    EXPECT_STRNE(text, "") << "status " << s;
    EXPECT_STRNE(text, fa2_status_string(FA2_NUM_STATUS)) << "status " << s << " reads as unknown";
    EXPECT_TRUE(seen.insert(text).second) << "status " << s << " repeats \"" << text << "\"";
  }
  EXPECT_STRNE(fa2_status_string(fa2_status_t(-1)), "");
}

TEST(Api, VersionIsTheHeaders) {
  int version = -1;
  EXPECT_EQ(fa2_get_version(&version), FA2_SUCCESS);
  EXPECT_EQ(version, FA2_VERSION_CODE);
  EXPECT_EQ(fa2_get_version(nullptr), FA2_ERROR_NULL_POINTER);
}

TEST(Api, BackendsHaveDistinctNames) {
  std::set<std::string> names;
  for (int b = 0; b < FA2_NUM_BACKENDS; ++b)
    EXPECT_TRUE(names.insert(fa2_backend_name(fa2_backend_t(b))).second) << "backend " << b;
  EXPECT_FALSE(built_backends().empty()) << "a build holds at least one backend";
}

TEST(Api, CreatingABackendNotBuiltSaysSo) {
  int refused = 0;
  for (int b = 0; b < FA2_NUM_BACKENDS; ++b) {
    int built = 1;
    ASSERT_EQ(fa2_backend_built(fa2_backend_t(b), &built), FA2_SUCCESS);
    if (built) continue;
    fa2_handle_t handle = reinterpret_cast<fa2_handle_t>(&built);  // must be reset to NULL
    EXPECT_EQ(fa2_create(&handle, fa2_backend_t(b), 0), FA2_ERROR_BACKEND_NOT_BUILT)
        << fa2_backend_name(fa2_backend_t(b));
    EXPECT_EQ(handle, nullptr);
    ++refused;
  }
  if (refused == 0) GTEST_SKIP() << "every backend is built into this library";
}

TEST(Api, InvalidBackendArgumentsAreRefused) {
  fa2_handle_t handle = nullptr;
  int built = 0;
  for (int bad : {-1, int(FA2_NUM_BACKENDS), 99}) {
    EXPECT_EQ(fa2_create(&handle, fa2_backend_t(bad), 0), FA2_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_EQ(handle, nullptr);
    EXPECT_EQ(fa2_backend_built(fa2_backend_t(bad), &built), FA2_ERROR_INVALID_ARGUMENT) << bad;
  }
  const fa2_backend_t some = built_backends().front();
  EXPECT_EQ(fa2_create(nullptr, some, 0), FA2_ERROR_NULL_POINTER);
  EXPECT_EQ(fa2_create(&handle, some, -1), FA2_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fa2_backend_built(some, nullptr), FA2_ERROR_NULL_POINTER);
}

TEST(Api, NullHandleIsRefusedEverywhere) {
  const fa2_shape_t shape{1, 1, 1, 1, 1, 64};
  size_t bytes = 0;
  EXPECT_EQ(fa2_fwd_workspace_size(nullptr, &shape, FA2_DTYPE_F16, nullptr, &bytes),
            FA2_ERROR_NULL_POINTER);
  EXPECT_EQ(fa2_bwd_workspace_size(nullptr, &shape, FA2_DTYPE_F16, nullptr, &bytes),
            FA2_ERROR_NULL_POINTER);
  EXPECT_STRNE(fa2_last_error(nullptr), "");
  EXPECT_EQ(fa2_destroy(nullptr), FA2_SUCCESS);
}

}  // namespace
}  // namespace fa2::test
