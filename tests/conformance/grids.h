// The case grids (FlashAttention-2's own, sized for a 2-core CI on the CPU
// backend: the big lengths run at batch 1 with few heads and one dtype, the
// full head-dim grid at small lengths). Each returns cases for every
// backend this build holds.
#pragma once

#include <vector>

#include "case.h"

namespace fa2::test::grids {

std::vector<Case> head_dims();     // every head dim x dtype x causal, fwd + bwd
std::vector<Case> seqlens();       // the (seqlen_q, seqlen_k) pairs, causal also swapped
std::vector<Case> heads();         // MHA / GQA / MQA x dtype
std::vector<Case> windows();       // sliding windows, alone and with causal
std::vector<Case> varlen();        // packed batches with zero-length and length-1 sequences
std::vector<Case> layouts();       // padded, head-major, packed QKV, transposed dO
std::vector<Case> scales();        // explicit softmax scales
std::vector<Case> decode();        // few query rows against long keys (a GPU splits them)
std::vector<Case> fully_masked();  // each has rows that see no key at all
std::vector<Case> baseline();      // what every backend must support: f16/bf16, d 64/128
std::vector<Case> determinism();   // forward twice, bit-identical

}  // namespace fa2::test::grids
