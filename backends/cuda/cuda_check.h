// One mapping from cudaError_t to fa2_status_t, used for every CUDA call.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "fa2/fa2.h"

namespace fa2::cuda {

inline fa2_status_t status_of(cudaError_t error, const char *what, std::string &why) {
  if (error == cudaSuccess) return FA2_SUCCESS;
  // Consume the runtime's record of it, so that a later call's
  // cudaGetLastError() does not report this one again (sticky errors stay).
  (void)cudaGetLastError();
  why = std::string(what) + " failed: " + cudaGetErrorName(error) + " (" +
        cudaGetErrorString(error) + ")";
  return error == cudaErrorMemoryAllocation ? FA2_ERROR_OUT_OF_MEMORY : FA2_ERROR_DEVICE_RUNTIME;
}

// Grids are one-dimensional over core's work items.
inline fa2_status_t grid_size(int64_t ctas, unsigned &grid, std::string &why) {
  if (ctas > 0x7fffffff) {
    why = "the grid needs " + std::to_string(ctas) + " blocks, beyond CUDA's 2^31 - 1";
    return FA2_ERROR_SIZE_OVERFLOW;
  }
  grid = unsigned(ctas);
  return FA2_SUCCESS;
}

}  // namespace fa2::cuda

// Returns from the enclosing function (which has a std::string `why`) with
// the mapped status when the call fails.
#define FA2_CUDA_CHECK(call)                                                          \
  do {                                                                                \
    const fa2_status_t fa2_status_ = ::fa2::cuda::status_of((call), #call, why);      \
    if (fa2_status_ != FA2_SUCCESS) return fa2_status_;                               \
  } while (0)
