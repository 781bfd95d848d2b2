// Row-major tiles of 16-bit values in LDS, and the cooperative copy that
// fills them from a [seqlen, heads, head_dim] operand. Rows are padded by
// kPad values so that the lanes of one MFMA operand read (consecutive rows
// at the same column) fall into different LDS banks.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

#include "core/work.h"
#include "mfma_ops.h"

namespace fa2::hip {

template <int kRows, int kCols>
struct LdsTile {
  static constexpr int kPad = Mfma32x32x8::kOperandElems;  // one 8-byte chunk
  static constexpr int kStride = kCols + kPad;
  static constexpr int kElems = kRows * kStride;
  uint16_t *data;

  __device__ uint16_t &at(int row, int col) const { return data[row * kStride + col]; }
  __device__ Bits4 chunk(int row, int col) const {
    return *reinterpret_cast<const Bits4 *>(&data[row * kStride + col]);
  }
  // Four values down one column: an operand read along the tile's rows.
  __device__ Bits4 column4(int row, int col) const {
    return Bits4{at(row, col), at(row + 1, col), at(row + 2, col), at(row + 3, col)};
  }

  // All threads of the block copy rows [row0, row0 + kRows) of one head;
  // rows past `rows` and columns past `cols` are filled with zeros (that is
  // how the head dim is padded to the kernel's bucket).
  __device__ void load(const core::TensorRef &t, int batch, int64_t seq_row0, int row0, int rows,
                       int head, int cols) const {
    constexpr int kChunksPerRow = kCols / Mfma32x32x8::kOperandElems;
    const auto *base = static_cast<const uint16_t *>(t.data);
    for (int c = threadIdx.x; c < kRows * kChunksPerRow; c += blockDim.x) {
      const int row = c / kChunksPerRow;
      const int col = (c % kChunksPerRow) * Mfma32x32x8::kOperandElems;
      const bool inside = row0 + row < rows && col < cols;
      const uint16_t *src =
          inside ? base + core::row_offset(t, batch, seq_row0, row0 + row, head) + col : base;
      *reinterpret_cast<Bits4 *>(&data[row * kStride + col]) = load4(src, inside);
    }
  }
};

}  // namespace fa2::hip
