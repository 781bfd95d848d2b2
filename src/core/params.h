// The one plain struct every backend's kernels receive. Built once on the
// host by src/api.cpp from the C API's arguments; nothing in it is vendor
// specific. Strides are in elements, int64; scales are precomputed.
#pragma once

#include <cstdint>

namespace fa2::core {

enum class Dtype : int { f16 = 0, bf16 = 1, f32 = 2 };

// One [batch, seqlen, heads, head_dim] operand (last dim contiguous).
struct TensorRef {
  void *data = nullptr;
  int64_t stride_batch = 0;  // 0 for varlen (rows are addressed by cu_seqlens)
  int64_t stride_seq = 0;
  int64_t stride_head = 0;
};

struct AttnParams {
  // Forward: q, k, v -> out, lse. Backward also reads dout, out, lse and
  // writes dq, dk, dv.
  TensorRef q, k, v, out;
  TensorRef dout, dq, dk, dv;
  float *lse = nullptr;  // [batch, heads_q, seqlen_q] contiguous, float32

  Dtype dtype = Dtype::f16;
  int batch = 0;
  int seqlen_q = 0;  // max length when varlen
  int seqlen_k = 0;  // max length when varlen
  int heads_q = 0;
  int heads_kv = 0;
  int group_size = 1;  // heads_q / heads_kv
  int head_dim = 0;

  float scale = 0.f;       // softmax scale applied to q.k
  float scale_log2 = 0.f;  // scale * log2(e): scores go through exp2

  // Mask, normalised by the API layer: a key j is visible to query i of the
  // same sequence iff  i + diag - window_left <= j <= i + diag + window_right
  // with diag = seqlen_k - seqlen_q of that sequence (bottom-right aligned).
  // "Unlimited" is stored as kUnlimited, so the test needs no branch.
  bool causal = false;  // informational: window_right == 0 when set
  int window_left = 0;
  int window_right = 0;
  bool has_mask = false;  // some key inside [0, seqlen_k) can be invisible

  const int32_t *cu_seqlens_q = nullptr;  // varlen: batch + 1 offsets
  const int32_t *cu_seqlens_k = nullptr;

  // Backend-owned scratch inside the caller's workspace.
  void *workspace = nullptr;
  uint64_t workspace_bytes = 0;

  // Split-KV forward (work.h, kv_splits): each forward item's key blocks in
  // kv_splits parts, each part's normalised output and lse into these fp32
  // buffers (in the workspace), which a combine step merges into out and
  // lse. 1: no split, the kernels write out and lse themselves.
  int kv_splits = 1;
  float *out_partial = nullptr;  // [kv_splits, batch, heads_q, seqlen_q, head_dim]
  float *lse_partial = nullptr;  // [kv_splits, batch, heads_q, seqlen_q]

  // Query heads folded into rows (work.h, fold_query_groups): each head's
  // rows are the `heads` query heads of a group one after another,
  // `positions` rows each; q and out keep their unfolded strides.
  struct QueryFold {
    int heads = 1;      // 1: not folded
    int positions = 0;  // the unfolded seqlen_q
  } fold;

  bool is_varlen() const { return cu_seqlens_q != nullptr; }
};

// Large enough that i + diag +- kUnlimited never cuts a sequence, small
// enough that it cannot overflow int32 arithmetic with lengths < 2^30.
inline constexpr int kUnlimited = 1 << 30;
inline constexpr int64_t kMaxSeqlen = (int64_t{1} << 30) - 1;

}  // namespace fa2::core
