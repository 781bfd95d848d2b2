// Issue 2's CPU targets, measured in the same run: fa2's CPU forward at
// seqlen 2048, head dim 128 (f32) as a share of the machine's sgemm rate
// (OpenBLAS, when the build found a BLAS) and as a multiple of a naive
// three-loop attention.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "device_memory.h"

namespace fa2::bench {

// Prints the comparison and returns its figures (GFLOP/s, %, x) by name.
std::vector<std::pair<std::string, double>> measure_cpu_baselines(fa2_handle_t cpu_handle,
                                                                  test::DeviceMemory &memory);

}  // namespace fa2::bench
