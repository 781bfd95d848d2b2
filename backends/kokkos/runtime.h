// When and how fa2 starts Kokkos. Shared by the backend and by the test
// suite's Kokkos memory (tests/support/device_memory_kokkos.cpp), so that
// whichever touches Kokkos first starts it the same way.
//
// Policy: an application that initialised Kokkos itself keeps full control
// (its device choice stands and it finalises). Otherwise the first caller
// initialises Kokkos once, for the whole process, and registers a
// std::atexit hook that finalises it. Kokkos cannot be initialised again
// after finalize, so fa2 never finalises earlier (e.g. when a handle is
// destroyed): a later fa2_create would then be impossible.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>

#include "fa2/fa2.h"

namespace fa2::kokkos {

// True when host code may read and write the default memory space directly.
inline constexpr bool kHostAccessible =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                               Kokkos::DefaultExecutionSpace::memory_space>::accessible;

// `device` selects the GPU when fa2 initialises a device Kokkos; a host-only
// Kokkos has device 0 alone. With Kokkos already running, the application
// chose the device and `device` is not consulted.
inline fa2_status_t ensure_initialized(int device, std::string &why) {
  static std::mutex once;
  const std::lock_guard<std::mutex> lock(once);
  if (Kokkos::is_initialized()) return FA2_SUCCESS;
#if KOKKOS_VERSION >= 40000
  if (Kokkos::is_finalized())
    return why = "Kokkos was finalised earlier in this process and cannot be restarted",
           FA2_ERROR_NO_DEVICE;
#endif
  if (kHostAccessible && device != 0)
    return why = "the Kokkos default execution space runs on the host: device must be 0",
           FA2_ERROR_NO_DEVICE;
  try {
#if KOKKOS_VERSION >= 40000
    Kokkos::initialize(Kokkos::InitializationSettings().set_device_id(device));
#else
    Kokkos::InitArguments arguments;
    arguments.device_id = device;
    Kokkos::initialize(arguments);
#endif
  } catch (const std::exception &e) {  // e.g. no GPU, or no GPU with that ordinal
    return why = std::string("Kokkos::initialize failed: ") + e.what(), FA2_ERROR_NO_DEVICE;
  }
  std::atexit([] {
    if (Kokkos::is_initialized()) Kokkos::finalize();
  });
  return FA2_SUCCESS;
}

}  // namespace fa2::kokkos
