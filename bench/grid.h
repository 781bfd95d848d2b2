// The shapes a run measures: the FlashAttention-2 paper's grid (a fixed
// number of tokens and a fixed hidden size, so batch = tokens / seqlen and
// heads = hidden / head_dim), smaller on the CPU.
#pragma once

#include <vector>

#include "options.h"

namespace fa2::bench {

struct Shape {
  int head_dim;
  bool causal;
  int seqlen;  // seqlen_q == seqlen_k
  int batch;
  int heads;

  // Matmul FLOPs of the forward, 4 b h s^2 d, halved when causal; the
  // backward counts 2.5 times that (the paper's convention).
  double fwd_flops() const {
    return 4.0 * batch * heads * double(seqlen) * seqlen * head_dim / (causal ? 2 : 1);
  }
  double bwd_flops() const { return 2.5 * fwd_flops(); }
};

// The paper's grid or the small one (options.small_grid, else the host's
// default), restricted by the options. Throws std::invalid_argument when an
// override leaves no whole batch or head count.
std::vector<Shape> make_grid(const Options &options, bool host);

}  // namespace fa2::bench
