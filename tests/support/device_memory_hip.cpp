// Operands for the HIP backend: device memory of HIP device 0, copied with
// hipMemcpy on the null stream. present() is false, with the runtime's
// reason, when hipGetDeviceCount fails or finds no device (no AMD GPU or no
// amdgpu driver), so the suite reports the HIP cases as skipped.
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <stdexcept>
#include <string>

#include "device_memory.h"

namespace fa2::test {
namespace {

void check(hipError_t error, const char *what) {
  if (error != hipSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + hipGetErrorName(error));
}

class HipMemory final : public DeviceMemory {
 public:
  HipMemory() {
    int count = 0;
    const hipError_t error = hipGetDeviceCount(&count);
    if (error != hipSuccess) {
      (void)hipGetLastError();
      why_ = std::string("hipGetDeviceCount: ") + hipGetErrorName(error) + " (" +
             hipGetErrorString(error) + ")";
    } else if (count == 0) {
      why_ = "hipGetDeviceCount found no HIP device";
    } else {
      present_ = hipSetDevice(device()) == hipSuccess;
      if (!present_) why_ = "hipSetDevice(0) failed";
    }
  }
  bool present() const override { return present_; }
  std::string why_absent() const override { return why_; }

  void *alloc(size_t bytes) override {
    if (!present_) throw std::runtime_error("no HIP device: " + why_);
    void *p = nullptr;
    check(hipMalloc(&p, bytes == 0 ? 1 : bytes), "hipMalloc");  // never a null operand
    return p;
  }
  void release(void *p) override {
    if (p != nullptr) (void)hipFree(p);
  }
  void to_device(void *dst, const void *src, size_t bytes) override {
    if (bytes != 0) check(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy to device");
  }
  void to_host(void *dst, const void *src, size_t bytes) override {
    if (bytes != 0) check(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost), "hipMemcpy to host");
  }
  void synchronize() override { check(hipDeviceSynchronize(), "hipDeviceSynchronize"); }

 private:
  bool present_ = false;
  std::string why_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_hip_memory() { return std::make_unique<HipMemory>(); }

}  // namespace fa2::test
