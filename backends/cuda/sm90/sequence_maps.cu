// Varlen calls on the Hopper kernels: each sequence's own tensor maps,
// written on the device (cu_seqlens live there) from the call's templates.
// A map of one sequence's rows makes the TMA zero-fill past its end, which
// is what the kernels count on for the rows and keys past a fixed length.
#include <cstdint>

#include "cuda_check.h"
#include "sm90/hopper_ops.cuh"
#include "sm90/tensor_map.h"

namespace fa2::cuda::sm90 {
namespace {

constexpr int kThreads = 128;

// Thread i writes map i % operands of sequence i / operands: the template
// copied, then its base moved to the sequence's first row and its rows cut
// to the sequence's length (at least 1: the encoder's rule; a sequence
// with no rows is never loaded from).
__global__ void __launch_bounds__(kThreads)
    sequence_maps_kernel(const __grid_constant__ TmaMaps templates, const SequenceRows rows,
                         const int32_t *cu_seqlens_q, const int32_t *cu_seqlens_k, int batch,
                         int operands, CUtensorMap *out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= int64_t(batch) * operands) return;
  const int b = int(i / operands), op = int(i % operands);
  const CUtensorMap *const from[kSeqOperands] = {&templates.q, &templates.k, &templates.v,
                                                 &templates.dout};
  const int32_t *const cu = op == kSeqQ || op == kSeqDout ? cu_seqlens_q : cu_seqlens_k;
  const int32_t row0 = cu[b], length = cu[b + 1] - row0;
  CUtensorMap *const map = out + int64_t(kSeqOperands) * b + op;
  const uint4 *src = reinterpret_cast<const uint4 *>(from[op]);
  uint4 *dst = reinterpret_cast<uint4 *>(map);
#pragma unroll
  for (int w = 0; w < int(sizeof(CUtensorMap) / sizeof(uint4)); ++w) dst[w] = src[w];
  map_replace_address(map, rows.base[op] + int64_t(row0) * rows.row_bytes[op]);
  map_replace_rows(map, length > 0 ? length : 1);
  proxy_release_maps();
#endif  // other targets: never launched (the Hopper kernels run on sm_90a only)
}

}  // namespace

fa2_status_t write_sequence_maps(const core::AttnParams &p, const TmaMaps &templates,
                                 const SequenceRows &rows, int operands, CUtensorMap *out,
                                 cudaStream_t stream, std::string &why) {
  const int64_t threads = int64_t(p.batch) * operands;
  unsigned grid = 0;
  const fa2_status_t status = grid_size((threads + kThreads - 1) / kThreads, grid, why);
  if (status != FA2_SUCCESS || grid == 0) return status;
  sequence_maps_kernel<<<grid, kThreads, 0, stream>>>(templates, rows, p.cu_seqlens_q,
                                                      p.cu_seqlens_k, p.batch, operands, out);
  FA2_CUDA_CHECK(cudaGetLastError());
  return FA2_SUCCESS;
}

}  // namespace fa2::cuda::sm90
