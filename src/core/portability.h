// The one portability macro set for code that runs on host and device.
// CUDA and HIP compilers define __CUDACC__ / __HIPCC__; Kokkos code includes
// this after Kokkos_Core.hpp and gets KOKKOS_INLINE_FUNCTION semantics from
// the same macros (it compiles with the device compiler of its backend).
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#  define FA2_HD __host__ __device__
#  define FA2_DEVICE_COMPILER 1
#else
#  define FA2_HD
#  define FA2_DEVICE_COMPILER 0
#endif

#define FA2_INLINE FA2_HD inline

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#  define FA2_DEVICE_PASS 1
#else
#  define FA2_DEVICE_PASS 0
#endif

// Loop unrolling hint understood by every compiler we build with.
#if FA2_DEVICE_COMPILER || defined(__clang__)
#  define FA2_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#  define FA2_UNROLL _Pragma("GCC unroll 16")
#else
#  define FA2_UNROLL
#endif
