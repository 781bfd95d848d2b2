// What the host code (backend.cpp, a plain C++ TU) sees of the kernels:
// launchers, explicitly instantiated one per translation unit
// (instance.hip, compiled once per dtype x head dim bucket x pass), the
// tile plan, and the backward workspace layout.
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "core/params.h"
#include "core/portability.h"
#include "core/tile_plan.h"
#include "mfma_traits.h"

namespace fa2::hip {

// Kernel head dims; a head dim in between is padded inside the kernel.
inline constexpr int kHeadDimBuckets[] = {64, 128, 256};

// Wavefronts per workgroup and MFMA shape. The forward keeps K and V tiles
// of 32 keys in LDS. The backward keeps dK and dV of its keys in
// registers and K of the whole key block plus Q, dO and dS tiles in LDS:
// above head dim 128 a wavefront owns 16 keys (the 16x16x16 shape), else
// dK and dV would not fit in the 512 registers of a lane and spill.
constexpr int fwd_waves(int /*head_dim*/) { return 4; }
constexpr int bwd_waves(int head_dim) { return head_dim <= 128 ? 4 : 2; }
template <int kHeadDim>
using BwdLayout = std::conditional_t<(kHeadDim <= 128), Mfma32x32x8, Mfma16x16x16>;

constexpr core::TilePlan fwd_plan(int head_dim) {
  return {fwd_waves(head_dim) * Mfma32x32x8::kN, Mfma32x32x8::kM, head_dim, fwd_waves(head_dim), 1};
}
template <int kHeadDim>
constexpr core::TilePlan bwd_plan() {
  using L = BwdLayout<kHeadDim>;
  return {L::kM, bwd_waves(kHeadDim) * L::kN, kHeadDim, bwd_waves(kHeadDim), 1};
}

// Backward scratch inside the caller's workspace: the fp32 dQ accumulator
// [batch * seqlen_q(max), heads_q, head_dim], then D [batch, heads_q, seqlen_q].
struct BwdWorkspace {
  uint64_t dq_accum_bytes;
  uint64_t delta_offset;
  uint64_t bytes;
};
inline BwdWorkspace bwd_workspace(const core::AttnParams &p) {
  constexpr uint64_t kAlign = 256;
  const uint64_t rows = uint64_t(p.batch) * uint64_t(p.seqlen_q) * uint64_t(p.heads_q);
  const uint64_t dq_bytes = rows * uint64_t(p.head_dim) * sizeof(float);
  const uint64_t delta_offset = (dq_bytes + kAlign - 1) / kAlign * kAlign;
  return {dq_bytes, delta_offset, delta_offset + rows * sizeof(float)};
}
FA2_INLINE int64_t dq_accum_index(const core::AttnParams &p, int batch, int row, int head_q) {
  return ((int64_t(batch) * p.seqlen_q + row) * p.heads_q + head_q) * p.head_dim;
}

template <core::Dtype kDtype, int kHeadDim>
hipError_t launch_fwd(const core::AttnParams &p, uint32_t workgroups, hipStream_t stream);
template <core::Dtype kDtype, int kHeadDim>
hipError_t launch_bwd(const core::AttnParams &p, uint32_t workgroups, float *dq_accum,
                      const float *delta, hipStream_t stream);
// One thread per (batch, row, head_q): D before, dQ conversion after.
hipError_t launch_bwd_preprocess(const core::AttnParams &p, float *delta, hipStream_t stream);
hipError_t launch_dq_convert(const core::AttnParams &p, const float *dq_accum, hipStream_t stream);

}  // namespace fa2::hip
