// Storage types and row conversions to and from the fp32 tiles the kernels
// compute on. f16 uses F16C where the translation unit is built with it;
// elsewhere (and for the ragged tail) the core's bit-exact conversions.
#pragma once

#include <cstdint>

#include "core/numeric.h"
#include "core/params.h"
#include "isa.h"

#if defined(__F16C__)
#  include <immintrin.h>
#endif

namespace fa2::cpu {

template <class Isa, core::Dtype D>
struct Element;

template <class Isa>
struct Element<Isa, core::Dtype::f32> {
  using T = float;
  static void load_row(const T *src, float *dst, int n) {
    for (int i = 0; i < n; ++i) dst[i] = src[i];
  }
  static void store_row(const float *src, float scale, T *dst, int n) {
    for (int i = 0; i < n; ++i) dst[i] = src[i] * scale;
  }
};

template <class Isa>
struct Element<Isa, core::Dtype::bf16> {
  using T = uint16_t;
  static void load_row(const T *src, float *dst, int n) {
    for (int i = 0; i < n; ++i) dst[i] = core::bf16_to_float(src[i]);
  }
  static void store_row(const float *src, float scale, T *dst, int n) {
    for (int i = 0; i < n; ++i) dst[i] = core::float_to_bf16(src[i] * scale);
  }
};

template <class Isa>
struct Element<Isa, core::Dtype::f16> {
  using T = uint16_t;
  static void load_row(const T *src, float *dst, int n) {
    int i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(dst + i,
                       _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i))));
#endif
    for (; i < n; ++i) dst[i] = core::f16_to_float(src[i]);
  }
  static void store_row(const float *src, float scale, T *dst, int n) {
    int i = 0;
#if defined(__F16C__)
    const __m256 scale8 = _mm256_set1_ps(scale);
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                       _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(src + i), scale8),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
    for (; i < n; ++i) dst[i] = core::float_to_f16(src[i] * scale);
  }
};

}  // namespace fa2::cpu
