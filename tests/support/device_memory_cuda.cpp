// Operands for the CUDA backend: device memory of CUDA device 0, copied with
// cudaMemcpy on the default stream. present() is false, with the runtime's
// reason, when cudaGetDeviceCount fails or finds no device, so the suite
// reports the CUDA cases as skipped.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "device_memory.h"

namespace fa2::test {
namespace {

void check(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorName(error) + " (" +
                             cudaGetErrorString(error) + ")");
}

class CudaMemory final : public DeviceMemory {
 public:
  CudaMemory() {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
      (void)cudaGetLastError();
      why_ = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(error) + " (" +
             cudaGetErrorString(error) + ")";
    } else if (count == 0) {
      why_ = "cudaGetDeviceCount found no CUDA device";
    } else {
      present_ = cudaSetDevice(device()) == cudaSuccess;
      if (!present_) why_ = "cudaSetDevice(0) failed";
    }
  }
  bool present() const override { return present_; }
  std::string why_absent() const override { return why_; }

  void *alloc(size_t bytes) override {
    if (!present_) throw std::runtime_error("no CUDA device: " + why_);
    void *p = nullptr;
    check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc");  // never a null operand
    return p;
  }
  void release(void *p) override {
    if (p != nullptr) (void)cudaFree(p);
  }
  void to_device(void *dst, const void *src, size_t bytes) override {
    if (bytes != 0) check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  void to_host(void *dst, const void *src, size_t bytes) override {
    if (bytes != 0) check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }
  void synchronize() override { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

 private:
  bool present_ = false;
  std::string why_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_cuda_memory() { return std::make_unique<CudaMemory>(); }

}  // namespace fa2::test
