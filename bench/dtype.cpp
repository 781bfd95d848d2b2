#include "dtype.h"

#include <cstring>

namespace fa2::bench {

bool parse_dtype(const std::string &name, fa2_dtype_t &dtype) {
  if (name == "bf16") return dtype = FA2_DTYPE_BF16, true;
  if (name == "f16" || name == "fp16") return dtype = FA2_DTYPE_F16, true;
  if (name == "f32" || name == "fp32") return dtype = FA2_DTYPE_F32, true;
  return false;
}

std::vector<uint8_t> random_normal(fa2_dtype_t dtype, size_t elements, uint64_t seed) {
  std::vector<uint8_t> bytes(elements * dtype_bytes(dtype));
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal;
  for (size_t e = 0; e < elements; ++e) {
    const float x = normal(engine);
    if (dtype == FA2_DTYPE_F32) {
      std::memcpy(&bytes[e * 4], &x, 4);
    } else {
      const uint16_t h = dtype == FA2_DTYPE_F16 ? core::float_to_f16(x) : core::float_to_bf16(x);
      std::memcpy(&bytes[e * 2], &h, 2);
    }
  }
  return bytes;
}

}  // namespace fa2::bench
