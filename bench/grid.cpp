#include "grid.h"

#include <stdexcept>
#include <string>

namespace fa2::bench {
namespace {

struct GridSpec {
  int tokens, hidden;
  std::vector<int> seqlens, head_dims, causal;
};

// A GPU does the paper's grid in seconds; two CPU cores need a grid about
// 30x smaller to finish in a minute or two.
GridSpec default_spec(bool small, bool quick) {
  if (small)
    return quick ? GridSpec{1024, 1024, {512}, {64, 128}, {0, 1}}
                 : GridSpec{2048, 2048, {256, 512, 1024, 2048}, {64, 128}, {0, 1}};
  return quick ? GridSpec{16384, 2048, {2048}, {64, 128}, {0, 1}}
               : GridSpec{16384, 2048, {512, 1024, 2048, 4096, 8192, 16384}, {64, 128, 256}, {0, 1}};
}

}  // namespace

std::vector<Shape> make_grid(const Options &options, bool host) {
  GridSpec spec = default_spec(options.small_grid.value_or(host), options.quick);
  if (options.tokens) spec.tokens = options.tokens;
  if (options.hidden) spec.hidden = options.hidden;
  if (!options.seqlens.empty()) spec.seqlens = options.seqlens;
  if (!options.head_dims.empty()) spec.head_dims = options.head_dims;
  if (!options.causal.empty()) spec.causal = options.causal;
  std::vector<Shape> grid;
  for (int d : spec.head_dims)
    for (int causal : spec.causal)
      for (int s : spec.seqlens) {
        if (s == 0 || d == 0 || spec.tokens % s != 0 || spec.hidden % d != 0 || s > spec.tokens)
          throw std::invalid_argument("seqlen " + std::to_string(s) + " / head dim " +
                                      std::to_string(d) + " do not divide tokens " +
                                      std::to_string(spec.tokens) + " / hidden " +
                                      std::to_string(spec.hidden));
        grid.push_back(Shape{d, causal != 0, s, spec.tokens / s, spec.hidden / d});
      }
  return grid;
}

}  // namespace fa2::bench
