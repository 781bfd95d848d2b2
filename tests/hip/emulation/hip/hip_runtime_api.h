// Host emulation of the few HIP runtime API names the kernel headers use
// (launch.h). Only for kernel_emulation_test.cpp: see hip_runtime.h.
#pragma once

using hipError_t = int;
inline constexpr hipError_t hipSuccess = 0;
using hipStream_t = struct ihipStream_t *;
