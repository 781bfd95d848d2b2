// What the CPU backend object shares with its kernel translation units:
// the tile plan, the per-call context, the backward's workspace layout and
// the kernel templates (instantiated once per ISA and dtype, each in its own
// generated translation unit; see CMakeLists.txt).
#pragma once

#include <cstdint>
#include <mutex>

#include "core/params.h"
#include "core/tile_plan.h"
#include "thread_pool.h"

namespace fa2::cpu {

// 128 query rows x 64 keys: the K/V tiles (converted and K transposed per
// key block) are reused by 128 rows, and at head dim 256 the fp32 Q, O, K, V
// tiles (128 + 128 + 64 + 64 rows x 1 KiB) still fit a core's L2. Measured
// on AVX-512 (per CPU-second): 64 x 64 is ~15% slower. Head dims are
// padded (with zeros) to the widest vector so every row is whole vectors.
inline constexpr int kBlockM = 128;
inline constexpr int kBlockN = 64;
inline constexpr int kDimAlign = 16;

constexpr core::TilePlan cpu_tile_plan(int head_dim) {
  return {kBlockM, kBlockN, (head_dim + kDimAlign - 1) / kDimAlign * kDimAlign, 1, 1};
}

// Per-worker fp32 scratch: the forward's Q, K^T, V, O tiles and score tile,
// or the backward's Q, dO, K, K^T, V^T, dK, dV, dQ tiles, two score tiles and
// two row vectors; the backward's is the larger.
constexpr int64_t scratch_floats(int head_dim) {
  const int64_t dim = cpu_tile_plan(head_dim).head_dim;
  return 8 * int64_t(kBlockM > kBlockN ? kBlockM : kBlockN) * dim + 2 * kBlockM * kBlockN +
         2 * kBlockM;
}

struct KernelContext {
  ThreadPool *pool;
  float *const *scratch;  // one buffer per pool worker, scratch_floats() each
  std::mutex *dq_locks;   // stripes guarding the fp32 dQ accumulator
  int dq_lock_count;
};

// The backward's workspace: D = rowsum(dO * O) then the fp32 dQ accumulator,
// both in the padded [batch, heads_q, seqlen_q] row order of lse.
struct BwdWorkspace {
  float *row_dot;  // D, one float per row
  float *dq_accum; // head_dim floats per row
};
constexpr uint64_t kWorkspaceAlign = 64;
inline uint64_t bwd_workspace_bytes(const core::AttnParams &p) {
  const uint64_t rows = uint64_t(p.batch) * uint64_t(p.heads_q) * uint64_t(p.seqlen_q);
  if (rows == 0) return 0;
  return rows * (uint64_t(p.head_dim) + 1) * sizeof(float) + kWorkspaceAlign;
}
inline BwdWorkspace bwd_workspace(const core::AttnParams &p) {
  const uint64_t rows = uint64_t(p.batch) * uint64_t(p.heads_q) * uint64_t(p.seqlen_q);
  const uintptr_t base = (reinterpret_cast<uintptr_t>(p.workspace) + kWorkspaceAlign - 1) &
                         ~uintptr_t(kWorkspaceAlign - 1);
  float *row_dot = reinterpret_cast<float *>(base);
  return {row_dot, row_dot + rows};
}

using KernelFn = void (*)(const core::AttnParams &, const KernelContext &);

template <class Isa, core::Dtype D>
void attention_fwd(const core::AttnParams &p, const KernelContext &ctx);
template <class Isa, core::Dtype D>
void attention_bwd(const core::AttnParams &p, const KernelContext &ctx);

}  // namespace fa2::cpu
