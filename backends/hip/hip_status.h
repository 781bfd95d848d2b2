// Every HIP runtime call of the host code goes through FA2_HIP_CHECK, which
// turns a failure into an fa2 status and a sentence in `why` (a
// std::string that must be in scope) and returns it.
#pragma once

#include <hip/hip_runtime_api.h>

#include <string>

#include "fa2/fa2.h"

namespace fa2::hip {

fa2_status_t status_of(hipError_t error);

inline fa2_status_t fail_with(hipError_t error, const char *call, std::string &why) {
  why = std::string(call) + " failed: " + hipGetErrorName(error) + " (" + hipGetErrorString(error) +
        ")";
  return status_of(error);
}

}  // namespace fa2::hip

#define FA2_HIP_CHECK(call)                                                                     \
  do {                                                                                          \
    const hipError_t fa2_hip_error_ = (call);                                                   \
    if (fa2_hip_error_ != hipSuccess) return ::fa2::hip::fail_with(fa2_hip_error_, #call, why); \
  } while (0)
