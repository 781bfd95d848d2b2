// The CPU backend object: capabilities, workspace sizes, per-thread scratch,
// and the one place that picks a kernel by ISA and dtype.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "backend.h"
#include "isa.h"
#include "kernels.h"
#include "thread_pool.h"

namespace fa2 {
namespace cpu {
namespace {

enum class IsaLevel { generic, avx2, avx512 };

// The best level this machine runs and this build holds; FA2_CPU_ISA
// (generic / avx2) can ask for a lower one, e.g. to test the portable path
// on an AVX-512 machine.
IsaLevel detect_isa() {
  IsaLevel best = IsaLevel::generic;
#if defined(FA2_CPU_X86_KERNELS)
  __builtin_cpu_init();
  // F16C comes with every AVX2 processor; clang's builtin cannot name it.
#if defined(__clang__)
  const bool f16c = true;
#else
  const bool f16c = __builtin_cpu_supports("f16c");
#endif
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c)
    best = IsaLevel::avx2;
  if (best == IsaLevel::avx2 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq"))
    best = IsaLevel::avx512;
#endif
  const char *wanted = std::getenv("FA2_CPU_ISA");
  if (wanted == nullptr) return best;
  IsaLevel asked = best;
  if (std::strcmp(wanted, "generic") == 0) asked = IsaLevel::generic;
  if (std::strcmp(wanted, "avx2") == 0) asked = IsaLevel::avx2;
  return asked < best ? asked : best;
}

struct KernelPair {
  KernelFn fwd;
  KernelFn bwd;
};

template <class Isa>
KernelPair kernels_of(core::Dtype dtype) {
  using core::Dtype;
  switch (dtype) {
    case Dtype::f16: return {attention_fwd<Isa, Dtype::f16>, attention_bwd<Isa, Dtype::f16>};
    case Dtype::bf16: return {attention_fwd<Isa, Dtype::bf16>, attention_bwd<Isa, Dtype::bf16>};
    case Dtype::f32: return {attention_fwd<Isa, Dtype::f32>, attention_bwd<Isa, Dtype::f32>};
  }
  return {nullptr, nullptr};
}

// The one dispatch over ISA and dtype.
KernelPair select_kernels(IsaLevel isa, core::Dtype dtype) {
  switch (isa) {
#if defined(FA2_CPU_X86_KERNELS)
    case IsaLevel::avx512: return kernels_of<IsaAvx512>(dtype);
    case IsaLevel::avx2: return kernels_of<IsaAvx2>(dtype);
#endif
    default: return kernels_of<IsaGeneric>(dtype);
  }
}

struct FreeDeleter {
  void operator()(float *p) const { std::free(p); }
};

class CpuBackend final : public Backend {
 public:
  CpuBackend() : pool_(default_worker_count()), isa_(detect_isa()) {}

  Capabilities capabilities() const override {
    Capabilities caps{};
    caps.dtypes[FA2_DTYPE_F16] = caps.dtypes[FA2_DTYPE_BF16] = caps.dtypes[FA2_DTYPE_F32] = true;
    caps.max_head_dim = 256;
    caps.head_dim_multiple = 1;
    caps.alignment_bytes = 2;  // the 2-byte types' element alignment; all loads are unaligned
    caps.host_memory = true;
    return caps;
  }
  // alignment_bytes is 2 for every dtype; f32 elements must still be 4-byte
  // aligned (the kernels read them as float).
  fa2_status_t check(const core::AttnParams &p, std::string &why) const override {
    if (p.dtype != core::Dtype::f32) return FA2_SUCCESS;
    const std::pair<const char *, const core::TensorRef *> operands[] = {
        {"q", &p.q},       {"k", &p.k},   {"v", &p.v},   {"out", &p.out},
        {"dout", &p.dout}, {"dq", &p.dq}, {"dk", &p.dk}, {"dv", &p.dv}};
    for (const auto &[name, t] : operands)
      if (reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0)
        return why = std::string(name) + ".data is not aligned to 4 bytes (f32 on the CPU)",
               FA2_ERROR_MISALIGNED;
    return FA2_SUCCESS;
  }
  uint64_t fwd_workspace(const core::AttnParams &) const override { return 0; }
  uint64_t bwd_workspace(const core::AttnParams &p) const override {
    return bwd_workspace_bytes(p);
  }
  fa2_status_t fwd(const core::AttnParams &p, void *, std::string &why) override {
    return launch(p, &KernelPair::fwd, why);
  }
  fa2_status_t bwd(const core::AttnParams &p, void *, std::string &why) override {
    return launch(p, &KernelPair::bwd, why);
  }

 private:
  fa2_status_t launch(const core::AttnParams &p, KernelFn KernelPair::*pass, std::string &why) {
    const KernelFn kernel = select_kernels(isa_, p.dtype).*pass;
    if (kernel == nullptr) return why = "no CPU kernel for this dtype", FA2_ERROR_INTERNAL;
    // One call at a time per handle: the scratch and the pool are shared.
    std::lock_guard<std::mutex> lock(call_mutex_);
    reserve_scratch(scratch_floats(p.head_dim));
    kernel(p, {&pool_, scratch_ptrs_.data(), dq_locks_, kDqLockStripes});
    return FA2_SUCCESS;
  }

  // Grows every worker's scratch when a larger head dim arrives; never shrinks.
  void reserve_scratch(int64_t floats) {
    if (floats <= scratch_floats_) return;
    const size_t bytes = (size_t(floats) * sizeof(float) + 63) / 64 * 64;
    scratch_.clear();
    scratch_ptrs_.clear();
    scratch_floats_ = 0;
    for (int w = 0; w < pool_.workers(); ++w) {
      float *buffer = static_cast<float *>(std::aligned_alloc(64, bytes));
      if (buffer == nullptr) throw std::bad_alloc();
      scratch_.emplace_back(buffer);
      scratch_ptrs_.push_back(buffer);
    }
    scratch_floats_ = floats;
  }

  static constexpr int kDqLockStripes = 64;
  std::mutex call_mutex_;
  ThreadPool pool_;
  IsaLevel isa_;
  std::vector<std::unique_ptr<float, FreeDeleter>> scratch_;
  std::vector<float *> scratch_ptrs_;
  int64_t scratch_floats_ = 0;
  std::mutex dq_locks_[kDqLockStripes];
};

}  // namespace
}  // namespace cpu

fa2_status_t make_cpu_backend(int device, std::unique_ptr<Backend> &out, std::string &why) {
  if (device != 0) {
    why = "the CPU backend has one device, 0; got " + std::to_string(device);
    return FA2_ERROR_INVALID_ARGUMENT;
  }
  out = std::make_unique<cpu::CpuBackend>();
  return FA2_SUCCESS;
}

}  // namespace fa2
