// Operands for the Kokkos backend: memory of Kokkos's default memory space
// (host memory for Serial/OpenMP, device memory for CUDA/HIP/SYCL), copied
// with Kokkos::deep_copy over unmanaged views so one file serves every
// Kokkos build. Kokkos is started exactly as the backend starts it.
#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>

#include "../../backends/kokkos/runtime.h"
#include "device_memory.h"

namespace fa2::test {
namespace {

using MemorySpace = Kokkos::DefaultExecutionSpace::memory_space;
template <class Space>
using Bytes = Kokkos::View<char *, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Space>
using ConstBytes = Kokkos::View<const char *, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

class KokkosMemory final : public DeviceMemory {
 public:
  KokkosMemory() { present_ = fa2::kokkos::ensure_initialized(device(), why_) == FA2_SUCCESS; }
  bool present() const override { return present_; }
  std::string why_absent() const override { return why_; }

  void *alloc(size_t bytes) override {
    if (!present_) throw std::runtime_error("Kokkos is absent: " + why_);
    try {
      // Never a null pointer, even for an empty operand.
      return Kokkos::kokkos_malloc<MemorySpace>("fa2::test", bytes == 0 ? 1 : bytes);
    } catch (const std::exception &e) {
      throw std::runtime_error(std::string("Kokkos allocation failed: ") + e.what());
    }
  }
  void release(void *p) override {
    if (p != nullptr) Kokkos::kokkos_free<MemorySpace>(p);
  }
  void to_device(void *dst, const void *src, size_t bytes) override {
    if (bytes == 0) return;
    Kokkos::deep_copy(Bytes<MemorySpace>(static_cast<char *>(dst), bytes),
                      ConstBytes<Kokkos::HostSpace>(static_cast<const char *>(src), bytes));
  }
  void to_host(void *dst, const void *src, size_t bytes) override {
    if (bytes == 0) return;
    Kokkos::deep_copy(Bytes<Kokkos::HostSpace>(static_cast<char *>(dst), bytes),
                      ConstBytes<MemorySpace>(static_cast<const char *>(src), bytes));
  }
  void synchronize() override { Kokkos::fence(); }

 private:
  bool present_ = false;
  std::string why_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_kokkos_memory() { return std::make_unique<KokkosMemory>(); }

}  // namespace fa2::test
