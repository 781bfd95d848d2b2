// See emulated_kernels.h. The launch arithmetic mirrors backends/hip/
// backend.cpp and instance.hip; the kernels are the backend's own.
#include "emulated_kernels.h"

#include <hip/hip_runtime.h>  // the emulation: -I emulation comes first

#include <cstring>
#include <stdexcept>

#include "bwd_aux_kernels.h"
#include "bwd_kernel.h"
#include "core/tile_plan.h"
#include "core/work.h"
#include "fwd_kernel.h"
#include "launch.h"

namespace fa2::hip::emulated {
namespace {

template <class Elem, int kHeadDim>
void fwd_bucket(const core::AttnParams &p) {
  constexpr int kWaves = fwd_waves(kHeadDim);
  fa2_emu::launch(fwd_kernel<Elem, kHeadDim, kWaves>,
                  unsigned(core::fwd_items(p, fwd_plan(kHeadDim).block_m)),
                  kWaves * Mfma32x32x8::kWaveSize, p);
}

template <class Elem, int kHeadDim>
void bwd_bucket(const core::AttnParams &p, void *workspace) {
  using L = BwdLayout<kHeadDim>;
  const BwdWorkspace layout = bwd_workspace(p);
  auto *dq_accum = static_cast<float *>(workspace);
  auto *delta = reinterpret_cast<float *>(static_cast<char *>(workspace) + layout.delta_offset);
  std::memset(dq_accum, 0, layout.dq_accum_bytes);
  const unsigned row_threads = 4 * Mfma32x32x8::kWaveSize;
  const int64_t rows = int64_t(p.batch) * p.seqlen_q * p.heads_q;
  const unsigned row_groups = unsigned((rows + row_threads - 1) / row_threads);
  fa2_emu::launch(bwd_preprocess_kernel<Elem>, row_groups, row_threads, p, delta);
  constexpr int kWaves = bwd_waves(kHeadDim);
  fa2_emu::launch(bwd_kernel<Elem, L, kHeadDim, kWaves>,
                  unsigned(core::bwd_items(p, bwd_plan<kHeadDim>().block_n)), kWaves * L::kWaveSize,
                  p, dq_accum, static_cast<const float *>(delta));
  fa2_emu::launch(dq_convert_kernel<Elem>, row_groups, row_threads, p,
                  static_cast<const float *>(dq_accum));
}

template <class Fn>
void dispatch(const core::AttnParams &p, Fn &&fn) {
  const int bucket = core::head_dim_bucket(p.head_dim, kHeadDimBuckets);
  auto with_dim = [&](auto elem) {
    switch (bucket) {
      case 64:
        return fn(elem, std::integral_constant<int, 64>{});
      case 128:
        return fn(elem, std::integral_constant<int, 128>{});
      case 256:
        return fn(elem, std::integral_constant<int, 256>{});
      default:
        throw std::invalid_argument("no kernel for this head dim");
    }
  };
  if (p.dtype == core::Dtype::bf16) return with_dim(BF16{});
  return with_dim(F16{});
}

}  // namespace

void fwd(const core::AttnParams &p) {
  dispatch(p, [&](auto elem, auto head_dim) {
    fwd_bucket<decltype(elem), decltype(head_dim)::value>(p);
  });
}

void bwd(const core::AttnParams &p, void *workspace) {
  dispatch(p, [&](auto elem, auto head_dim) {
    bwd_bucket<decltype(elem), decltype(head_dim)::value>(p, workspace);
  });
}

}  // namespace fa2::hip::emulated
