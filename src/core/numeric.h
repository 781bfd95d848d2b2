// Bit-exact f16 / bf16 <-> f32 conversions, round to nearest even, written
// once in portable C++ for the backends that have no native type (CPU,
// Kokkos) and for the float64 reference in the tests.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/portability.h"

namespace fa2::core {

FA2_INLINE uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
FA2_INLINE float float_of(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

FA2_INLINE float bf16_to_float(uint16_t h) { return float_of(uint32_t{h} << 16); }

FA2_INLINE uint16_t float_to_bf16(float x) {
  uint32_t u = bits_of(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

FA2_INLINE float f16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return float_of(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  if (exp != 0) return float_of(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return float_of(sign);
  // Subnormal: value = mant * 2^-24, exact in float.
  const float magnitude = float(mant) * (1.0f / 16777216.0f);
  return sign ? -magnitude : magnitude;
}

FA2_INLINE uint16_t float_to_f16(float x) {
  const uint32_t u = bits_of(x);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // result is subnormal or zero: scale into 2^-24 units
    const float magnitude = float_of(abs) * 16777216.0f;     // exact
    // round half to even on the integer part
    uint32_t q = uint32_t(magnitude);
    const float rest = magnitude - float(q);
    if (rest > 0.5f || (rest == 0.5f && (q & 1u))) ++q;
    return uint16_t(sign | q);
  }
  uint32_t r = abs + 0xfffu + ((abs >> 13) & 1u) - (112u << 23);
  return uint16_t(sign | (r >> 13));
}

}  // namespace fa2::core
