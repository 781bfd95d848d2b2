// The HIP backend's host code where no AMD GPU is present (CI and the
// build machines): device discovery gives a clean FA2_ERROR_NO_DEVICE,
// HIP errors map to statuses through FA2_HIP_CHECK, launchers report
// failure instead of crashing, and the test memory says why it is absent.
#include <gtest/gtest.h>

#include <hip/hip_runtime_api.h>

#include <memory>
#include <string>

#include "backend.h"
#include "device_memory.h"
#include "fa2/fa2.h"
#include "hip_status.h"
#include "launch.h"

namespace fa2::hip {
namespace {

bool device_present() {
  int count = 0;
  const bool present = hipGetDeviceCount(&count) == hipSuccess && count > 0;
  (void)hipGetLastError();
  return present;
}

TEST(HipHost, BackendIsBuilt) {
  int built = 0;
  ASSERT_EQ(fa2_backend_built(FA2_BACKEND_HIP, &built), FA2_SUCCESS);
  EXPECT_EQ(built, 1);
}

TEST(HipHost, CreateWithoutDeviceIsNoDevice) {
  if (device_present()) GTEST_SKIP() << "a HIP device is present";
  fa2_handle_t handle = nullptr;
  EXPECT_EQ(fa2_create(&handle, FA2_BACKEND_HIP, 0), FA2_ERROR_NO_DEVICE);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(fa2_create(&handle, FA2_BACKEND_HIP, 3), FA2_ERROR_NO_DEVICE);
  EXPECT_EQ(handle, nullptr);
}

TEST(HipHost, FactorySaysWhy) {
  if (device_present()) GTEST_SKIP() << "a HIP device is present";
  std::unique_ptr<Backend> backend;
  std::string why;
  EXPECT_EQ(make_hip_backend(0, backend, why), FA2_ERROR_NO_DEVICE);
  EXPECT_EQ(backend, nullptr);
  EXPECT_NE(why.find("no HIP device"), std::string::npos) << why;
}

TEST(HipHost, StatusMapping) {
  EXPECT_EQ(status_of(hipSuccess), FA2_SUCCESS);
  EXPECT_EQ(status_of(hipErrorNoDevice), FA2_ERROR_NO_DEVICE);
  EXPECT_EQ(status_of(hipErrorInvalidDevice), FA2_ERROR_NO_DEVICE);
  EXPECT_EQ(status_of(hipErrorInsufficientDriver), FA2_ERROR_NO_DEVICE);
  EXPECT_EQ(status_of(hipErrorOutOfMemory), FA2_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(status_of(hipErrorNoBinaryForGpu), FA2_ERROR_UNSUPPORTED_DEVICE);
  EXPECT_EQ(status_of(hipErrorInvalidDeviceFunction), FA2_ERROR_UNSUPPORTED_DEVICE);
  EXPECT_EQ(status_of(hipErrorLaunchFailure), FA2_ERROR_DEVICE_RUNTIME);
  EXPECT_EQ(status_of(hipErrorInvalidValue), FA2_ERROR_DEVICE_RUNTIME);
}

fa2_status_t checked(hipError_t result, std::string &why) {
  FA2_HIP_CHECK(result);
  return FA2_SUCCESS;
}

TEST(HipHost, CheckMacroReturnsStatusAndNamesTheCall) {
  std::string why;
  EXPECT_EQ(checked(hipSuccess, why), FA2_SUCCESS);
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(checked(hipErrorOutOfMemory, why), FA2_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(why.find("result failed: hipErrorOutOfMemory"), std::string::npos) << why;
}

// Without a device a launch must come back as an error, not a crash.
TEST(HipHost, LaunchWithoutDeviceFails) {
  if (device_present()) GTEST_SKIP() << "a HIP device is present";
  core::AttnParams p;
  p.batch = p.seqlen_q = p.seqlen_k = p.heads_q = p.heads_kv = 1;
  p.head_dim = 64;
  EXPECT_NE((launch_fwd<core::Dtype::f16, 64>(p, 1, nullptr)), hipSuccess);
  EXPECT_NE(launch_bwd_preprocess(p, nullptr, nullptr), hipSuccess);
  (void)hipGetLastError();
}

TEST(HipHost, TileLayoutFitsTheHardware) {
  for (const int head_dim : kHeadDimBuckets) {
    EXPECT_EQ(head_dim % Mfma32x32x8::kM, 0);
    EXPECT_EQ(fwd_plan(head_dim).block_n, Mfma32x32x8::kM);
  }
  EXPECT_EQ(bwd_plan<256>().block_m, Mfma16x16x16::kM);
  EXPECT_EQ(bwd_plan<128>().block_n, 4 * Mfma32x32x8::kN);
}

TEST(HipHost, WorkspaceHoldsDqAccumulatorAndDelta) {
  core::AttnParams p;
  p.batch = 2, p.seqlen_q = 100, p.heads_q = 3, p.head_dim = 40;
  const BwdWorkspace ws = bwd_workspace(p);
  EXPECT_EQ(ws.dq_accum_bytes, uint64_t(2 * 100 * 3 * 40) * sizeof(float));
  EXPECT_GE(ws.delta_offset, ws.dq_accum_bytes);
  EXPECT_EQ(ws.delta_offset % 256, 0u);
  EXPECT_EQ(ws.bytes, ws.delta_offset + uint64_t(2 * 100 * 3) * sizeof(float));
  EXPECT_EQ(dq_accum_index(p, 1, 99, 2), int64_t(((1 * 100 + 99) * 3 + 2) * 40));
}

TEST(HipHost, TestMemoryReportsAbsence) {
  if (device_present()) GTEST_SKIP() << "a HIP device is present";
  const auto memory = test::make_hip_memory();
  EXPECT_FALSE(memory->present());
  EXPECT_FALSE(memory->why_absent().empty());
  EXPECT_THROW(memory->alloc(16), std::runtime_error);
}

}  // namespace
}  // namespace fa2::hip
