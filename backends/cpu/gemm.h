// The one GEMM of the CPU kernels, on fp32 tiles in the per-thread scratch:
//     C[M x N] (+)= A[M x K] * B[K x N]
// B and C are row-major with N contiguous; A is addressed through a row and
// a column stride, so A may be a transposed tile (P^T, dS^T) without a copy:
// its elements are only ever broadcast. Each micro-tile keeps kRows x kVecs
// vector accumulators in registers across the whole K loop.
//
// Preconditions (the tile layout guarantees them): M % Isa::kRows == 0 and
// N % Isa::kLanes == 0; padded rows / columns hold zeros.
#pragma once

#include <cstdint>

#include "core/portability.h"
#include "isa.h"

namespace fa2::cpu {

struct MatA {
  const float *data;
  int64_t row_stride;
  int64_t col_stride;
};

template <class Isa, int kVecs>
inline void gemm_micro_tile(const MatA &a, const float *b, int ldb, float *c, int ldc, int k_size,
                            bool accumulate) {
  using S = Simd<Isa>;
  using vec = typename S::vec;
  constexpr int R = Isa::kRows, L = Isa::kLanes;
  vec acc[R][kVecs];
FA2_UNROLL
  for (int r = 0; r < R; ++r)
FA2_UNROLL
    for (int v = 0; v < kVecs; ++v)
      acc[r][v] = accumulate ? S::load(c + r * ldc + v * L) : vec{};
  for (int k = 0; k < k_size; ++k) {
    vec b_row[kVecs];
FA2_UNROLL
    for (int v = 0; v < kVecs; ++v) b_row[v] = S::load(b + int64_t(k) * ldb + v * L);
    const float *a_col = a.data + k * a.col_stride;
FA2_UNROLL
    for (int r = 0; r < R; ++r) {
      const float a_elem = a_col[r * a.row_stride];
FA2_UNROLL
      for (int v = 0; v < kVecs; ++v) acc[r][v] += a_elem * b_row[v];
    }
  }
FA2_UNROLL
  for (int r = 0; r < R; ++r)
FA2_UNROLL
    for (int v = 0; v < kVecs; ++v) S::store(c + r * ldc + v * L, acc[r][v]);
}

template <class Isa>
inline void gemm(const MatA &a, const float *b, int ldb, float *c, int ldc, int m_size,
                 int n_size, int k_size, bool accumulate) {
  constexpr int R = Isa::kRows, L = Isa::kLanes, W = Isa::kVecs * Isa::kLanes;
  for (int i = 0; i < m_size; i += R) {
    const MatA a_rows{a.data + i * a.row_stride, a.row_stride, a.col_stride};
    float *c_rows = c + int64_t(i) * ldc;
    int j = 0;
    for (; j + W <= n_size; j += W)
      gemm_micro_tile<Isa, Isa::kVecs>(a_rows, b + j, ldb, c_rows + j, ldc, k_size, accumulate);
    for (; j < n_size; j += L)
      gemm_micro_tile<Isa, 1>(a_rows, b + j, ldb, c_rows + j, ldc, k_size, accumulate);
  }
}

}  // namespace fa2::cpu
