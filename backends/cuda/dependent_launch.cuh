// Programmatic dependent launch (sm_90 and newer). A kernel launched as the
// dependent of the kernel before it in the stream may start once every CTA
// of that one has run grid_launch_dependents() (or exited), and reads what
// that one writes only after grid_dependency_wait(), which returns once the
// earlier grid has completed and its writes are visible. Anything written
// before the earlier grid started (its own launch was a plain one) may be
// read before the wait. Compiled for older targets both helpers are empty,
// so the host launches a kernel as a dependent only where its code for the
// device waits (code_waits).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <string>
#include <utility>

#include "cuda_check.h"

namespace fa2::cuda {

__device__ inline void grid_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ inline void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// A count one grid's CTAs add to once their writes are done, which CTAs of
// another grid, running beside it, wait for before they read those writes
// (sm80/bwd_kernel.cuh: the dQ conversion).
__device__ inline void add_release_gpu(unsigned *count, unsigned value) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(count), "r"(value) : "memory");
}
__device__ inline unsigned load_acquire_gpu(const unsigned *count) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(count) : "memory");
  return value;
}

// Whether kKernel's code on the current device waits in
// grid_dependency_wait: compiled for sm_90 or newer, not JIT-compiled from
// older PTX. Its PTX version, asked once a device.
template <auto kKernel>
fa2_status_t code_waits(bool &waits, std::string &why) {
  constexpr int kDevices = 64;
  static std::atomic<int> ptx_version[kDevices];  // 0: not asked yet
  int device = 0;
  FA2_CUDA_CHECK(cudaGetDevice(&device));
  int version = device < kDevices ? ptx_version[device].load(std::memory_order_relaxed) : 0;
  if (version == 0) {
    cudaFuncAttributes attributes{};
    FA2_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kKernel));
    version = attributes.ptxVersion;
    if (device < kDevices) ptx_version[device].store(version, std::memory_order_relaxed);
  }
  waits = version >= 90;
  return FA2_SUCCESS;
}

// Launches kernel on stream: as the programmatic dependent of the stream's
// last kernel where `dependent` (the caller knows that kernel, and that
// this one's code waits before it reads that kernel's output), else plainly.
template <class... Params, class... Args>
fa2_status_t launch_kernel(void (*kernel)(Params...), unsigned grid, unsigned threads,
                           unsigned smem_bytes, cudaStream_t stream, bool dependent,
                           std::string &why, Args &&...args) {
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = &early;
  config.numAttrs = dependent ? 1 : 0;
  FA2_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
  return FA2_SUCCESS;
}

}  // namespace fa2::cuda
