// Checks the CUDA backend through the public API against a float64
// reference, and times it. Usage:
//   fa2_cuda_check [small|full [NAME]]  correctness cases (default full;
//                                 NAME: only those whose name contains it)
//   fa2_cuda_check bench [SEQLENS [HEAD_DIMS [fwd]]]
//                                 TFLOP/s on the FlashAttention-2 paper grid
//                                 (fwd: the forward alone, backward 0)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/numeric.h"
#include "fa2/fa2.h"

namespace {

#define CHECK_CUDA(call)                                                                 \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                      \
    }                                                                                    \
  } while (0)

struct Case {
  std::string name;
  fa2_dtype_t dtype;
  int batch, sq, sk, hq, hkv, d;
  int causal, wl, wr;
  std::vector<int> lens_q, lens_k;  // varlen when non-empty
  int pad = 0;                      // extra elements per head (strided layout)
};

float to_f(fa2_dtype_t t, uint16_t x) {
  return t == FA2_DTYPE_BF16 ? fa2::core::bf16_to_float(x) : fa2::core::f16_to_float(x);
}
uint16_t from_f(fa2_dtype_t t, float x) {
  return t == FA2_DTYPE_BF16 ? fa2::core::float_to_bf16(x) : fa2::core::float_to_f16(x);
}

