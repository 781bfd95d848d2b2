// The fp32 scratch the backward keeps in the caller's workspace: D
// (= rowsum(dO * O)) and the dQ accumulator, both indexed by
// core::row_stat_index (a dQ row holds head_dim floats).
#pragma once

namespace fa2::cuda {

struct BwdScratch {
  float *delta;
  float *dq_accum;
};

}  // namespace fa2::cuda
