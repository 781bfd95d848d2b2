// Tile plans. Each backend keeps one constexpr function per architecture
// that maps a head dim to a TilePlan; the shared helpers live here.
#pragma once

#include "core/portability.h"

namespace fa2::core {

struct TilePlan {
  int block_m;     // query rows per tile
  int block_n;     // key rows per tile
  int head_dim;    // the kernel's head dim (the caller's, rounded up to a bucket)
  int workers;     // warps / wavefronts / threads cooperating on one tile
  int stages;      // K/V pipeline depth
};

// Smallest kernel head dim in `buckets` (ascending) that holds head_dim,
// or 0 when none does. Dims between buckets are padded inside the kernel.
template <int N>
constexpr int head_dim_bucket(int head_dim, const int (&buckets)[N]) {
  for (int i = 0; i < N; ++i)
    if (head_dim <= buckets[i]) return buckets[i];
  return 0;
}

}  // namespace fa2::core
