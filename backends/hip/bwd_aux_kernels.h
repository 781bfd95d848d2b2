// The two small passes around the backward kernel: D = rowsum(dO * O)
// before it, and the fp32 dQ accumulator scaled and stored after it. One
// thread per (batch, row, head_q).
#pragma once

#include <hip/hip_runtime.h>

#include "core/work.h"
#include "launch.h"
#include "mfma_ops.h"

namespace fa2::hip {

// Calls row_fn(batch, seq, row, head_q) for every query row of every head,
// grid-stride, so that any number of rows fits the launch limits.
template <class RowFn>
__device__ void for_each_row(const core::AttnParams &p, RowFn &&row_fn) {
  const int64_t rows = int64_t(p.batch) * p.seqlen_q * p.heads_q;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; index < rows;
       index += stride) {
    const int head_q = int(index % p.heads_q);
    const int row = int(index / p.heads_q % p.seqlen_q);
    const int batch = int(index / p.heads_q / p.seqlen_q);
    const core::SeqInfo seq = core::seq_info(p, batch);
    if (row < seq.seqlen_q) row_fn(batch, seq, row, head_q);  // past a varlen sequence: idle
  }
}

template <class Elem>
__global__ void bwd_preprocess_kernel(const core::AttnParams p, float *delta) {
  for_each_row(p, [&](int batch, const core::SeqInfo &seq, int row, int head_q) {
    const auto *dout = static_cast<const uint16_t *>(p.dout.data) +
                       core::row_offset(p.dout, batch, seq.q_row0, row, head_q);
    const auto *out = static_cast<const uint16_t *>(p.out.data) +
                      core::row_offset(p.out, batch, seq.q_row0, row, head_q);
    float sum = 0.f;
    for (int d = 0; d < p.head_dim; ++d) sum += Elem::to_float(dout[d]) * Elem::to_float(out[d]);
    delta[core::row_stat_index(p, batch, head_q, row)] = sum;
  });
}

template <class Elem>
__global__ void dq_convert_kernel(const core::AttnParams p, const float *dq_accum) {
  for_each_row(p, [&](int batch, const core::SeqInfo &seq, int row, int head_q) {
    auto *dq =
        static_cast<uint16_t *>(p.dq.data) + core::row_offset(p.dq, batch, seq.q_row0, row, head_q);
    const float *acc = dq_accum + dq_accum_index(p, batch, row, head_q);
    for (int d = 0; d < p.head_dim; ++d) dq[d] = Elem::from_float(acc[d] * p.scale);
  });
}

}  // namespace fa2::hip
