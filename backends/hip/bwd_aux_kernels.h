// The two small passes around the backward kernel: D = rowsum(dO * O)
// before it, and the fp32 dQ accumulator scaled and stored after it. One
// thread per (batch, row, head_q); rows past a varlen sequence are idle.
#pragma once

#include <hip/hip_runtime.h>

#include "core/work.h"
#include "launch.h"
#include "mfma_ops.h"

namespace fa2::hip {

struct RowThread {
  int batch, row, head_q;
  bool inside;
  core::SeqInfo seq;
};

__device__ inline RowThread row_thread(const core::AttnParams &p) {
  const int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t rows = int64_t(p.batch) * p.seqlen_q * p.heads_q;
  RowThread t{};
  if (index >= rows) return t;
  t.head_q = int(index % p.heads_q);
  t.row = int(index / p.heads_q % p.seqlen_q);
  t.batch = int(index / p.heads_q / p.seqlen_q);
  t.seq = core::seq_info(p, t.batch);
  t.inside = t.row < t.seq.seqlen_q;
  return t;
}

template <class Elem>
__global__ void bwd_preprocess_kernel(const core::AttnParams p, float *delta) {
  const RowThread t = row_thread(p);
  if (!t.inside) return;
  const auto *dout = static_cast<const uint16_t *>(p.dout.data) +
                     core::row_offset(p.dout, t.batch, t.seq.q_row0, t.row, t.head_q);
  const auto *out = static_cast<const uint16_t *>(p.out.data) +
                    core::row_offset(p.out, t.batch, t.seq.q_row0, t.row, t.head_q);
  float sum = 0.f;
  for (int d = 0; d < p.head_dim; ++d) sum += Elem::to_float(dout[d]) * Elem::to_float(out[d]);
  delta[core::row_stat_index(p, t.batch, t.head_q, t.row)] = sum;
}

template <class Elem>
__global__ void dq_convert_kernel(const core::AttnParams p, const float *dq_accum) {
  const RowThread t = row_thread(p);
  if (!t.inside) return;
  auto *dq = static_cast<uint16_t *>(p.dq.data) +
             core::row_offset(p.dq, t.batch, t.seq.q_row0, t.row, t.head_q);
  const float *acc = dq_accum + dq_accum_index(p, t.batch, t.row, t.head_q);
  for (int d = 0; d < p.head_dim; ++d) dq[d] = Elem::from_float(acc[d] * p.scale);
}

}  // namespace fa2::hip
