// The CUDA backend: device checks, workspace layout and the launch sequence.
// Kernels and their dispatch live in sm80/ and dispatch.cpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>

#include "backend.h"
#include "cuda_check.h"
#include "dispatch.h"
#include "sm80/bwd_scratch.h"
#include "sm80/tile_plan.h"

namespace fa2 {
namespace cuda {
namespace {

// Makes the handle's device current for one call and restores the caller's.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    status_ = cudaSetDevice(device);
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  cudaError_t status() const { return status_; }

 private:
  int previous_ = -1;
  cudaError_t status_ = cudaSuccess;
};

constexpr uint64_t kScratchAlign = 256;
uint64_t round_up(uint64_t x) { return (x + kScratchAlign - 1) / kScratchAlign * kScratchAlign; }
uint64_t stat_rows(const core::AttnParams &p) {
  return uint64_t(p.batch) * uint64_t(p.heads_q) * uint64_t(p.seqlen_q);
}

// The Hopper kernels run on compute capability 9.0 exactly (sm_90a code
// runs nowhere else).
bool hopper_device(int major, int minor) { return major == 9 && minor == 0; }

// FA2_CUDA_PATH=sm80 keeps calls on the sm80 kernels, to compare the two
// paths on one GPU; read per call so that a benchmark can switch it.
bool sm80_forced() {
  const char *path = std::getenv("FA2_CUDA_PATH");
  return path != nullptr && std::strcmp(path, "sm80") == 0;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, bool hopper, int sm_count)
      : device_(device), hopper_(hopper), sm_count_(sm_count) {}

  Capabilities capabilities() const override {
    Capabilities caps{};
    caps.dtypes[FA2_DTYPE_F16] = true;
    caps.dtypes[FA2_DTYPE_BF16] = true;
    caps.dtypes[FA2_DTYPE_F32] = false;
    caps.max_head_dim = 256;
    caps.head_dim_multiple = 8;
    caps.alignment_bytes = 16;
    caps.host_memory = false;
    return caps;
  }

  fa2_status_t check(const core::AttnParams &p, std::string &why) const override {
    KernelSet kernels;
    fa2_status_t status = kernels_for(p.dtype, p.head_dim, kernels, why);
    if (status != FA2_SUCCESS) return status;
    DeviceGuard guard(device_);
    FA2_CUDA_CHECK(guard.status());
    const struct {
      const char *name;
      const void *ptr;
    } operands[] = {{"q", p.q.data},       {"k", p.k.data},         {"v", p.v.data},
                    {"out", p.out.data},   {"lse", p.lse},          {"dout", p.dout.data},
                    {"dq", p.dq.data},     {"dk", p.dk.data},       {"dv", p.dv.data},
                    {"cu_seqlens_q", p.cu_seqlens_q}, {"cu_seqlens_k", p.cu_seqlens_k}};
    for (const auto &op : operands) {
      if (op.ptr == nullptr) continue;  // not part of this call
      cudaPointerAttributes attributes{};
      const cudaError_t error = cudaPointerGetAttributes(&attributes, op.ptr);
      if (error != cudaSuccess) {
        cudaGetLastError();  // clear it: an unknown pointer is the caller's mistake
        why = std::string(op.name) + " is not a pointer the CUDA runtime knows (" +
              cudaGetErrorString(error) + ")";
        return FA2_ERROR_INVALID_ARGUMENT;
      }
      const bool on_device = attributes.type == cudaMemoryTypeDevice ||
                             attributes.type == cudaMemoryTypeManaged;
      if (!on_device || attributes.device != device_) {
        why = std::string(op.name) + " must be device (or managed) memory of CUDA device " +
              std::to_string(device_) +
              (on_device ? ", it is on device " + std::to_string(attributes.device)
                         : ", it is host memory");
        return FA2_ERROR_INVALID_ARGUMENT;
      }
    }
    return FA2_SUCCESS;
  }

  // The forward needs room for a decoding call's split parts (fwd_route),
  // and for a varlen call on the Hopper kernels, their tile counter and
  // tensor maps (asked for whether or not FA2_CUDA_PATH or the shape sends
  // the call to the sm80 kernels). Never both at once: the larger.
  uint64_t fwd_workspace(const core::AttnParams &p) const override {
    const uint64_t hopper_bytes = hopper_ ? hopper_fwd_workspace_bytes(p) : 0;
    KernelSet kernels;
    FwdRoute route;
    std::string why;
    if (kernels_for(p.dtype, p.head_dim, kernels, why) != FA2_SUCCESS ||
        route_of(p, kernels, route, why) != FA2_SUCCESS)
      return hopper_bytes;  // fwd() reports it
    return route.partial_bytes > hopper_bytes ? route.partial_bytes : hopper_bytes;
  }

