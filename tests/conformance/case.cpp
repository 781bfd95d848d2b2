#include "case.h"

#include <cmath>
#include <numeric>

namespace fa2::test {
namespace {

const char *layout_name(Layout layout) {
  switch (layout) {
    case Layout::contiguous:
      return "";
    case Layout::padded:
      return "_padded";
    case Layout::head_major:
      return "_headmajor";
    case Layout::packed_qkv:
      return "_qkvpacked";
    case Layout::transposed_dout:
      return "_doutT";
  }
  return "_unknown";
}

}  // namespace

std::string dtype_name(fa2_dtype_t dtype) {
  switch (dtype) {
    case FA2_DTYPE_F16:
      return "f16";
    case FA2_DTYPE_BF16:
      return "bf16";
    case FA2_DTYPE_F32:
      return "f32";
    default:
      return "dtype" + std::to_string(int(dtype));
  }
}

std::string Case::name() const {
  std::string n = std::string(fa2_backend_name(backend)) + "_" + dtype_name(dtype) + "_d" +
                  std::to_string(head_dim) + "_q" + std::to_string(seqlen_q) + "_k" +
                  std::to_string(seqlen_k) + "_b" + std::to_string(batch) + "_h" +
                  std::to_string(heads_q) + "x" + std::to_string(heads_kv);
  if (causal) n += "_causal";
  if (window_left >= 0) n += "_left" + std::to_string(window_left);
  if (window_right >= 0) n += "_right" + std::to_string(window_right);
  if (softmax_scale != 0.f) n += "_scale" + std::to_string(int(std::lround(softmax_scale * 1000)));
  if (varlen())
    n += "_varlen" + std::to_string(std::accumulate(lens_q.begin(), lens_q.end(), 0)) + "x" +
         std::to_string(std::accumulate(lens_k.begin(), lens_k.end(), 0));
  return n + layout_name(layout);
}

void PrintTo(const Case &c, std::ostream *os) { *os << c.name(); }

uint64_t Case::seed() const {
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (char ch : name() + (backward ? "bwd" : "fwd")) h = (h ^ uint8_t(ch)) * 1099511628211ull;
  return h;
}

ref::Problem Case::problem() const {
  ref::Problem p = ref::fixed_problem(batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim);
  if (varlen()) {
    p.cu_q = ref::offsets_of(lens_q);
    p.cu_k = ref::offsets_of(lens_k);
  }
  // The API resolves the default scale in float; the reference follows it.
  p.scale = softmax_scale != 0.f ? double(softmax_scale) : double(1.f / std::sqrt(float(head_dim)));
  p.causal = causal;
  p.window_left = window_left;
  p.window_right = window_right;
  return p;
}

std::vector<fa2_backend_t> built_backends() {
  std::vector<fa2_backend_t> built;
  for (int b = 0; b < FA2_NUM_BACKENDS; ++b) {
    int yes = 0;
    if (fa2_backend_built(fa2_backend_t(b), &yes) == FA2_SUCCESS && yes)
      built.push_back(fa2_backend_t(b));
  }
  return built;
}

std::vector<Case> on_every_backend(const std::vector<Case> &cases) {
  std::vector<Case> all;
  for (fa2_backend_t backend : built_backends())
    for (Case c : cases) {
      c.backend = backend;
      all.push_back(c);
    }
  return all;
}

}  // namespace fa2::test
