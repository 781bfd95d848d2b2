// Moving one tile between an operand (any dtype, any strides) and the
// fp32 scratch: rows past the sequence and columns past head_dim are zero,
// so they add nothing to any product and never produce NaN.
#pragma once

#include <cstdint>

#include "core/params.h"
#include "core/work.h"

namespace fa2::cpu {

// Where a tile's rows live in an operand.
struct RowSpan {
  int batch;
  int64_t seq_row0;  // the sequence's first row (varlen) or 0
  int head;
  int first;  // first row of the tile within its sequence
  int count;  // rows inside the sequence (<= tile rows)
};

template <class Elem>
inline typename Elem::T *row_ptr(const core::TensorRef &t, const RowSpan &s, int r) {
  return static_cast<typename Elem::T *>(t.data) +
         core::row_offset(t, s.batch, s.seq_row0, s.first + r, s.head);
}

// tile[tile_rows][dim] <- rows of t.
template <class Elem>
inline void load_tile(const core::TensorRef &t, const RowSpan &s, int head_dim, int dim,
                      int tile_rows, float *tile) {
  for (int r = 0; r < tile_rows; ++r) {
    float *dst = tile + int64_t(r) * dim;
    int c = 0;
    if (r < s.count) Elem::load_row(row_ptr<Elem>(t, s, r), dst, c = head_dim);
    for (; c < dim; ++c) dst[c] = 0.f;
  }
}

// rows of t <- tile[r][0, head_dim), for the rows inside the sequence only.
template <class Elem>
inline void store_tile(const float *tile, int dim, const core::TensorRef &t, const RowSpan &s,
                       int head_dim) {
  for (int r = 0; r < s.count; ++r)
    Elem::store_row(tile + int64_t(r) * dim, 1.f, row_ptr<Elem>(t, s, r), head_dim);
}

// dst[dim][rows] <- src[rows][dim]
inline void transpose_tile(const float *src, int rows, int dim, float *dst) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < dim; ++c) dst[int64_t(c) * rows + r] = src[int64_t(r) * dim + c];
}

}  // namespace fa2::cpu