  uint64_t bwd_workspace(const core::AttnParams &p) const override {
    const ScratchLayout layout = scratch_layout(p);
    uint64_t bytes = 0;
    return __builtin_add_overflow(layout.sequence_maps, layout.sequence_maps_bytes, &bytes)
               ? UINT64_MAX
               : bytes;
  }

  fa2_status_t fwd(const core::AttnParams &p, void *stream, std::string &why) override {
    KernelSet kernels;
    fa2_status_t status = kernels_for(p.dtype, p.head_dim, kernels, why);
    if (status != FA2_SUCCESS) return status;
    DeviceGuard guard(device_);
    FA2_CUDA_CHECK(guard.status());
    FwdRoute route;
    status = route_of(p, kernels, route, why);
    if (status != FA2_SUCCESS) return status;
    if (route.decode) {
      char *workspace = static_cast<char *>(p.workspace);
      if (route.partial_bytes > 0) {
        route.params.out_partial = reinterpret_cast<float *>(workspace);
        route.params.lse_partial = reinterpret_cast<float *>(workspace + route.lse_partial_offset);
      }
      return kernels.fwd_decode(route.params, static_cast<cudaStream_t>(stream), why);
    }
    const FwdLauncher hopper = hopper_ && !sm80_forced() ? hopper_fwd_for(p) : nullptr;
    return (hopper != nullptr ? hopper : kernels.fwd)(p, static_cast<cudaStream_t>(stream), why);
  }

  fa2_status_t bwd(const core::AttnParams &p, void *stream, std::string &why) override {
    KernelSet kernels;
    fa2_status_t status = kernels_for(p.dtype, p.head_dim, kernels, why);
    if (status != FA2_SUCCESS) return status;
    DeviceGuard guard(device_);
    FA2_CUDA_CHECK(guard.status());
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const BwdLauncher hopper = hopper_ && !sm80_forced() ? hopper_bwd_for(p) : nullptr;
    const ScratchLayout layout = scratch_layout(p);
    char *workspace = static_cast<char *>(p.workspace);
    auto at = [&](uint64_t offset) { return reinterpret_cast<float *>(workspace + offset); };
    const BwdScratch scratch{hopper != nullptr ? nullptr : at(layout.delta), at(layout.dq_accum),
                             hopper != nullptr ? at(layout.block_stats) : nullptr,
                             hopper != nullptr && layout.sequence_maps_bytes > 0
                                 ? workspace + layout.sequence_maps
                                 : nullptr,
                             // (on a 9.0 device the sm80 kernels run their sm_90 code)
                             hopper == nullptr && hopper_ &&
                                     sm80_bwd_pairs_dq(kernels.head_dim_bucket)
                                 ? kernels.head_dim_bucket
                                 : 0,
                             hopper != nullptr && hopper_bwd_counts_keys(p)
                                 ? reinterpret_cast<unsigned *>(workspace + layout.kv_done)
                                 : nullptr};
    if (stat_rows(p) > 0) {
      // D (with the lse, zero in the padding, for the Hopper kernels), and
      // the dQ accumulator zeroed.
      status = kernels.bwd_delta(p, scratch, s, why);
      if (status != FA2_SUCCESS) return status;
    }
    // Either kernel also writes dK = dV = 0 where no query sees a key.
    status = (hopper != nullptr ? hopper : kernels.bwd)(p, scratch, s, why);
    if (status != FA2_SUCCESS || stat_rows(p) == 0) return status;
    return kernels.bwd_dq_convert(p, scratch, s, why);
  }

 private:
  // The decoding kernels' occupancy is asked once per (dtype, head-dim
  // bucket, slabs an item): every forward call and workspace query routes,
  // and the query (with the attribute set before it) costs host time a
  // decoding step has little of.
  fa2_status_t route_of(const core::AttnParams &p, const KernelSet &kernels, FwdRoute &route,
                        std::string &why) const {
    int bucket = 0;
    while (kHeadDimBuckets[bucket] != kernels.head_dim_bucket) ++bucket;
    int64_t slots[kDecodeMaxSlabs];
    for (int slabs = 1; slabs <= kDecodeMaxSlabs; ++slabs) {
      std::atomic<int> &cached =
          decode_ctas_per_sm_[p.dtype == core::Dtype::bf16][bucket][slabs - 1];
      int ctas = cached.load(std::memory_order_relaxed);
      if (ctas == 0) {
        DeviceGuard guard(device_);
        FA2_CUDA_CHECK(guard.status());
        const fa2_status_t status = kernels.fwd_decode_ctas_per_sm(slabs, ctas, why);
        if (status != FA2_SUCCESS) return status;
        cached.store(ctas, std::memory_order_relaxed);
      }
      slots[slabs - 1] = int64_t(sm_count_) * ctas;
    }
    route = fwd_route(p, kernels, slots);
    return FA2_SUCCESS;
  }