// Host image of one [rows, heads, d] operand with padded strides.
struct Tensor {
  int rows, heads, d, pad;
  std::vector<uint16_t> h;
  void *dev = nullptr;
  int64_t stride_head() const { return d + pad; }
  int64_t stride_seq() const { return int64_t(heads) * (d + pad); }
  int64_t at(int row, int head, int col) const { return row * stride_seq() + head * stride_head() + col; }
  void alloc(int r, int hh, int dd, int p) {
    rows = r, heads = hh, d = dd, pad = p;
    h.assign(size_t(std::max<int64_t>(1, int64_t(rows) * stride_seq())), 0);
    CHECK_CUDA(cudaMalloc(&dev, h.size() * 2));
  }
  void fill(fa2_dtype_t t, std::mt19937 &rng, float sigma) {
    std::normal_distribution<float> dist(0.f, sigma);
    for (auto &x : h) x = from_f(t, dist(rng));
    CHECK_CUDA(cudaMemcpy(dev, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  }
  void poison() {
    std::fill(h.begin(), h.end(), uint16_t(0x7fff));  // NaN in both types
    CHECK_CUDA(cudaMemcpy(dev, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  }
  void download() { CHECK_CUDA(cudaMemcpy(h.data(), dev, h.size() * 2, cudaMemcpyDeviceToHost)); }
  fa2_tensor_t api(fa2_dtype_t t, int64_t rows_per_batch) const {
    return {dev, t, rows_per_batch * stride_seq(), stride_seq(), stride_head()};
  }
  ~Tensor() { if (dev) cudaFree(dev); }
};

struct Err {
  double max_abs = 0, num = 0, den = 0;
  bool nan = false;
  void add(double got, double want) {
    if (!std::isfinite(got) && !(std::isinf(got) && got == want)) nan = true;
    if (std::isinf(want) && got == want) return;
    max_abs = std::max(max_abs, std::fabs(got - want));
    num += (got - want) * (got - want), den += want * want;
  }
  double rel() const { return den > 0 ? std::sqrt(num / den) : std::sqrt(num); }
};

bool g_dump = false;  // diag mode: print rows whose output is not exactly v

bool run_case(const Case &c, fa2_handle_t handle, bool verbose) {
  std::mt19937 rng(std::hash<std::string>()(c.name));
  const bool varlen = !c.lens_q.empty();
  std::vector<int> off_q(c.batch + 1, 0), off_k(c.batch + 1, 0);
  for (int b = 0; b < c.batch; ++b) {
    off_q[b + 1] = off_q[b] + (varlen ? c.lens_q[b] : c.sq);
    off_k[b + 1] = off_k[b] + (varlen ? c.lens_k[b] : c.sk);
  }
  const int rq = off_q[c.batch], rk = off_k[c.batch];
  Tensor q, k, v, o, dout, dq, dk, dv;
  q.alloc(rq, c.hq, c.d, c.pad), k.alloc(rk, c.hkv, c.d, c.pad), v.alloc(rk, c.hkv, c.d, c.pad);
  o.alloc(rq, c.hq, c.d, c.pad), dout.alloc(rq, c.hq, c.d, c.pad), dq.alloc(rq, c.hq, c.d, c.pad);
  dk.alloc(rk, c.hkv, c.d, c.pad), dv.alloc(rk, c.hkv, c.d, c.pad);
  q.fill(c.dtype, rng, 1.f), k.fill(c.dtype, rng, 1.f), v.fill(c.dtype, rng, 1.f);
  dout.fill(c.dtype, rng, 1.f);
  o.poison(), dq.poison(), dk.poison(), dv.poison();
  const size_t lse_n = size_t(c.batch) * c.hq * c.sq;
  float *lse_dev = nullptr;
  int32_t *cu_dev = nullptr;
  CHECK_CUDA(cudaMalloc(&lse_dev, std::max<size_t>(1, lse_n) * 4));
  std::vector<float> lse(lse_n, std::nanf(""));
  CHECK_CUDA(cudaMemcpy(lse_dev, lse.data(), lse_n * 4, cudaMemcpyHostToDevice));
  fa2_options_t opt = FA2_OPTIONS_INIT;
  opt.causal = c.causal, opt.window_left = c.wl, opt.window_right = c.wr;
  if (varlen) {
    CHECK_CUDA(cudaMalloc(&cu_dev, 2 * (c.batch + 1) * 4));
    CHECK_CUDA(cudaMemcpy(cu_dev, off_q.data(), (c.batch + 1) * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(cu_dev + c.batch + 1, off_k.data(), (c.batch + 1) * 4, cudaMemcpyHostToDevice));
    opt.cu_seqlens_q = cu_dev, opt.cu_seqlens_k = cu_dev + c.batch + 1;
  }
  const fa2_shape_t shape{c.batch, c.sq, c.sk, c.hq, c.hkv, c.d};
  const fa2_tensor_t tq = q.api(c.dtype, c.sq), tk = k.api(c.dtype, c.sk), tv = v.api(c.dtype, c.sk),
                     to = o.api(c.dtype, c.sq), tdo = dout.api(c.dtype, c.sq),
                     tdq = dq.api(c.dtype, c.sq), tdk = dk.api(c.dtype, c.sk), tdv = dv.api(c.dtype, c.sk);
  size_t fwd_ws_bytes = 0;
  fa2_status_t st = fa2_fwd_workspace_size(handle, &shape, c.dtype, &opt, &fwd_ws_bytes);
  void *fwd_ws = nullptr;
  if (fwd_ws_bytes > 0) CHECK_CUDA(cudaMalloc(&fwd_ws, fwd_ws_bytes));
  if (st == FA2_SUCCESS)
    st = fa2_fwd(handle, &shape, &tq, &tk, &tv, &to, lse_dev, &opt, fwd_ws, fwd_ws_bytes, nullptr);
  cudaFree(fwd_ws);
  if (st != FA2_SUCCESS) {
    std::printf("FAIL %-34s fwd status %d: %s\n", c.name.c_str(), st, fa2_last_error(handle));
    return false;
  }
  size_t ws_bytes = 0;
  st = fa2_bwd_workspace_size(handle, &shape, c.dtype, &opt, &ws_bytes);
  void *ws = nullptr;
  if (ws_bytes) {
    CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
    CHECK_CUDA(cudaMemset(ws, 0xff, ws_bytes));  // NaN as floats: the call may not count on it
  }
  if (st == FA2_SUCCESS)
    st = fa2_bwd(handle, &shape, &tdo, &tq, &tk, &tv, &to, lse_dev, &tdq, &tdk, &tdv, &opt, ws,
                 ws_bytes, nullptr);
  if (st != FA2_SUCCESS) {
    std::printf("FAIL %-34s bwd status %d: %s\n", c.name.c_str(), st, fa2_last_error(handle));
    return false;
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  o.download(), dq.download(), dk.download(), dv.download();
  CHECK_CUDA(cudaMemcpy(lse.data(), lse_dev, lse_n * 4, cudaMemcpyDeviceToHost));
  cudaFree(lse_dev), cudaFree(cu_dev), cudaFree(ws);

  // float64 reference, plus the same attention computed naively in the
  // element type (P rounded before P V, output rounded) as the yardstick.
  const double scale = 1.0 / std::sqrt(double(c.d));
  Err e_o, e_lse, e_dq, e_dk, e_dv, lp_o;
  const int group = c.hq / c.hkv;
  std::vector<double> dk_ref(size_t(rk) * c.hkv * c.d, 0.0), dv_ref(dk_ref.size(), 0.0);
  auto val = [&](const Tensor &t, int row, int head, int col) { return double(to_f(c.dtype, t.h[t.at(row, head, col)])); };
  for (int b = 0; b < c.batch; ++b) {
    const int lq = off_q[b + 1] - off_q[b], lk = off_k[b + 1] - off_k[b];
    const int64_t diag = lk - lq;
    const int64_t left = c.wl < 0 ? (1 << 30) : c.wl;
    const int64_t right = c.causal ? 0 : (c.wr < 0 ? (1 << 30) : c.wr);
    for (int h = 0; h < c.hq; ++h) {
      const int hk = h / group;
      for (int i = 0; i < lq; ++i) {
        const int qr = off_q[b] + i;
        std::vector<double> s(lk, -INFINITY), pr(lk, 0.0);
        double mx = -INFINITY;
        for (int j = 0; j < lk; ++j) {
          if (j < i + diag - left || j > i + diag + right) continue;
          double acc = 0;
          for (int x = 0; x < c.d; ++x) acc += val(q, qr, h, x) * val(k, off_k[b] + j, hk, x);
          s[j] = acc * scale, mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int j = 0; j < lk; ++j) if (s[j] > -INFINITY) pr[j] = std::exp(s[j] - mx), sum += pr[j];
        const double lse_ref = sum > 0 ? mx + std::log(sum) : -INFINITY;
        e_lse.add(lse[(size_t(b) * c.hq + h) * c.sq + i], lse_ref);
        std::vector<double> out_ref(c.d, 0.0), out_lp(c.d, 0.0);
        for (int j = 0; j < lk; ++j) {
          if (pr[j] == 0) continue;
          pr[j] /= sum;
          const double p_lp = to_f(c.dtype, from_f(c.dtype, float(pr[j])));
          for (int x = 0; x < c.d; ++x) {
            out_ref[x] += pr[j] * val(v, off_k[b] + j, hk, x);
            out_lp[x] += p_lp * val(v, off_k[b] + j, hk, x);
          }
        }
        double delta = 0;
        for (int x = 0; x < c.d; ++x) {
          e_o.add(val(o, qr, h, x), out_ref[x]);
          lp_o.add(to_f(c.dtype, from_f(c.dtype, float(out_lp[x]))), out_ref[x]);
          delta += val(dout, qr, h, x) * out_ref[x];
        }
        std::vector<double> dq_ref(c.d, 0.0);
        for (int j = 0; j < lk; ++j) {
          if (pr[j] == 0) continue;
          const int kr = off_k[b] + j;
          double dp = 0;
          for (int x = 0; x < c.d; ++x) dp += val(dout, qr, h, x) * val(v, kr, hk, x);
          const double ds = pr[j] * (dp - delta) * scale;
          for (int x = 0; x < c.d; ++x) {
            dq_ref[x] += ds * val(k, kr, hk, x);
            dk_ref[(size_t(kr) * c.hkv + hk) * c.d + x] += ds * val(q, qr, h, x);
            dv_ref[(size_t(kr) * c.hkv + hk) * c.d + x] += pr[j] * val(dout, qr, h, x);
          }
        }
        for (int x = 0; x < c.d; ++x) e_dq.add(val(dq, qr, h, x), dq_ref[x]);
        if (g_dump && sum > 0) {
          double lo = 1e30, hi = -1e30, worst = 0;
          for (int x = 0; x < c.d; ++x) {
            const double r = val(o, qr, h, x) / out_ref[x];
            lo = std::min(lo, r), hi = std::max(hi, r), worst = std::max(worst, std::fabs(val(o, qr, h, x) - out_ref[x]));
          }
          if (worst > 0)
            std::printf("  b%d h%d row %d: keys %d, lse ours %.7f ref %.7f, out/ref in [%.6f, %.6f], max err %.3g\n", b, h, i,
                        int(std::count_if(pr.begin(), pr.end(), [](double z) { return z > 0; })),
                        lse[(size_t(b) * c.hq + h) * c.sq + i], lse_ref, lo, hi, worst);
        }
      }
    }
  }
  for (int r = 0; r < rk; ++r)
    for (int h = 0; h < c.hkv; ++h)
      for (int x = 0; x < c.d; ++x) {
        e_dk.add(val(dk, r, h, x), dk_ref[(size_t(r) * c.hkv + h) * c.d + x]);
        e_dv.add(val(dv, r, h, x), dv_ref[(size_t(r) * c.hkv + h) * c.d + x]);
      }
  // Yardstick: 2x the naive low-precision error, with a small absolute floor
  // for the gradients (whose low-precision naive error we do not compute).
  const double bound = std::max(2 * lp_o.rel(), c.dtype == FA2_DTYPE_BF16 ? 8e-3 : 1e-3);
  const double grad_bound = c.dtype == FA2_DTYPE_BF16 ? 3e-2 : 5e-3;
  const bool nan = e_o.nan || e_lse.nan || e_dq.nan || e_dk.nan || e_dv.nan;
  const bool ok = !nan && e_o.rel() <= bound && e_lse.max_abs < 1e-3 + 1e-2 * (c.dtype == FA2_DTYPE_BF16) &&
                  e_dq.rel() <= grad_bound && e_dk.rel() <= grad_bound && e_dv.rel() <= grad_bound;
  if (!ok || verbose)
    std::printf("%s %-34s out %.2e (naive lp %.2e) lse %.1e dq %.2e dk %.2e dv %.2e%s\n",
                ok ? "ok  " : "FAIL", c.name.c_str(), e_o.rel(), lp_o.rel(), e_lse.max_abs,
                e_dq.rel(), e_dk.rel(), e_dv.rel(), nan ? " NaN/unwritten" : "");
  return ok;
}

std::vector<Case> cases(bool small) {
  std::vector<Case> list;
  const fa2_dtype_t types[] = {FA2_DTYPE_BF16, FA2_DTYPE_F16};
  for (fa2_dtype_t t : types) {
    const char *tn = t == FA2_DTYPE_BF16 ? "bf16" : "f16";
    auto name = [&](const char *what, int d) { return std::string(tn) + "/" + what + "/d" + std::to_string(d); };
    const int dims_small[] = {64, 128, 40, 192, 256};
    const int dims_full[] = {32, 64, 96, 128, 192, 256, 8, 40, 72, 136, 200};
    std::vector<int> dims = small ? std::vector<int>(std::begin(dims_small), std::end(dims_small))
                                  : std::vector<int>(std::begin(dims_full), std::end(dims_full));
    for (int d : dims) {
      list.push_back({name("plain113x127", d), t, 2, 113, 127, 2, 2, d, 0, -1, -1});
      list.push_back({name("causal127x113-gqa", d), t, 1, 127, 113, 4, 2, d, 1, -1, -1});
      list.push_back({name("window-mqa", d), t, 1, 200, 257, 3, 1, d, 0, 17, 5});
      list.push_back({name("varlen-causal", d), t, 4, 150, 150, 2, 1, d, 1, -1, -1, {1, 0, 150, 77}, {7, 5, 150, 0}});
      // Several query and key blocks a sequence, GQA, strided rows: the
      // Hopper kernels' per-sequence tensor maps (sm90/sequence_maps.cu).
      list.push_back({name("varlen-gqa-strided", d), t, 3, 700, 700, 4, 2, d, 0, -1, -1, {700, 1, 333}, {650, 129, 700}, 8});
      list.push_back({name("strided-window-left0", d), t, 2, 129, 129, 2, 2, d, 0, 0, 3, {}, {}, 8});
      // Over 512 keys: masked d64 backward takes the Hopper kernel only there.
      list.push_back({name("causal-window520-gqa", d), t, 1, 520, 520, 4, 2, d, 1, 200, -1});
      // From 8k keys the Hopper forward takes its wide plan (sm90_fwd_wide,
      // d64 and d128); few queries keep the float64 reference cheap.
      if (d == 64 || d == 128)
        list.push_back({name("q20-k8200-causal-gqa", d), t, 1, 20, 8200, 2, 1, d, 1, -1, -1});
      // More query tiles than an H200 has SMs (132), with empty and short
      // sequences between them: the persistent (Hopper) forwards' walk.
      {
        std::vector<int> lq, lk;
        for (int r = 0; r < 4; ++r) {
          for (int x : {257, 0, 129, 1, 200, 128}) lq.push_back(x);
          for (int x : {300, 0, 129, 9, 200, 150}) lk.push_back(x);
        }
        list.push_back({name("varlen-causal-many-tiles", d), t, 24, 257, 300, 8, 2, d, 1, -1, -1, lq, lk});
      }
      list.push_back({name("many-tiles-gqa", d), t, 6, 300, 280, 8, 2, d, 0, -1, -1});
      // The same walk with fixed lengths under a mask: 144 query tiles, so
      // a persistent CTA takes several, past tiles whose rows see no key
      // (causal with more queries than keys: query block 0 of each head)
      // and through masked first blocks.
      list.push_back({name("many-tiles-causal-sq>sk", d), t, 6, 300, 150, 8, 2, d, 1, -1, -1});
      if (small) continue;
      list.push_back({name("varlen-window-causal", d), t, 4, 520, 520, 2, 2, d, 1, 64, -1, {300, 520, 0, 129}, {300, 260, 17, 520}});
      list.push_back({name("len1", d), t, 3, 1, 1, 2, 2, d, 0, -1, -1});
      list.push_back({name("q1-k1023-causal", d), t, 1, 1, 1023, 2, 2, d, 1, -1, -1});
      list.push_back({name("causal-sq>sk-masked-rows", d), t, 1, 130, 7, 2, 2, d, 1, -1, -1});
      list.push_back({name("sk0", d), t, 1, 33, 0, 2, 2, d, 0, -1, -1});
      list.push_back({name("diag-only", d), t, 1, 64, 16, 2, 1, d, 0, 0, 0});
    }
    if (!small) list.push_back({name("long1023-causal", 128), t, 1, 1023, 1023, 2, 1, 128, 1, -1, -1});
  }
  return list;
}

// "a,b,c" into `out`, each value accepted by `ok`.
template <class Ok>
bool int_list(const char *arg, Ok ok, std::vector<int> &out) {
  while (*arg != 0) {
    char *end = nullptr;
    const long value = std::strtol(arg, &end, 10);
    if (end == arg || value <= 0 || value > 16384 || !ok(int(value))) return false;
    out.push_back(int(value));
    arg = *end == ',' ? end + 1 : end;
  }
  return !out.empty();
}

// FlashAttention-2 paper grid points: 16k tokens, hidden 2048.
void bench(fa2_handle_t handle, const std::vector<int> &seqlens, const std::vector<int> &head_dims,
           bool forward_only) {
  std::printf("%-6s %-5s %-6s %-6s %-10s %-10s %-10s %-10s\n", "dtype", "d", "seq", "causal", "fwd ms",
              "fwd TF/s", "bwd ms", "bwd TF/s");
  for (int d : head_dims)
    for (int s : seqlens)
      for (int causal : {0, 1}) {
        const int b = 16384 / s, h = 2048 / d;  // d96 / d192: 21 / 10 heads
        const size_t n = size_t(b) * s * h * d;
        // One random sequence; tensor i is the window that starts i * 997
        // values in (generating 8 x 32 M values took longer than the timing).
        std::vector<uint16_t> host(n + 8 * 997);
        uint32_t x = 12345;
        for (auto &e : host) {
          x = x * 1664525u + 1013904223u;
          e = fa2::core::float_to_bf16(float(int(x >> 9) - (1 << 22)) / float(1 << 22));
        }
        void *buf[8];
        for (int i = 0; i < 8; ++i) {
          CHECK_CUDA(cudaMalloc(&buf[i], n * 2));
          CHECK_CUDA(cudaMemcpy(buf[i], host.data() + i * 997, n * 2, cudaMemcpyHostToDevice));
        }
        float *lse;
        CHECK_CUDA(cudaMalloc(&lse, size_t(b) * h * s * 4));
        const int64_t ss = int64_t(h) * d;
        auto ten = [&](int i) { return fa2_tensor_t{buf[i], FA2_DTYPE_BF16, s * ss, ss, d}; };
        const fa2_tensor_t tq = ten(0), tk = ten(1), tv = ten(2), to = ten(3), tdo = ten(4), tdq = ten(5),
                           tdk = ten(6), tdv = ten(7);
        const fa2_shape_t shape{b, s, s, h, h, d};
        fa2_options_t opt = FA2_OPTIONS_INIT;
        opt.causal = causal;
        size_t ws_bytes = 0, fwd_ws_bytes = 0;
        fa2_bwd_workspace_size(handle, &shape, FA2_DTYPE_BF16, &opt, &ws_bytes);
        fa2_fwd_workspace_size(handle, &shape, FA2_DTYPE_BF16, &opt, &fwd_ws_bytes);
        void *ws, *fwd_ws = nullptr;
        CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
        if (fwd_ws_bytes > 0) CHECK_CUDA(cudaMalloc(&fwd_ws, fwd_ws_bytes));
        cudaEvent_t e0, e1;
        CHECK_CUDA(cudaEventCreate(&e0));
        CHECK_CUDA(cudaEventCreate(&e1));
        auto time = [&](bool backward) {
          std::vector<float> ms;
          for (int it = 0; it < 13; ++it) {
            CHECK_CUDA(cudaEventRecord(e0));
            const fa2_status_t st =
                backward ? fa2_bwd(handle, &shape, &tdo, &tq, &tk, &tv, &to, lse, &tdq, &tdk, &tdv, &opt, ws, ws_bytes, nullptr)
                         : fa2_fwd(handle, &shape, &tq, &tk, &tv, &to, lse, &opt, fwd_ws, fwd_ws_bytes, nullptr);
            CHECK_CUDA(cudaEventRecord(e1));
            CHECK_CUDA(cudaEventSynchronize(e1));
            if (st != FA2_SUCCESS) { std::printf("status %d %s\n", st, fa2_last_error(handle)); std::exit(1); }
            float t;
            CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
            if (it >= 3) ms.push_back(t);  // three warm-ups
          }
          std::sort(ms.begin(), ms.end());
          return double(ms[ms.size() / 2]);
        };
        const double fwd_ms = time(false), bwd_ms = forward_only ? 0.0 : time(true);
        const double flops = 4.0 * b * h * double(s) * s * d / (causal ? 2 : 1);
        std::printf("%-6s %-5d %-6d %-6d %-10.3f %-10.1f %-10.3f %-10.1f\n", "bf16", d, s, causal, fwd_ms,
                    flops / fwd_ms * 1e-9, bwd_ms, forward_only ? 0.0 : 2.5 * flops / bwd_ms * 1e-9);
        for (void *p : buf) cudaFree(p);
        cudaFree(lse), cudaFree(ws), cudaFree(fwd_ws);
        cudaEventDestroy(e0), cudaEventDestroy(e1);
      }
}

}  // namespace

int main(int argc, char **argv) {
  // A line a case, flushed as it is written: a run cut off by a time limit
  // still shows the cases it finished (fully buffered into a file, a
  // 120-second limit left nothing, 2026-12-06).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string mode = argc > 1 ? argv[1] : "full";
  fa2_handle_t handle = nullptr;
  const fa2_status_t st = fa2_create(&handle, FA2_BACKEND_CUDA, 0);
  if (st != FA2_SUCCESS) {
    std::printf("fa2_create(cuda): %s\n", fa2_status_string(st));
    return st == FA2_ERROR_NO_DEVICE ? 77 : 1;
  }
  if (mode == "diag") {
    g_dump = true;
    run_case({"f16/diag64x16", FA2_DTYPE_F16, 1, 64, 16, 1, 1, 64, 0, 0, 0}, handle, true);
    run_case({"bf16/diag203x113", FA2_DTYPE_BF16, 1, 203, 113, 1, 1, 64, 0, 0, 0}, handle, true);
    run_case({"f16/causal-left1", FA2_DTYPE_F16, 1, 64, 64, 1, 1, 64, 1, 1, -1}, handle, true);
  } else if (mode == "bench") {  // bench [seqlen,...] [head_dim,...] [fwd]
    std::vector<int> seqlens, head_dims;
    if (!int_list(argc > 2 ? argv[2] : "2048,16384", [](int s) { return 16384 % s == 0; }, seqlens) ||
        !int_list(argc > 3 ? argv[3] : "64,128,256", [](int d) { return d % 8 == 0 && d <= 256; },
                  head_dims)) {
      std::printf("bench: seqlens must divide 16384, head dims be multiples of 8 up to 256\n");
      return 2;
    }
    bench(handle, seqlens, head_dims, argc > 4 && std::string(argv[4]) == "fwd");
  } else {
    int failed = 0, total = 0;
    const std::string only = argc > 2 ? argv[2] : "";
    for (const Case &c : cases(mode == "small"))
      if (c.name.find(only) != std::string::npos) failed += !run_case(c, handle, true), ++total;
    std::printf("%d of %d cases failed\n", failed, total);
    fa2_destroy(handle);
    return failed != 0 || total == 0;  // a NAME that matches nothing is an error too
  }
  fa2_destroy(handle);
  return 0;
}
