// Times alternative tile plans of the sm80 kernels on the paper-grid
// shapes (bf16, 16k tokens, hidden 2048), to choose the table in
// sm80/tile_plan.h. Launches the kernels directly, bypassing the API.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/numeric.h"
#include "sm80/launch.cuh"

using namespace fa2;
using T = __nv_bfloat16;

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                         \
      std::exit(2);                                                                \
    }                                                                              \
  } while (0)

struct Problem {
  core::AttnParams p;
  cuda::BwdScratch scratch;
};

Problem make_problem(int d, int s, bool causal, void *const *buf, float *lse, float *ws) {
  Problem pr;
  core::AttnParams &p = pr.p;
  const int b = 16384 / s, h = 2048 / d;
  const int64_t ss = int64_t(h) * d;
  auto ref = [&](int i) { return core::TensorRef{buf[i], s * ss, ss, d}; };
  p.q = ref(0), p.k = ref(1), p.v = ref(2), p.out = ref(3), p.dout = ref(4), p.dq = ref(5),
  p.dk = ref(6), p.dv = ref(7);
  p.lse = lse;
  p.dtype = core::Dtype::bf16;
  p.batch = b, p.seqlen_q = s, p.seqlen_k = s, p.heads_q = h, p.heads_kv = h, p.group_size = 1;
  p.head_dim = d;
  p.scale = 1.f / std::sqrt(float(d));
  p.scale_log2 = p.scale * core::kLog2e;
  p.causal = causal;
  p.window_left = core::kUnlimited;
  p.window_right = causal ? 0 : core::kUnlimited;
  p.has_mask = causal;
  pr.scratch = {ws, ws + int64_t(b) * h * s, nullptr};
  return pr;
}

template <class F>
double median_ms(F &&launch) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int it = 0; it < 10; ++it) {
    CHECK(cudaEventRecord(e0));
    std::string why;
    if (launch(why) != FA2_SUCCESS) {
      std::printf("launch failed: %s\n", why.c_str());
      std::exit(1);
    }
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float t;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    if (it >= 2) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  return ms[ms.size() / 2];
}

template <int D, int BM, int BN, int W, int S>
void fwd(const char *name, void *const *buf, float *lse, float *ws) {
  for (int s : {2048, 16384})
    for (bool causal : {false, true}) {
      const Problem pr = make_problem(D, s, causal, buf, lse, ws);
      const double ms = median_ms([&](std::string &why) {
        return cuda::launch_fwd_tiles<T, D, BM, BN, W, S>(pr.p, nullptr, why);
      });
      const double flops = 4.0 * pr.p.batch * pr.p.heads_q * double(s) * s * D / (causal ? 2 : 1);
      std::printf("fwd d%-3d %-26s s%-5d causal %d  %7.3f ms %6.1f TF/s\n", D, name, s, causal, ms,
                  flops / ms * 1e-9);
    }
}

template <int D, int BM, int BN, int Split, int S, int DoS>
void bwd(const char *name, void *const *buf, float *lse, float *ws) {
  for (int s : {2048, 16384})
    for (bool causal : {false, true}) {
      const Problem pr = make_problem(D, s, causal, buf, lse, ws);
      std::string why;
      if (cuda::launch_fwd<T, D>(pr.p, nullptr, why) != FA2_SUCCESS) std::exit(3);  // a real lse
      const double ms = median_ms([&](std::string &why) {
        const int64_t acc = int64_t(pr.p.batch) * pr.p.heads_q * s * D * 4;
        CHECK(cudaMemsetAsync(pr.scratch.dq_accum, 0, acc));
        fa2_status_t st = cuda::launch_bwd_delta<T>(pr.p, pr.scratch, nullptr, why);
        if (st == FA2_SUCCESS)
          st = cuda::launch_bwd_tiles<T, D, BM, BN, Split, S, DoS>(pr.p, pr.scratch, nullptr, why);
        if (st == FA2_SUCCESS) st = cuda::launch_bwd_dq_convert<T>(pr.p, pr.scratch.dq_accum, nullptr, why);
        return st;
      });
      const double flops = 2.5 * 4.0 * pr.p.batch * pr.p.heads_q * double(s) * s * D / (causal ? 2 : 1);
      std::printf("bwd d%-3d %-26s s%-5d causal %d  %7.3f ms %6.1f TF/s\n", D, name, s, causal, ms,
                  flops / ms * 1e-9);
    }
}

int main() {
  const size_t n = size_t(16384) * 2048;
  std::vector<uint16_t> host(n);
  uint32_t x = 777;
  void *buf[8];
  for (int i = 0; i < 8; ++i) {
    for (auto &e : host) {
      x = x * 1664525u + 1013904223u;
      e = core::float_to_bf16(float(int(x >> 9) - (1 << 22)) / float(1 << 22));
    }
    CHECK(cudaMalloc(&buf[i], n * 2));
    CHECK(cudaMemcpy(buf[i], host.data(), n * 2, cudaMemcpyHostToDevice));
  }
  float *lse, *ws;
  CHECK(cudaMalloc(&lse, size_t(16384) * 64 * 4));
  CHECK(cudaMalloc(&ws, size_t(16384) * 2048 * 4 + size_t(16384) * 64 * 4));
#define FWD(D, BM, BN, W, S) fwd<D, BM, BN, W, S>(#BM "x" #BN " w" #W " st" #S, buf, lse, ws)
#define BWD(D, BM, BN, SP, S, DS) \
  bwd<D, BM, BN, SP, S, DS>(#BM "x" #BN " split" #SP " st" #S " do" #DS, buf, lse, ws)
#include "tune_variants.h"
  return 0;
}
