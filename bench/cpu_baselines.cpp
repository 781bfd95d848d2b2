#include "cpu_baselines.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "dtype.h"
#include "runner.h"

#ifdef FA2_BENCH_HAVE_BLAS
// The Fortran BLAS entry point every BLAS exports (no cblas.h needed).
extern "C" void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
                       const int *k, const float *alpha, const float *a, const int *lda,
                       const float *b, const int *ldb, const float *beta, float *c,
                       const int *ldc);
#endif

namespace fa2::bench {
namespace {

constexpr int kSeqlen = 2048, kHeadDim = 128, kHeads = 16;  // hidden 2048, batch 1
constexpr double kSgemmTarget = 40.0, kNaiveTarget = 20.0;   // issue 2: % of sgemm, x naive

std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::vector<float> x(n);
  std::memcpy(x.data(), random_normal(FA2_DTYPE_F32, n, seed).data(), n * sizeof(float));
  return x;
}

template <class F>
double median_seconds(int runs, F &&f) {
  std::vector<double> s;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

#ifdef FA2_BENCH_HAVE_BLAS
double sgemm_gflops() {
  const int n = 2048;
  const float alpha = 1.f, beta = 0.f;
  const std::vector<float> a = random_floats(size_t(n) * n, 1), b = random_floats(size_t(n) * n, 2);
  std::vector<float> c(size_t(n) * n);
  auto gemm = [&] { sgemm_("N", "N", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, c.data(), &n); };
  gemm();  // warm-up: thread pool start, page faults
  return 2.0 * n * n * n / median_seconds(5, gemm) / 1e9;
}
#endif

// Attention of one head as the textbook writes it: S = Q K^T scaled, a
// row softmax, O = P V, each product the three-loop matmul with its sum
// innermost; one query row at a time, single-threaded.
double naive_attention_gflops() {
  const int s = kSeqlen, d = kHeadDim;
  const std::vector<float> q = random_floats(size_t(s) * d, 3), k = random_floats(size_t(s) * d, 4),
                           v = random_floats(size_t(s) * d, 5);
  std::vector<float> out(size_t(s) * d), prob(static_cast<size_t>(s));
  const float scale = 1.f / std::sqrt(float(d));
  auto attention = [&] {
    for (int i = 0; i < s; ++i) {
      float row_max = -INFINITY;
      for (int j = 0; j < s; ++j) {
        float dot = 0.f;
        for (int c = 0; c < d; ++c) dot += q[size_t(i) * d + c] * k[size_t(j) * d + c];
        prob[j] = dot * scale;
        row_max = std::max(row_max, prob[j]);
      }
      float sum = 0.f;
      for (int j = 0; j < s; ++j) sum += prob[j] = std::exp(prob[j] - row_max);
      for (int c = 0; c < d; ++c) {
        float acc = 0.f;
        for (int j = 0; j < s; ++j) acc += prob[j] * v[size_t(j) * d + c];
        out[size_t(i) * d + c] = acc / sum;
      }
    }
  };
  return 4.0 * s * s * d / median_seconds(1, attention) / 1e9;
}

}  // namespace

std::vector<std::pair<std::string, double>> measure_cpu_baselines(fa2_handle_t cpu_handle,
                                                                  test::DeviceMemory &memory) {
  std::printf("CPU baselines (seqlen %d, head dim %d, f32):\n", kSeqlen, kHeadDim);
  std::fflush(stdout);
  const Shape shape{kHeadDim, false, kSeqlen, 1, kHeads};
  const size_t elements = size_t(kSeqlen) * kHeads * kHeadDim;
  Runner runner(cpu_handle, memory, FA2_DTYPE_F32, repetitions_for(true, false), false, false,
                elements, size_t(kSeqlen) * kHeads);
  const Measurement fa2 = runner.run(shape);
  if (!fa2.error.empty()) {
    std::printf("  fa2 forward failed: %s\n", fa2.error.c_str());
    return {};
  }
  const double fa2_gflops = shape.fwd_flops() / fa2.fwd_ms / 1e6;
  const double naive = naive_attention_gflops();
  std::vector<std::pair<std::string, double>> figures{
      {"fa2_fwd_gflops", fa2_gflops}, {"naive_attention_gflops", naive}, {"fa2_x_naive", fa2_gflops / naive}};
  std::printf("  fa2 forward (%d heads):    %8.1f GFLOP/s\n", kHeads, fa2_gflops);
  std::printf("  naive attention (1 head): %8.2f GFLOP/s -> fa2 is %.1fx (target >= %.0fx)%s\n", naive,
              fa2_gflops / naive, kNaiveTarget, fa2_gflops / naive >= kNaiveTarget ? "" : "  BELOW TARGET");
#ifdef FA2_BENCH_HAVE_BLAS
  const double sgemm = sgemm_gflops();
  figures.push_back({"sgemm_gflops", sgemm});
  figures.push_back({"fa2_pct_of_sgemm", 100 * fa2_gflops / sgemm});
  std::printf("  sgemm 2048^3 (BLAS):      %8.1f GFLOP/s -> fa2 is %.0f%% (target >= %.0f%%)%s\n", sgemm,
              100 * fa2_gflops / sgemm, kSgemmTarget, 100 * fa2_gflops / sgemm >= kSgemmTarget ? "" : "  BELOW TARGET");
#else
  std::printf("  sgemm: no BLAS found at configure time (install libopenblas-dev)\n");
#endif
  std::fflush(stdout);
  return figures;
}

}  // namespace fa2::bench
