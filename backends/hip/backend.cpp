// The HIP backend's host side: device discovery, the checks only HIP can
// make (pointer residency, device generation), the workspace layout, and
// the one dispatch over dtype x head dim bucket. Plain C++ against the
// HIP runtime API; the kernels live in the instance.hip translation units.
#include "backend.h"

#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "core/tile_plan.h"
#include "core/work.h"
#include "hip_status.h"
#include "launch.h"

namespace fa2::hip {

fa2_status_t status_of(hipError_t error) {
  switch (error) {
    case hipSuccess:
      return FA2_SUCCESS;
    case hipErrorNoDevice:
    case hipErrorInvalidDevice:
    case hipErrorInsufficientDriver:
      return FA2_ERROR_NO_DEVICE;
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidDeviceFunction:
      return FA2_ERROR_UNSUPPORTED_DEVICE;
    case hipErrorOutOfMemory:
      return FA2_ERROR_OUT_OF_MEMORY;
    default:
      return FA2_ERROR_DEVICE_RUNTIME;
  }
}

namespace {

// The architectures this build holds code objects for (FA2_HIP_ARCH).
constexpr const char *kBuiltArchs = FA2_HIP_ARCHS;

bool arch_is_built(const std::string &device_arch) {
  // gcnArchName reads like "gfx90a:sramecc+:xnack-"; compare the processor.
  const std::string processor = device_arch.substr(0, device_arch.find(':'));
  std::istringstream archs(kBuiltArchs);
  for (std::string arch; std::getline(archs, arch, ',');)
    if (arch == processor) return true;
  return false;
}

// Runs body() with `device` current and gives the caller its device back;
// a failure to restore it is reported unless body() already failed.
template <class Body>
fa2_status_t on_device(int device, std::string &why, Body &&body) {
  int previous = 0;
  FA2_HIP_CHECK(hipGetDevice(&previous));
  if (previous != device) FA2_HIP_CHECK(hipSetDevice(device));
  const fa2_status_t status = body();
  if (previous != device) {
    const hipError_t restored = hipSetDevice(previous);
    if (restored != hipSuccess && status == FA2_SUCCESS)
      return fail_with(restored, "hipSetDevice(previous device)", why);
  }
  return status;
}

// Calls fn(std::integral_constant<Dtype>, std::integral_constant<head dim>)
// for the kernel that serves p: the one place that maps runtime dtype and
// head dim to kernel instantiations.
template <class Fn>
fa2_status_t dispatch(const core::AttnParams &p, std::string &why, Fn &&fn) {
  const int bucket = core::head_dim_bucket(p.head_dim, kHeadDimBuckets);
  auto with_dim = [&](auto dtype) -> fa2_status_t {
    switch (bucket) {
      case 64:
        return fn(dtype, std::integral_constant<int, 64>{});
      case 128:
        return fn(dtype, std::integral_constant<int, 128>{});
      case 256:
        return fn(dtype, std::integral_constant<int, 256>{});
      default:
        why = "head_dim " + std::to_string(p.head_dim) + " has no HIP kernel (at most 256)";
        return FA2_ERROR_UNSUPPORTED_HEAD_DIM;
    }
  };
  switch (p.dtype) {
    case core::Dtype::f16:
      return with_dim(std::integral_constant<core::Dtype, core::Dtype::f16>{});
    case core::Dtype::bf16:
      return with_dim(std::integral_constant<core::Dtype, core::Dtype::bf16>{});
    default:
      why = "the HIP backend takes f16 and bf16";
      return FA2_ERROR_UNSUPPORTED_DTYPE;
  }
}

// A dispatch holds at most 2^32 - 1 work-items (workgroups x threads).
fa2_status_t workgroups_of(int64_t items, const core::TilePlan &plan, uint32_t &workgroups,
                           std::string &why) {
  const int64_t threads = int64_t(plan.workers) * Mfma32x32x8::kWaveSize;
  if (items > int64_t(UINT32_MAX) / threads) {
    why = std::to_string(items) + " workgroups of " + std::to_string(threads) +
          " threads exceed the dispatch limit of 2^32 work-items";
    return FA2_ERROR_SIZE_OVERFLOW;
  }
  workgroups = uint32_t(items);
  return FA2_SUCCESS;
}

class HipBackend final : public Backend {
 public:
  explicit HipBackend(int device) : device_(device) {}

  Capabilities capabilities() const override {
    Capabilities caps{};
    caps.dtypes[FA2_DTYPE_F16] = true;
    caps.dtypes[FA2_DTYPE_BF16] = true;
    caps.max_head_dim = 256;
    caps.head_dim_multiple = 8;
    caps.alignment_bytes = 16;
    caps.host_memory = false;
    return caps;
  }

  fa2_status_t check(const core::AttnParams &p, std::string &why) const override {
    const std::pair<const char *, const void *> operands[] = {{"q", p.q.data},
                                                              {"k", p.k.data},
                                                              {"v", p.v.data},
                                                              {"out", p.out.data},
                                                              {"lse", p.lse},
                                                              {"dout", p.dout.data},
                                                              {"dq", p.dq.data},
                                                              {"dk", p.dk.data},
                                                              {"dv", p.dv.data},
                                                              {"cu_seqlens_q", p.cu_seqlens_q},
                                                              {"cu_seqlens_k", p.cu_seqlens_k}};
    for (const auto &[name, pointer] : operands) {
      if (pointer == nullptr) continue;  // size queries and forward-only calls
      const fa2_status_t status = check_resident(name, pointer, why);
      if (status != FA2_SUCCESS) return status;
    }
    return FA2_SUCCESS;
  }

