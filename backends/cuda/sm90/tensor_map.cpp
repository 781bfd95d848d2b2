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

}  // namespace

bool tma_covers_operand(const core::TensorRef &t, int heads, int batch) {
  return operand_ok(t, heads, batch);
}

bool tma_covers(const core::AttnParams &p) {
  return !p.is_varlen() && p.seqlen_k > 0 && encode_tiled() != nullptr && operand_ok(p.q, p.heads_q, p.batch) &&
         operand_ok(p.k, p.heads_kv, p.batch) && operand_ok(p.v, p.heads_kv, p.batch);
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

}  // namespace fa2::cuda::sm90