  // Byte offsets of BwdScratch's buffers in the workspace: [delta |
  // block_stats (Hopper devices only) | dq_accum | kv_done (Hopper devices
  // only) | sequence_maps (Hopper devices, varlen only)].
  struct ScratchLayout {
    uint64_t delta, block_stats, dq_accum, kv_done, sequence_maps, sequence_maps_bytes;
  };
  // The API bounds rows * head_dim * 4 bytes; the block statistics (padded
  // to 64 rows a head) can exceed that for huge batch * heads with short
  // sequences: such a layout asks for UINT64_MAX bytes, which no caller has.
  ScratchLayout scratch_layout(const core::AttnParams &p) const {
    const uint64_t rows = stat_rows(p);
    const uint64_t block_stats = round_up(rows * sizeof(float));
    uint64_t stats_bytes = 0, dq_accum = 0;
    const uint64_t heads = uint64_t(p.batch) * uint64_t(p.heads_q);
    const uint64_t per_head =
        uint64_t(block_stat_head_blocks(p)) * 2 * kStatBlockRows * sizeof(float);
    if ((hopper_ && __builtin_mul_overflow(heads, per_head, &stats_bytes)) ||
        stats_bytes > UINT64_MAX / 2 ||
        __builtin_add_overflow(block_stats, round_up(stats_bytes), &dq_accum))
      return {0, 0, 0, 0, UINT64_MAX, 0};
    // Room for either dQ accumulator layout (bwd_scratch.h): the paired one
    // pads rows to the kernel's head dim and holds one row more.
    const uint64_t row_floats =
        uint64_t(std::max(core::head_dim_bucket(p.head_dim, kHeadDimBuckets), p.head_dim));
    uint64_t dq_accum_bytes = 0, kv_done = 0, sequence_maps = 0;
    const uint64_t kv_done_bytes =
        hopper_ ? round_up(uint64_t(p.batch) * uint64_t(p.heads_kv) * sizeof(unsigned)) : 0;
    if (__builtin_mul_overflow(rows + 1, row_floats * sizeof(float), &dq_accum_bytes) ||
        dq_accum_bytes > UINT64_MAX / 2 ||
        __builtin_add_overflow(dq_accum, round_up(dq_accum_bytes), &kv_done) ||
        __builtin_add_overflow(kv_done, kv_done_bytes, &sequence_maps))
      return {0, 0, 0, 0, UINT64_MAX, 0};
    return {0, block_stats, dq_accum, kv_done, sequence_maps,
            hopper_ ? hopper_bwd_workspace_bytes(p) : 0};
  }

  int device_;
  bool hopper_;
  int sm_count_;
  mutable std::atomic<int> decode_ctas_per_sm_[2][std::size(kHeadDimBuckets)][kDecodeMaxSlabs] =
      {};
};

}  // namespace
}  // namespace cuda

fa2_status_t make_cuda_backend(int device, std::unique_ptr<Backend> &out, std::string &why) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    cudaGetLastError();
    why = error != cudaSuccess ? std::string("no CUDA device: ") + cudaGetErrorString(error)
                               : std::string("no CUDA device");
    return FA2_ERROR_NO_DEVICE;
  }
  if (device >= count) {
    why = "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
          " present)";
    return FA2_ERROR_NO_DEVICE;
  }
  int major = 0, minor = 0;
  FA2_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  FA2_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major < 8) {
    why = "CUDA device " + std::to_string(device) + " has compute capability " +
          std::to_string(major) + ".x; the kernels need sm80 or newer";
    return FA2_ERROR_UNSUPPORTED_DEVICE;
  }
  int sm_count = 0;
  FA2_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  out = std::make_unique<cuda::CudaBackend>(device, cuda::hopper_device(major, minor), sm_count);
  return FA2_SUCCESS;
}

}  // namespace fa2
