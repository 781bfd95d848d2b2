// Where a backend's operands live, for the conformance suite. Each GPU
// backend supplies one implementation in device_memory_<name>.cpp; host
// backends share the host one. A backend whose hardware is absent returns
// present() == false and its tests are reported as skipped, by name.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "fa2/fa2.h"

namespace fa2::test {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual bool present() const = 0;
  virtual std::string why_absent() const { return {}; }
  virtual int device() const { return 0; }       // ordinal passed to fa2_create
  virtual void *stream() const { return nullptr; }  // passed to fa2_fwd / fa2_bwd
  virtual void *alloc(size_t bytes) = 0;          // throws std::runtime_error on failure
  virtual void release(void *p) = 0;
  virtual void to_device(void *dst, const void *src, size_t bytes) = 0;
  virtual void to_host(void *dst, const void *src, size_t bytes) = 0;
  virtual void synchronize() = 0;
};

std::unique_ptr<DeviceMemory> make_host_memory();
std::unique_ptr<DeviceMemory> make_cuda_memory();    // device_memory_cuda.cpp
std::unique_ptr<DeviceMemory> make_hip_memory();     // device_memory_hip.cpp
std::unique_ptr<DeviceMemory> make_kokkos_memory();  // device_memory_kokkos.cpp

// Dispatches on the backend; defined in device_memory.cpp.
std::unique_ptr<DeviceMemory> memory_for(fa2_backend_t backend);

}  // namespace fa2::test
