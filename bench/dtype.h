// The three storage types as the benchmark sees them: names, sizes, and
// filling host buffers with random values of one dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/numeric.h"
#include "fa2/fa2.h"

namespace fa2::bench {

inline const char *dtype_name(fa2_dtype_t dtype) {
  switch (dtype) {
    case FA2_DTYPE_F16: return "f16";
    case FA2_DTYPE_BF16: return "bf16";
    default: return "f32";
  }
}

inline size_t dtype_bytes(fa2_dtype_t dtype) { return dtype == FA2_DTYPE_F32 ? 4 : 2; }

// Parses "bf16", "f16"/"fp16", "f32"/"fp32"; false when unknown.
bool parse_dtype(const std::string &name, fa2_dtype_t &dtype);

// `elements` standard-normal values in the dtype's storage format.
std::vector<uint8_t> random_normal(fa2_dtype_t dtype, size_t elements, uint64_t seed);

}  // namespace fa2::bench
