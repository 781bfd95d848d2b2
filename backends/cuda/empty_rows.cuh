// Query rows that see no key at all get output 0 and lse -inf, the exact
// limit; every forward kernel writes them through this when a whole query
// block is empty (it never loads K or V then).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/work.h"

namespace fa2::cuda {

template <class T>
__device__ void write_empty_rows(const core::AttnParams &p, T *out, int64_t out_stride, int b,
                                 int head, int row0, int rows, int tid, int threads) {
  for (int i = tid; i < rows * (p.head_dim / 2); i += threads) {
    const int row = i / (p.head_dim / 2), col = 2 * (i % (p.head_dim / 2));
    *reinterpret_cast<uint32_t *>(out + row * out_stride + col) = 0u;
  }
  for (int row = tid; row < rows; row += threads)
    p.lse[core::row_stat_index(p, b, head, row0 + row)] = -INFINITY;
}

}  // namespace fa2::cuda
