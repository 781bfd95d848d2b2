// Tensor maps (TMA descriptors) for the Hopper kernels, encoded on the host
// through the driver entry point that the CUDA runtime hands out, so that
// libfa2 links no libcuda of its own.
#pragma once

#include <cuda.h>

#include <string>

#include "core/params.h"
#include "fa2/fa2.h"

namespace fa2::cuda::sm90 {

// True when every operand of this call can be read by the TMA: fixed-length
// batches (varlen stays on the sm80 kernels, whose loads are bounded per
// sequence), 16-byte aligned base addresses and 16-byte multiple strides,
// at least one key.
bool tma_covers(const core::AttnParams &p);
// The same test for one more operand (the backward's dO).
bool tma_covers_operand(const core::TensorRef &t, int heads, int batch);

// One [batch, heads, seqlen, head_dim] operand as a 4-D map whose box is
// 128 bytes of columns (the swizzle span) by box_rows rows; out-of-range
// rows and columns read as zeros and are skipped by reductions. dtype f32
// is the backward's dQ accumulator.
fa2_status_t encode_operand_map(CUtensorMap &map, const core::TensorRef &t, core::Dtype dtype,
                                int seqlen, int heads, int batch, int head_dim, int box_rows,
                                std::string &why);

}  // namespace fa2::cuda::sm90
