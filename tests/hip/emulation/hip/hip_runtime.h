// A host emulation of the HIP device features the fa2 kernels use, so that
// the very kernel templates of backends/hip run on the CPU in the test
// kernel_emulation_test.cpp (compiled by clang, which knows the vector
// types). Every thread of a workgroup is a std::thread; __syncthreads,
// __shfl_xor and the MFMA builtins are collective operations over a
// barrier. The MFMA builtins are executed from the ISA tables of
// ../isa_tables.h, not from the backend's traits. Workgroups run one after
// another, so __shared__ can be a function-local static.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "../isa_tables.h"
#include "core/numeric.h"
#include "hip_runtime_api.h"

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __launch_bounds__(...)

namespace fa2_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// A reusable barrier whose parties can leave (a thread that returned).
class Barrier {
 public:
  void reset(int parties) { parties_ = parties, arrived_ = 0; }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t generation = generation_;
    if (++arrived_ == parties_) return release();
    done_.wait(lock, [&] { return generation_ != generation; });
  }
  void leave() {
    std::unique_lock<std::mutex> lock(mutex_);
    --parties_;
    if (arrived_ > 0 && arrived_ == parties_) release();
  }

 private:
  void release() {
    arrived_ = 0, ++generation_;
    done_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable done_;
  int parties_ = 0, arrived_ = 0;
  uint64_t generation_ = 0;
};

struct Wave {
  Barrier barrier;
  float shuffle[fa2::hip::isa::kLanes];
  float a[fa2::hip::isa::kLanes][fa2::hip::isa::kItems];
  float b[fa2::hip::isa::kLanes][fa2::hip::isa::kItems];
};

struct Workgroup {
  Barrier barrier;
  std::vector<Wave> waves;
};

inline thread_local Dim3 thread_idx, block_idx, block_dim, grid_dim;
inline thread_local Workgroup *workgroup = nullptr;

inline Wave &my_wave() { return workgroup->waves[thread_idx.x / fa2::hip::isa::kLanes]; }
inline int my_lane() { return int(thread_idx.x % fa2::hip::isa::kLanes); }

inline void syncthreads() { workgroup->barrier.wait(); }

inline float shfl_xor(float x, int offset) {
  Wave &wave = my_wave();
  wave.shuffle[my_lane()] = x;
  wave.barrier.wait();
  const float other = wave.shuffle[my_lane() ^ offset];
  wave.barrier.wait();
  return other;
}

inline float to_float(_Float16 x) { return float(x); }
inline float to_float(short x) { return fa2::core::bf16_to_float(uint16_t(x)); }

// D = A * B + C for the M x M x K instruction: every lane publishes its
// operands, then computes its own accumulator registers.
template <int M, class Operand, class Acc>
Acc mfma(Operand a, Operand b, Acc c) {
  using namespace fa2::hip::isa;
  const IsaTable &isa = table(M);
  Wave &wave = my_wave();
  const int lane = my_lane();
  for (int e = 0; e < kItems; ++e)
    wave.a[lane][e] = to_float(a[e]), wave.b[lane][e] = to_float(b[e]);
  wave.barrier.wait();
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < M; ++j) {
      const Slot out = isa.d(i, j);
      if (out.lane != lane) continue;
      float sum = c[out.item];
      for (int k = 0; k < isa.k; ++k) {
        const Slot sa = isa.a(i, k), sb = isa.b(k, j);
        sum += wave.a[sa.lane][sa.item] * wave.b[sb.lane][sb.item];
      }
      c[out.item] = sum;
    }
  wave.barrier.wait();
  return c;
}

inline std::mutex atomic_mutex;
inline float atomic_add(float *address, float value) {
  std::lock_guard<std::mutex> lock(atomic_mutex);
  const float old = *address;
  *address = old + value;
  return old;
}

// Runs kernel(args...) on `grid` workgroups of `threads` threads each.
template <class Kernel, class... Args>
void launch(Kernel kernel, unsigned grid, unsigned threads, const Args &...args) {
  for (unsigned block = 0; block < grid; ++block) {
    Workgroup group;
    group.barrier.reset(int(threads));
    const unsigned waves = (threads + fa2::hip::isa::kLanes - 1) / fa2::hip::isa::kLanes;
    group.waves = std::vector<Wave>(waves);
    for (unsigned w = 0; w < waves; ++w) {
      const unsigned first = w * fa2::hip::isa::kLanes;
      group.waves[w].barrier.reset(int(std::min<unsigned>(threads - first, fa2::hip::isa::kLanes)));
    }
    std::vector<std::thread> team;
    for (unsigned t = 0; t < threads; ++t)
      team.emplace_back([&, t] {
        thread_idx = {t, 0, 0}, block_idx = {block, 0, 0}, block_dim = {threads, 1, 1};
        grid_dim = {grid, 1, 1};
        workgroup = &group;
        kernel(args...);
        my_wave().barrier.leave();
        group.barrier.leave();
      });
    for (std::thread &thread : team) thread.join();
  }
}

}  // namespace fa2_emu

#define threadIdx (::fa2_emu::thread_idx)
#define blockIdx (::fa2_emu::block_idx)
#define blockDim (::fa2_emu::block_dim)
#define gridDim (::fa2_emu::grid_dim)
#define __syncthreads() ::fa2_emu::syncthreads()
#define __shfl_xor(x, offset, width) ::fa2_emu::shfl_xor((x), (offset))
#define atomicAdd(address, value) ::fa2_emu::atomic_add((address), (value))
#define __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, cbsz, abid, blgp) ::fa2_emu::mfma<32>(a, b, c)
#define __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, cbsz, abid, blgp) \
  ::fa2_emu::mfma<16>(a, b, c)
#define __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, cbsz, abid, blgp) \
  ::fa2_emu::mfma<32>(a, b, c)
#define __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, cbsz, abid, blgp) \
  ::fa2_emu::mfma<16>(a, b, c)