  uint64_t fwd_workspace(const core::AttnParams &) const override { return 0; }
  uint64_t bwd_workspace(const core::AttnParams &p) const override {
    return hip::bwd_workspace(p).bytes;
  }

  fa2_status_t fwd(const core::AttnParams &p, void *stream, std::string &why) override {
    return on_device(device_, why, [&] {
      return dispatch(p, why, [&](auto dtype, auto head_dim) {
        return run_fwd<decltype(dtype)::value, decltype(head_dim)::value>(
            p, static_cast<hipStream_t>(stream), why);
      });
    });
  }

  fa2_status_t bwd(const core::AttnParams &p, void *stream, std::string &why) override {
    if (reinterpret_cast<uintptr_t>(p.workspace) % alignof(float) != 0) {
      why = "workspace must be aligned to 4 bytes (fp32 atomics)";
      return FA2_ERROR_MISALIGNED;
    }
    return on_device(device_, why, [&] {
      return dispatch(p, why, [&](auto dtype, auto head_dim) {
        return run_bwd<decltype(dtype)::value, decltype(head_dim)::value>(
            p, static_cast<hipStream_t>(stream), why);
      });
    });
  }

 private:
  template <core::Dtype kDtype, int kHeadDim>
  static fa2_status_t run_fwd(const core::AttnParams &p, hipStream_t stream, std::string &why) {
    uint32_t workgroups = 0;
    const fa2_status_t fits = workgroups_of(core::fwd_items(p, fwd_plan(kHeadDim).block_m),
                                            fwd_plan(kHeadDim), workgroups, why);
    if (fits != FA2_SUCCESS || workgroups == 0) return fits;
    FA2_HIP_CHECK((launch_fwd<kDtype, kHeadDim>(p, workgroups, stream)));
    return FA2_SUCCESS;
  }

  // D = rowsum(dO * O), the key-block kernel (dK, dV, dQ atomics), then dQ.
  template <core::Dtype kDtype, int kHeadDim>
  static fa2_status_t run_bwd(const core::AttnParams &p, hipStream_t stream, std::string &why) {
    uint32_t workgroups = 0;
    const fa2_status_t fits = workgroups_of(core::bwd_items(p, bwd_plan<kHeadDim>().block_n),
                                            bwd_plan<kHeadDim>(), workgroups, why);
    if (fits != FA2_SUCCESS) return fits;
    const BwdWorkspace layout = hip::bwd_workspace(p);
    auto *dq_accum = static_cast<float *>(p.workspace);
    auto *delta = reinterpret_cast<float *>(static_cast<char *>(p.workspace) + layout.delta_offset);
    const bool has_rows = layout.dq_accum_bytes > 0;
    if (has_rows) {
      FA2_HIP_CHECK(hipMemsetAsync(dq_accum, 0, layout.dq_accum_bytes, stream));
      FA2_HIP_CHECK(launch_bwd_preprocess(p, delta, stream));
    }
    if (workgroups > 0)
      FA2_HIP_CHECK((launch_bwd<kDtype, kHeadDim>(p, workgroups, dq_accum, delta, stream)));
    if (has_rows) FA2_HIP_CHECK(launch_dq_convert(p, dq_accum, stream));
    return FA2_SUCCESS;
  }

  // The pointer must be device (or managed) memory of this backend's device.
  fa2_status_t check_resident(const char *name, const void *pointer, std::string &why) const {
    hipPointerAttribute_t attributes{};
    const hipError_t error = hipPointerGetAttributes(&attributes, pointer);
    if (error == hipErrorInvalidValue) {
      (void)hipGetLastError();  // an unknown pointer is an answer, not a sticky error
      why = std::string(name) + " is not memory allocated through HIP";
      return FA2_ERROR_INVALID_ARGUMENT;
    }
    FA2_HIP_CHECK(error);
    const bool device_memory =
        attributes.memoryType == hipMemoryTypeDevice || attributes.isManaged != 0;
    if (!device_memory || attributes.device != device_) {
      why = std::string(name) + " is not device memory of HIP device " + std::to_string(device_);
      return FA2_ERROR_INVALID_ARGUMENT;
    }
    return FA2_SUCCESS;
  }

  int device_;
};

}  // namespace
}  // namespace fa2::hip

namespace fa2 {

fa2_status_t make_hip_backend(int device, std::unique_ptr<Backend> &out, std::string &why) {
  int count = 0;
  const hipError_t error = hipGetDeviceCount(&count);
  if (error != hipSuccess || count == 0) {
    (void)hipGetLastError();
    why = error != hipSuccess
              ? std::string("no HIP device: hipGetDeviceCount: ") + hipGetErrorName(error)
              : std::string("no HIP device");
    return FA2_ERROR_NO_DEVICE;
  }
  if (device >= count) {
    why = "HIP device " + std::to_string(device) + " requested, " + std::to_string(count) +
          " present";
    return FA2_ERROR_NO_DEVICE;
  }
  hipDeviceProp_t properties{};
  FA2_HIP_CHECK(hipGetDeviceProperties(&properties, device));
  if (!hip::arch_is_built(properties.gcnArchName)) {
    why = std::string("HIP device ") + std::to_string(device) + " is " + properties.gcnArchName +
          "; this build holds code for " + hip::kBuiltArchs;
    return FA2_ERROR_UNSUPPORTED_DEVICE;
  }
  out = std::make_unique<hip::HipBackend>(device);
  return FA2_SUCCESS;
}

}  // namespace fa2
