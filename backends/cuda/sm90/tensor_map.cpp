#include "sm90/tensor_map.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fa2::cuda::sm90 {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                 const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                 const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void *entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return EncodeTiled{nullptr};
    }
    return reinterpret_cast<EncodeTiled>(entry);
  }();
  return fn;
}

constexpr int64_t kMaxStrideBytes = int64_t{1} << 40;

bool stride_ok(int64_t stride_elems) {
  const int64_t bytes = stride_elems * 2;
  return bytes > 0 && bytes % 16 == 0 && bytes < kMaxStrideBytes;
}

bool operand_ok(const core::TensorRef &t, int heads, int batch) {
  return t.data != nullptr && reinterpret_cast<uintptr_t>(t.data) % 16 == 0 &&
         stride_ok(t.stride_seq) && (heads == 1 || stride_ok(t.stride_head)) &&
         (batch == 1 || stride_ok(t.stride_batch));
}

// The batch extent of the call's maps: varlen maps cover one sequence each.
int map_batch(const core::AttnParams &p) { return p.is_varlen() ? 1 : p.batch; }

// Per-sequence maps start on this boundary of the workspace (the API
// guarantees 16 bytes, a map needs 64): each map has 128 bytes of its own.
constexpr uint64_t kMapAlign = 128;

}  // namespace

bool tma_covers_operand(const core::AttnParams &p, const core::TensorRef &t, int heads) {
  return operand_ok(t, heads, map_batch(p));
}

bool tma_covers(const core::AttnParams &p) {
  return p.seqlen_k > 0 && encode_tiled() != nullptr && tma_covers_operand(p, p.q, p.heads_q) &&
         tma_covers_operand(p, p.k, p.heads_kv) && tma_covers_operand(p, p.v, p.heads_kv);
}

uint64_t sequence_maps_bytes(const core::AttnParams &p) {
  if (!p.is_varlen()) return 0;
  return kMapAlign + uint64_t(p.batch) * kSeqOperands * sizeof(CUtensorMap);
}

fa2_status_t encode_operand_map(CUtensorMap &map, const core::TensorRef &t, core::Dtype dtype,
                                int seqlen, int heads, int batch, int head_dim, int box_rows,
                                std::string &why) {
  // A dimension of extent 1 is never stepped over; its stride only has to
  // be acceptable to the encoder.
  const int element_bytes = dtype == core::Dtype::f32 ? 4 : 2;
  auto stride_bytes = [&](int extent, int64_t stride) {
    return cuuint64_t(extent == 1 ? 16 : stride * element_bytes);
  };
  const cuuint64_t dims[4] = {cuuint64_t(head_dim), cuuint64_t(seqlen), cuuint64_t(heads),
                              cuuint64_t(batch)};
  const cuuint64_t strides[3] = {stride_bytes(seqlen, t.stride_seq),
                                 stride_bytes(heads, t.stride_head),
                                 stride_bytes(batch, t.stride_batch)};
  const cuuint32_t box[4] = {cuuint32_t(128 / element_bytes), cuuint32_t(box_rows), 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const CUresult result = encode_tiled()(
      &map,
      dtype == core::Dtype::f32    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
      : dtype == core::Dtype::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      4, t.data, dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    why = "cuTensorMapEncodeTiled failed with CUresult " + std::to_string(int(result));
    return FA2_ERROR_DEVICE_RUNTIME;
  }
  return FA2_SUCCESS;
}

fa2_status_t encode_call_maps(TmaMaps &maps, const core::AttnParams &p, int q_box_rows,
                              int kv_box_rows, bool with_dout, void *workspace,
                              cudaStream_t stream, std::string &why) {
  const int batch = map_batch(p);
  const struct {
    CUtensorMap &map;
    const core::TensorRef &tensor;
    int seqlen, heads, box_rows;
  } operands[kSeqOperands] = {{maps.q, p.q, p.seqlen_q, p.heads_q, q_box_rows},
                              {maps.k, p.k, p.seqlen_k, p.heads_kv, kv_box_rows},
                              {maps.v, p.v, p.seqlen_k, p.heads_kv, kv_box_rows},
                              {maps.dout, p.dout, p.seqlen_q, p.heads_q, q_box_rows}};
  const int count = with_dout ? kSeqOperands : kSeqDout;
  SequenceRows rows{};
  for (int op = 0; op < count; ++op) {
    const auto &o = operands[op];
    const fa2_status_t status = encode_operand_map(o.map, o.tensor, p.dtype, o.seqlen, o.heads,
                                                   batch, p.head_dim, o.box_rows, why);
    if (status != FA2_SUCCESS) return status;
    rows.base[op] = static_cast<const char *>(o.tensor.data);
    rows.row_bytes[op] = o.tensor.stride_seq * 2;
  }
  maps.sequences = nullptr;
  if (!p.is_varlen()) return FA2_SUCCESS;
  if (workspace == nullptr || p.workspace_bytes < sequence_maps_bytes(p)) {
    why = "the varlen Hopper kernels got no room for their tensor maps in the workspace";
    return FA2_ERROR_INTERNAL;
  }
  const uintptr_t at = (reinterpret_cast<uintptr_t>(workspace) + kMapAlign - 1) & ~(kMapAlign - 1);
  CUtensorMap *const out = reinterpret_cast<CUtensorMap *>(at);
  maps.sequences = out;
  return write_sequence_maps(p, maps, rows, count, out, stream, why);
}

}  // namespace fa2::cuda::sm90
