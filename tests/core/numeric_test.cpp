// numeric.h against a double-precision reference: every f16 / bf16 bit
// pattern decoded, and float -> f16 / bf16 rounding (to nearest, ties to
// even, overflow to inf, subnormals, NaN) on all midpoints and many floats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/numeric.h"

namespace fa2::core {
namespace {

// A binary format with `mant_bits` stored mantissa bits and exponent bias `bias`.
struct Format {
  int mant_bits;
  int exp_bits;
  int bias;
};
constexpr Format kF16{10, 5, 15};
constexpr Format kBF16{7, 8, 127};

double decode_ref(uint16_t h, Format f) {
  const bool negative = h >> 15;
  const int exp_field = (h >> f.mant_bits) & ((1 << f.exp_bits) - 1);
  const int mant = h & ((1 << f.mant_bits) - 1);
  double magnitude;
  if (exp_field == (1 << f.exp_bits) - 1)
    magnitude = mant ? NAN : INFINITY;
  else if (exp_field == 0)
    magnitude = std::ldexp(double(mant), 1 - f.bias - f.mant_bits);
  else
    magnitude = std::ldexp(double(mant + (1 << f.mant_bits)), exp_field - f.bias - f.mant_bits);
  return negative ? -magnitude : magnitude;
}

// Round-to-nearest-even by search: the two neighbours of |x| among the
// format's magnitudes, with the value after the largest finite one taken as
// 2^(emax+1) (IEEE's rule for overflow), which rounds to inf.
uint16_t encode_ref(double x, Format f) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7fff;  // any NaN; compared by class below
  const double a = std::fabs(x);
  const uint16_t inf = uint16_t(((1 << f.exp_bits) - 1) << f.mant_bits);
  if (std::isinf(a)) return sign | inf;
  // magnitudes are monotonic in the bit pattern: binary search
  uint16_t lo = 0, hi = inf;  // decode(lo) <= a < value(hi)
  auto value = [&](uint16_t h) {
    return h == inf ? std::ldexp(1.0, (1 << f.exp_bits) - 1 - f.bias) : decode_ref(h, f);
  };
  if (a >= value(inf)) return sign | inf;
  while (hi - lo > 1) {
    const uint16_t mid = uint16_t((lo + hi) / 2);
    (value(mid) <= a ? lo : hi) = mid;
  }
  const double below = a - value(lo), above = value(hi) - a;
  const uint16_t pick = below < above ? lo : above < below ? hi : ((lo & 1) ? hi : lo);
  return sign | pick;
}

bool is_nan_pattern(uint16_t h, Format f) {
  const int exp_field = (h >> f.mant_bits) & ((1 << f.exp_bits) - 1);
  return exp_field == (1 << f.exp_bits) - 1 && (h & ((1 << f.mant_bits) - 1)) != 0;
}

TEST(Numeric, F16DecodesEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = decode_ref(uint16_t(h), kF16);
    const float got = f16_to_float(uint16_t(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(double(got), want) << "pattern " << h;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << "pattern " << h;
    }
  }
}

TEST(Numeric, BF16DecodesEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = decode_ref(uint16_t(h), kBF16);
    const float got = bf16_to_float(uint16_t(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(double(got), want) << "pattern " << h;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << "pattern " << h;
    }
  }
}

// Every pattern, its midpoints with both neighbours, and one float ulp to
// either side of each midpoint: the cases where rounding can go wrong.
std::vector<float> rounding_probes(Format f) {
  std::vector<float> probes;
  for (uint32_t h = 0; h < 65536; ++h) {
    const double v = decode_ref(uint16_t(h), f);
    if (std::isnan(v)) continue;
    probes.push_back(float(v));
    const double next = decode_ref(uint16_t(h + 1), f);
    if (h + 1 < 65536 && std::isfinite(v) && std::isfinite(next) && (h & 0x7fff) != 0x7fff) {
      const float mid = float((v + next) / 2);  // exact: one bit more than the format
      probes.push_back(mid);
      probes.push_back(std::nextafter(mid, 0.f));
      probes.push_back(std::nextafter(mid, INFINITY));
      probes.push_back(std::nextafter(mid, -INFINITY));
    }
  }
  std::mt19937 rng(123);
  for (int i = 0; i < 1000000; ++i) {
    const float x = float_of(uint32_t(rng()));
    if (!std::isnan(x)) probes.push_back(x);
  }
  // float subnormals, the largest floats, the overflow thresholds
  for (float x : {1e-45f, 1e-40f, 1.17549421e-38f, 1.17549435e-38f, 3.4028235e38f, 65504.f,
                  65519.998f, 65520.f, 65536.f, 5.96046448e-08f, 2.98023224e-08f,
                  2.98023259e-08f, 0.f, INFINITY}) {
    probes.push_back(x);
    probes.push_back(-x);
  }
  return probes;
}

TEST(Numeric, FloatToF16RoundsToNearestEven) {
  for (float x : rounding_probes(kF16))
    ASSERT_EQ(float_to_f16(x), encode_ref(x, kF16)) << "x = " << x << " bits " << bits_of(x);
}

TEST(Numeric, FloatToBF16RoundsToNearestEven) {
  for (float x : rounding_probes(kBF16))
    ASSERT_EQ(float_to_bf16(x), encode_ref(x, kBF16)) << "x = " << x << " bits " << bits_of(x);
}

TEST(Numeric, NaNStaysNaN) {
  for (uint32_t payload : {0x7fc00000u, 0x7f800001u, 0x7fbfffffu, 0xffc00000u, 0xff800001u,
                           0x7f812345u}) {
    const float nan = float_of(payload);
    EXPECT_TRUE(is_nan_pattern(float_to_f16(nan), kF16)) << payload;
    EXPECT_TRUE(is_nan_pattern(float_to_bf16(nan), kBF16)) << payload;
    EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(nan))));
    EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(nan))));
  }
}

TEST(Numeric, RoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    if (!is_nan_pattern(uint16_t(h), kF16))
      ASSERT_EQ(float_to_f16(f16_to_float(uint16_t(h))), h);
    if (!is_nan_pattern(uint16_t(h), kBF16))
      ASSERT_EQ(float_to_bf16(bf16_to_float(uint16_t(h))), h);
  }
}

}  // namespace
}  // namespace fa2::core
