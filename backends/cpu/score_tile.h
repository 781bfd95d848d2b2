// Per-element masking of a score tile. Called only for the tiles that
// tile_needs_mask() flags (the diagonal band's edges and the ragged ends);
// every other tile skips it.
#pragma once

#include <cmath>

#include "core/mask.h"

namespace fa2::cpu {

template <int kCols>
inline void mask_scores(const core::Mask &mask, int row0, int col0, int rows, float *scores) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < kCols; ++j)
      if (!mask.visible(row0 + i, col0 + j)) scores[i * kCols + j] = -INFINITY;
}

constexpr int round_up(int x, int multiple) { return (x + multiple - 1) / multiple * multiple; }

}  // namespace fa2::cpu
