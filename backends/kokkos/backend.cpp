// The Kokkos backend: capabilities, dtype dispatch and kernel launches on
// Kokkos's default execution space, whichever it is. Calls are synchronous
// (they fence before returning); the `stream` argument is not used, so a
// caller on a GPU must have finished writing the inputs before the call.
#include <climits>
#include <memory>
#include <string>

#include "backend.h"
#include "backward.h"
#include "forward.h"
#include "runtime.h"
#include "tiles.h"

namespace fa2 {
namespace kokkos {
namespace {

using RowPolicy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<int64_t>>;

// Kokkos leagues are int-sized.
bool league_fits(int64_t teams, std::string &why) {
  if (teams <= INT_MAX) return true;
  why = "the problem needs " + std::to_string(teams) + " Kokkos teams, more than INT_MAX";
  return false;
}

template <class Elem>
fa2_status_t forward(const core::AttnParams &p, std::string &why) {
  using Kernel = ForwardKernel<Elem>;
  const int64_t teams = Kernel::league_size(p);
  if (teams == 0) return FA2_SUCCESS;
  if (!league_fits(teams, why)) return FA2_ERROR_SIZE_OVERFLOW;
  const size_t bytes = Kernel::scratch_bytes(p.head_dim);
  const int level = scratch_level_for(bytes);
  Kokkos::parallel_for("fa2::kokkos::forward", team_policy(int(teams), level, bytes),
                       Kernel{p, level});
  return FA2_SUCCESS;
}

template <class Elem>
fa2_status_t backward(const core::AttnParams &p, std::string &why) {
  using Kernel = BackwardKernel<Elem>;
  const BackwardWorkspace workspace(p);
  const int block = Kernel::block_size(p.head_dim);
  const int64_t teams = core::bwd_items(p, block);
  if (!league_fits(teams, why)) return FA2_ERROR_SIZE_OVERFLOW;
  float *row_dot = workspace.row_dot(p.workspace);
  float *dq_accum = workspace.dq_accum(p.workspace);
  const RowPolicy rows(0, int64_t(workspace.rows));
  if (workspace.rows > 0)
    Kokkos::parallel_for("fa2::kokkos::backward_row_stats", rows,
                         RowStatsKernel<Elem>{p, row_dot, dq_accum});
  if (teams > 0) {
    const size_t bytes = Kernel::scratch_bytes(block, block, p.head_dim);
    const int level = scratch_level_for(bytes);
    Kokkos::parallel_for("fa2::kokkos::backward", team_policy(int(teams), level, bytes),
                         Kernel{p, block, block, level, row_dot, dq_accum});
  }
  if (workspace.rows > 0)
    Kokkos::parallel_for("fa2::kokkos::backward_dq", rows, DqStoreKernel<Elem>{p, dq_accum});
  return FA2_SUCCESS;
}

// f16 / bf16 / f32 share every kernel; only the Elem policy differs.
template <class F16Fn, class BF16Fn, class F32Fn>
fa2_status_t by_dtype(core::Dtype dtype, F16Fn f16, BF16Fn bf16, F32Fn f32) {
  switch (dtype) {
    case core::Dtype::f16: return f16();
    case core::Dtype::bf16: return bf16();
    case core::Dtype::f32: return f32();
  }
  return FA2_ERROR_UNSUPPORTED_DTYPE;
}

class KokkosBackend final : public Backend {
 public:
  Capabilities capabilities() const override {
    Capabilities caps{};
    caps.dtypes[FA2_DTYPE_F16] = caps.dtypes[FA2_DTYPE_BF16] = caps.dtypes[FA2_DTYPE_F32] = true;
    caps.max_head_dim = 256;
    caps.head_dim_multiple = 1;
    caps.alignment_bytes = 2;  // element size of f16/bf16; check() adds f32's 4
    caps.host_memory = kHostAccessible;
    return caps;
  }

  // A GPU faults on a misaligned float load, so f32 operands need 4 bytes.
  fa2_status_t check(const core::AttnParams &p, std::string &why) const override {
    if (p.dtype != core::Dtype::f32) return FA2_SUCCESS;
    const struct {
      const char *name;
      const void *data;
    } operands[] = {{"q", p.q.data},       {"k", p.k.data},   {"v", p.v.data},
                    {"out", p.out.data},   {"dout", p.dout.data}, {"dq", p.dq.data},
                    {"dk", p.dk.data},     {"dv", p.dv.data}};
    for (const auto &operand : operands)
      if (reinterpret_cast<uintptr_t>(operand.data) % alignof(float) != 0)
        return why = std::string(operand.name) + ".data is not aligned to 4 bytes (f32)",
               FA2_ERROR_MISALIGNED;
    return FA2_SUCCESS;
  }

  uint64_t fwd_workspace(const core::AttnParams &) const override { return 0; }
  uint64_t bwd_workspace(const core::AttnParams &p) const override {
    return BackwardWorkspace(p).bytes;
  }

  fa2_status_t fwd(const core::AttnParams &p, void *, std::string &why) override {
    const fa2_status_t status = by_dtype(
        p.dtype, [&] { return forward<F16>(p, why); }, [&] { return forward<BF16>(p, why); },
        [&] { return forward<F32>(p, why); });
    Exec().fence();
    return status;
  }

  fa2_status_t bwd(const core::AttnParams &p, void *, std::string &why) override {
    const fa2_status_t status = by_dtype(
        p.dtype, [&] { return backward<F16>(p, why); }, [&] { return backward<BF16>(p, why); },
        [&] { return backward<F32>(p, why); });
    Exec().fence();
    return status;
  }
};

}  // namespace
}  // namespace kokkos

fa2_status_t make_kokkos_backend(int device, std::unique_ptr<Backend> &out, std::string &why) {
  const fa2_status_t status = kokkos::ensure_initialized(device, why);
  if (status != FA2_SUCCESS) return status;
  out = std::make_unique<kokkos::KokkosBackend>();
  return FA2_SUCCESS;
}

}  // namespace fa2
