// Host memory for the backends whose operands live in host memory, and the
// dispatcher that picks a backend's DeviceMemory. A GPU backend's file is
// compiled only when that backend is built (FA2_TEST_<NAME>_MEMORY is then
// defined by tests/CMakeLists.txt); otherwise its tests are reported absent.
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "device_memory.h"

namespace fa2::test {
namespace {

class HostMemory final : public DeviceMemory {
 public:
  bool present() const override { return true; }
  void *alloc(size_t bytes) override {
    // 256-byte alignment: stricter than any backend asks, like a GPU allocator.
    void *p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (p == nullptr && bytes != 0) throw std::runtime_error("host allocation failed");
    return p;
  }
  void release(void *p) override { std::free(p); }
  void to_device(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void to_host(void *dst, const void *src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize() override {}

 private:
  static constexpr size_t kAlignment = 256;
};

class AbsentMemory final : public DeviceMemory {
 public:
  explicit AbsentMemory(std::string why) : why_(std::move(why)) {}
  bool present() const override { return false; }
  std::string why_absent() const override { return why_; }
  void *alloc(size_t) override { throw std::runtime_error("no device: " + why_); }
  void release(void *) override {}
  void to_device(void *, const void *, size_t) override {}
  void to_host(void *, const void *, size_t) override {}
  void synchronize() override {}

 private:
  std::string why_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_host_memory() { return std::make_unique<HostMemory>(); }

std::unique_ptr<DeviceMemory> memory_for(fa2_backend_t backend) {
  switch (backend) {
    case FA2_BACKEND_CPU:
      return make_host_memory();
    case FA2_BACKEND_CUDA:
#ifdef FA2_TEST_CUDA_MEMORY
      return make_cuda_memory();
#else
      return std::make_unique<AbsentMemory>("tests/support/device_memory_cuda.cpp is not built");
#endif
    case FA2_BACKEND_HIP:
#ifdef FA2_TEST_HIP_MEMORY
      return make_hip_memory();
#else
      return std::make_unique<AbsentMemory>("tests/support/device_memory_hip.cpp is not built");
#endif
    case FA2_BACKEND_KOKKOS:
#ifdef FA2_TEST_KOKKOS_MEMORY
      return make_kokkos_memory();
#else
      return std::make_unique<AbsentMemory>("tests/support/device_memory_kokkos.cpp is not built");
#endif
    default:
      return std::make_unique<AbsentMemory>("unknown backend");
  }
}

}  // namespace fa2::test
