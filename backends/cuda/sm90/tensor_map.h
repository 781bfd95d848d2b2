// Tensor maps (TMA descriptors) for the Hopper kernels, encoded on the host
// through the driver entry point that the CUDA runtime hands out, so that
// libfa2 links no libcuda of its own.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/params.h"
#include "fa2/fa2.h"

namespace fa2::cuda::sm90 {

// Tensor maps over [batch, heads, seqlen, head_dim], boxes of 128 bytes of
// columns (the swizzle span: 64 b16, 32 fp32) by block_m (Q, dO, dQ) or
// block_n (K, V) rows, passed to the kernels as one __grid_constant__
// parameter. dout and the fp32 dQ accumulator are the backward's.
// Varlen calls read Q, K, V and dO through `sequences` instead: per batch
// entry, kSeqOperands maps of that sequence's rows alone (written on the
// device by encode_call_maps), so that the TMA zero-fills past each
// sequence's end as it does past a fixed length. Null otherwise.
enum SeqOperand : int { kSeqQ, kSeqK, kSeqV, kSeqDout, kSeqOperands };
struct TmaMaps {
  CUtensorMap q, k, v, dout, dq_accum;
  CUtensorMap out;  // the fixed-length forward's O where it leaves by TMA (FwdKernel::kTmaOut)
  const CUtensorMap *sequences;
};

// True when every operand of this call can be read by the TMA: 16-byte
// aligned base addresses and 16-byte multiple strides, at least one key.
bool tma_covers(const core::AttnParams &p);
// The same test for one more operand (the backward's dO).
bool tma_covers_operand(const core::AttnParams &p, const core::TensorRef &t, int heads);

// Workspace bytes of a call's per-sequence maps: 0 unless varlen.
uint64_t sequence_maps_bytes(const core::AttnParams &p);

// One [batch, heads, seqlen, head_dim] operand as a 4-D map whose box is
// 128 bytes of columns (the swizzle span) by box_rows rows; out-of-range
// rows and columns read as zeros and are skipped by reductions. dtype f32
// is the backward's dQ accumulator.
fa2_status_t encode_operand_map(CUtensorMap &map, const core::TensorRef &t, core::Dtype dtype,
                                int seqlen, int heads, int batch, int head_dim, int box_rows,
                                std::string &why);

// Q, K, V and, with `with_dout`, dO of a call, Q and dO in boxes of
// q_box_rows, K and V of kv_box_rows. Varlen: these are encoded over the
// packed rows (batch extent 1) as templates, and a kernel on `stream`
// writes each sequence's own maps from them into `workspace`
// (sequence_maps_bytes of it), where maps.sequences then points.
fa2_status_t encode_call_maps(TmaMaps &maps, const core::AttnParams &p, int q_box_rows,
                              int kv_box_rows, bool with_dout, void *workspace,
                              cudaStream_t stream, std::string &why);

// The kernel behind encode_call_maps (sequence_maps.cu): `operands` maps
// (SeqOperand order) of every sequence into `out`, [batch][kSeqOperands].
struct SequenceRows {
  const char *base[kSeqOperands];   // the packed tensor's first row
  int64_t row_bytes[kSeqOperands];  // its stride_seq in bytes
};
fa2_status_t write_sequence_maps(const core::AttnParams &p, const TmaMaps &templates,
                                 const SequenceRows &rows, int operands, CUtensorMap *out,
                                 cudaStream_t stream, std::string &why);

}  // namespace fa2::cuda::sm90
