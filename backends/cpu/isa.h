// Instruction-set policies for the CPU kernels. The kernels are one
// template; an ISA only says how wide a vector is and how large the
// register-blocked GEMM micro-tile may be before it spills. Every function
// that touches a vector is a template on the ISA, so the AVX copies (built
// in their own translation units with -mavx2 / -mavx512f) never share a
// symbol with the portable copy and cannot leak into it at link time.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace fa2::cpu {

// round_nearest(x) = floor(x + 1/2) for |x| < 2^30, in a form the compiler
// vectorises with the ISA's instructions.

// Portable: 128-bit vectors (SSE2 on x86-64, NEON on arm64), no FMA assumed.
struct IsaGeneric {
  static constexpr int kLanes = 4;
  static constexpr int kRows = 4;  // micro-tile rows (broadcast operand)
  static constexpr int kVecs = 2;  // micro-tile vectors per row
  // SSE2 has no vector floor: truncate, then step down where that rounded up.
  static float round_nearest(float x) {
    const float y = x + 0.5f;
    const int truncated = int(y);
    return float(truncated - int(float(truncated) > y));
  }
};
// AVX2 + FMA + F16C: 16 ymm registers hold a 4 x 2 accumulator tile plus operands.
struct IsaAvx2 {
  static constexpr int kLanes = 8;
  static constexpr int kRows = 4;
  static constexpr int kVecs = 2;
  static float round_nearest(float x) { return std::floor(x + 0.5f); }
};
// AVX-512: 32 zmm registers hold an 8 x 2 accumulator tile plus operands.
struct IsaAvx512 {
  static constexpr int kLanes = 16;
  static constexpr int kRows = 8;
  static constexpr int kVecs = 2;
  static float round_nearest(float x) { return std::floor(x + 0.5f); }
};

// GCC/Clang vector extension of the ISA's width. aligned(4): loads and
// stores through it may be unaligned.
template <class Isa>
struct Simd {
  typedef float vec __attribute__((vector_size(Isa::kLanes * sizeof(float)), aligned(4)));
  static vec load(const float *p) { return *reinterpret_cast<const vec *>(p); }
  static void store(float *p, vec v) { *reinterpret_cast<vec *>(p) = v; }
};

// exp2 that the compiler vectorises (libm's exp2f is an opaque call):
// 2^x = 2^n * 2^f with n = round(x), |f| <= 1/2, and 2^f from its Taylor
// series to degree 7 (truncation error < 1e-8 relative, below float's
// half ulp). Arguments below -126 give exactly 0, which covers -inf (a
// masked score) and keeps the result normal; the softmax never passes
// arguments above 0 except rounding noise, clamped at 127.
template <class Isa>
struct VecExp2 {
  float operator()(float x) const {
    const bool underflow = x < -126.f;
    x = x < -126.f ? -126.f : (x > 127.f ? 127.f : x);
    const float rounded = Isa::round_nearest(x);
    const int n = int(rounded);
    const float f = x - rounded;
    float p = 1.5252733804e-05f;
    p = p * f + 1.5403530393e-04f;
    p = p * f + 1.3333558146e-03f;
    p = p * f + 9.6181291076e-03f;
    p = p * f + 5.5504108665e-02f;
    p = p * f + 2.4022650696e-01f;
    p = p * f + 6.9314718056e-01f;
    p = p * f + 1.f;
    const uint32_t exponent_bits = uint32_t(n + 127) << 23;
    float two_n;
    std::memcpy(&two_n, &exponent_bits, sizeof two_n);
    return underflow ? 0.f : p * two_n;
  }
};

}  // namespace fa2::cpu
