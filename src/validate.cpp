#include "validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/online_softmax.h"

namespace fa2 {
namespace {

using core::kMaxSeqlen;
using core::kUnlimited;

const char *kDtypeNames[FA2_NUM_DTYPES] = {"f16", "bf16", "f32"};
const int kDtypeBytes[FA2_NUM_DTYPES] = {2, 2, 4};

// A caller's enum may hold any int (C allows it; loading such a value as a
// C++ enum is undefined), so dtypes are read as plain ints.
int raw_dtype(const fa2_dtype_t &field) {
  int value;
  static_assert(sizeof value == sizeof field, "C enums are int-sized");
  std::memcpy(&value, &field, sizeof value);
  return value;
}

bool mul_ok(int64_t a, int64_t b, int64_t &r) { return !__builtin_mul_overflow(a, b, &r); }
bool add_ok(int64_t a, int64_t b, int64_t &r) { return !__builtin_add_overflow(a, b, &r); }

struct Dims {
  int64_t batch, seqlen, heads, head_dim;
};

// Checks one operand and fills its TensorRef. `output` operands must not
// overlap themselves; inputs may broadcast (stride 0).
fa2_status_t check_tensor(const char *name, const fa2_tensor_t *t, const Dims &dims, bool varlen,
                          bool output, fa2_dtype_t dtype, const Capabilities &caps,
                          core::TensorRef &ref, std::string &why) {
  if (t == nullptr) return why = std::string(name) + " is NULL", FA2_ERROR_NULL_POINTER;
  const int tensor_dtype = raw_dtype(t->dtype);
  if (tensor_dtype != dtype)
    return why = std::string(name) + " has dtype " +
                 (unsigned(tensor_dtype) < FA2_NUM_DTYPES ? kDtypeNames[tensor_dtype] : "?") +
                 " but q has " + kDtypeNames[dtype],
           FA2_ERROR_UNSUPPORTED_DTYPE;
  const int64_t sb = varlen ? 0 : t->stride_batch;
  const int64_t strides[3] = {sb, t->stride_seq, t->stride_head};
  const int64_t sizes[3] = {varlen ? 1 : dims.batch, dims.seqlen, dims.heads};
  const char *stride_names[3] = {"stride_batch", "stride_seq", "stride_head"};
  int64_t elements = 0;  // one past the largest element offset
  bool empty = false;
  for (int i = 0; i < 3; ++i) {
    if (sizes[i] == 0) empty = true;
    if (strides[i] < 0 || (output && sizes[i] > 1 && strides[i] == 0))
      return why = std::string(name) + "." + stride_names[i] + " = " +
                   std::to_string(strides[i]) + (output ? " must be positive" : " is negative"),
             FA2_ERROR_BAD_STRIDE;
  }
  if (!empty) {
    elements = dims.head_dim;
    for (int i = 0; i < 3; ++i) {
      int64_t span;
      if (!mul_ok(sizes[i] - 1, strides[i], span) || !add_ok(elements, span, elements))
        return why = std::string(name) + ": the largest element offset overflows int64",
               FA2_ERROR_SIZE_OVERFLOW;
    }
    int64_t bytes;
    if (!mul_ok(elements, kDtypeBytes[dtype], bytes))
      return why = std::string(name) + ": its byte count overflows int64", FA2_ERROR_SIZE_OVERFLOW;
    if (t->data == nullptr) return why = std::string(name) + ".data is NULL", FA2_ERROR_NULL_POINTER;
  }
  if (output && !empty) {
    // Non-overlap: sorted by stride, each dim must step past the extent of
    // the smaller ones (the contiguous head_dim is the innermost).
    int order[3] = {0, 1, 2};
    std::sort(order, order + 3, [&](int a, int b) { return strides[a] < strides[b]; });
    int64_t extent = dims.head_dim;
    for (int i : order) {
      if (sizes[i] <= 1) continue;
      if (strides[i] < extent)
        return why = std::string(name) + "." + stride_names[i] + " = " +
                     std::to_string(strides[i]) +
                     " makes output elements overlap (it must be at least " +
                     std::to_string(extent) + ")",
               FA2_ERROR_BAD_STRIDE;
      extent = strides[i] * sizes[i];
    }
  }
  const int64_t align = caps.alignment_bytes;
  if (reinterpret_cast<uintptr_t>(t->data) % uintptr_t(align) != 0)
    return why = std::string(name) + ".data is not aligned to " + std::to_string(align) + " bytes",
           FA2_ERROR_MISALIGNED;
  for (int i = 0; i < 3; ++i)
    if (sizes[i] > 1 && (strides[i] * kDtypeBytes[dtype]) % align != 0)
      return why = std::string(name) + "." + stride_names[i] + " * element size is not a multiple of " +
                   std::to_string(align) + " bytes",
             FA2_ERROR_MISALIGNED;
  ref.data = t->data;
  ref.stride_batch = sb;
  ref.stride_seq = t->stride_seq;
  ref.stride_head = t->stride_head;
  return FA2_SUCCESS;
}

fa2_status_t check_cu_seqlens(const char *name, const int32_t *cu, int64_t batch, int64_t max_len,
                              std::string &why) {
  if (cu[0] != 0) return why = std::string(name) + "[0] must be 0", FA2_ERROR_INVALID_ARGUMENT;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = int64_t(cu[b + 1]) - cu[b];
    if (len < 0 || len > max_len)
      return why = std::string(name) + ": sequence " + std::to_string(b) + " has length " +
                   std::to_string(len) + ", outside [0, " + std::to_string(max_len) + "]",
             FA2_ERROR_SHAPE_MISMATCH;
  }
  return FA2_SUCCESS;
}

}  // namespace

fa2_status_t validate(const CallArgs &args, const Capabilities &caps, core::AttnParams &p,
                      std::string &why) {
  static const fa2_options_t kDefaults = FA2_OPTIONS_INIT;
  const fa2_shape_t *s = args.shape;
  if (s == nullptr) return why = "shape is NULL", FA2_ERROR_NULL_POINTER;
  const fa2_options_t *o = args.options ? args.options : &kDefaults;
  if (o->struct_size < sizeof(fa2_options_t) || o->version != FA2_OPTIONS_VERSION)
    return why = "options was not initialised with FA2_OPTIONS_INIT (struct_size " +
                 std::to_string(o->struct_size) + ", version " + std::to_string(o->version) + ")",
           FA2_ERROR_INVALID_ARGUMENT;

  // Shape.
  if (s->batch < 0 || s->seqlen_q < 0 || s->seqlen_k < 0)
    return why = "batch, seqlen_q and seqlen_k must be >= 0", FA2_ERROR_SHAPE_MISMATCH;
  if (s->heads_q < 1 || s->heads_kv < 1)
    return why = "heads_q and heads_kv must be >= 1", FA2_ERROR_SHAPE_MISMATCH;
  if (s->heads_q % s->heads_kv != 0)
    return why = "heads_q = " + std::to_string(s->heads_q) + " is not a multiple of heads_kv = " +
                 std::to_string(s->heads_kv),
           FA2_ERROR_SHAPE_MISMATCH;
  if (s->seqlen_q > kMaxSeqlen || s->seqlen_k > kMaxSeqlen || s->batch > INT32_MAX ||
      s->heads_q > INT32_MAX)
    return why = "a length, batch or head count is beyond 2^30", FA2_ERROR_SIZE_OVERFLOW;
  if (s->head_dim < 1 || s->head_dim > caps.max_head_dim ||
      s->head_dim % caps.head_dim_multiple != 0)
    return why = "head_dim = " + std::to_string(s->head_dim) + "; this backend supports 1.." +
                 std::to_string(caps.max_head_dim) +
                 (caps.head_dim_multiple > 1
                      ? " in multiples of " + std::to_string(caps.head_dim_multiple)
                      : std::string()),
           FA2_ERROR_UNSUPPORTED_HEAD_DIM;
  int64_t rows;
  if (!mul_ok(s->batch * s->heads_q, s->seqlen_q, rows) ||
      !mul_ok(rows, s->head_dim * 4, rows))
    return why = "batch * heads_q * seqlen_q * head_dim * 4 bytes overflows int64",
           FA2_ERROR_SIZE_OVERFLOW;

  // Options.
  // The kernels track the running max of raw scores, which is the max of
  // the scaled scores only for a positive scale.
  if (!std::isfinite(o->softmax_scale) || o->softmax_scale < 0.f)
    return why = "softmax_scale must be finite and positive (0 = 1/sqrt(head_dim))",
           FA2_ERROR_INVALID_ARGUMENT;
  if (o->window_left < -1 || o->window_right < -1)
    return why = "window_left / window_right must be >= -1 (-1 = unlimited)",
           FA2_ERROR_INVALID_ARGUMENT;
  if (o->causal && o->window_right > 0)
    return why = "causal with window_right > 0 contradicts itself (causal means right = 0)",
           FA2_ERROR_INVALID_ARGUMENT;
  const bool varlen = o->cu_seqlens_q != nullptr || o->cu_seqlens_k != nullptr;
  if (varlen && (o->cu_seqlens_q == nullptr || o->cu_seqlens_k == nullptr))
    return why = "varlen needs both cu_seqlens_q and cu_seqlens_k", FA2_ERROR_NULL_POINTER;
  if (varlen && caps.host_memory) {
    fa2_status_t st = check_cu_seqlens("cu_seqlens_q", o->cu_seqlens_q, s->batch, s->seqlen_q, why);
    if (st == FA2_SUCCESS)
      st = check_cu_seqlens("cu_seqlens_k", o->cu_seqlens_k, s->batch, s->seqlen_k, why);
    if (st != FA2_SUCCESS) return st;
  }

  // Dtype: the tensors' when given, else the size query's.
  const int raw = args.has_tensors ? (args.q ? raw_dtype(args.q->dtype) : FA2_DTYPE_F16)
                                    : raw_dtype(args.dtype);
  if (unsigned(raw) >= FA2_NUM_DTYPES || !caps.dtypes[raw])
    return why = std::string("dtype ") +
                 (unsigned(raw) < FA2_NUM_DTYPES ? kDtypeNames[raw] : "(unknown value)") +
                 " is not supported by this backend",
           FA2_ERROR_UNSUPPORTED_DTYPE;
  const auto dtype = fa2_dtype_t(raw);

  p = core::AttnParams{};
  p.dtype = core::Dtype(dtype);
  p.batch = int(s->batch);
  p.seqlen_q = int(s->seqlen_q);
  p.seqlen_k = int(s->seqlen_k);
  p.heads_q = int(s->heads_q);
  p.heads_kv = int(s->heads_kv);
  p.group_size = int(s->heads_q / s->heads_kv);
  p.head_dim = int(s->head_dim);
  p.scale = o->softmax_scale != 0.f ? o->softmax_scale : 1.f / std::sqrt(float(s->head_dim));
  p.scale_log2 = p.scale * core::kLog2e;
  p.causal = o->causal != 0;
  p.window_left = o->window_left < 0 ? kUnlimited : std::min(o->window_left, kUnlimited);
  p.window_right = o->causal ? 0 : (o->window_right < 0 ? kUnlimited : o->window_right);
  p.has_mask = p.window_left < kUnlimited || p.window_right < kUnlimited;
  p.cu_seqlens_q = o->cu_seqlens_q;
  p.cu_seqlens_k = o->cu_seqlens_k;
  if (!args.has_tensors) return FA2_SUCCESS;

  const Dims qdims{s->batch, s->seqlen_q, s->heads_q, s->head_dim};
  const Dims kdims{s->batch, s->seqlen_k, s->heads_kv, s->head_dim};
  struct Operand {
    const char *name;
    const fa2_tensor_t *t;
    const Dims *dims;
    bool output;
    core::TensorRef *ref;
  };
  const bool bwd = args.backward;
  const Operand operands[] = {
      {"q", args.q, &qdims, false, &p.q},
      {"k", args.k, &kdims, false, &p.k},
      {"v", args.v, &kdims, false, &p.v},
      {"out", args.out, &qdims, !bwd, &p.out},
      {"dout", args.dout, &qdims, false, &p.dout},
      {"dq", args.dq, &qdims, true, &p.dq},
      {"dk", args.dk, &kdims, true, &p.dk},
      {"dv", args.dv, &kdims, true, &p.dv},
  };
  for (const Operand &op : operands) {
    const bool used = bwd || op.ref == &p.q || op.ref == &p.k || op.ref == &p.v || op.ref == &p.out;
    if (!used) continue;
    const fa2_status_t st =
        check_tensor(op.name, op.t, *op.dims, varlen, op.output, dtype, caps, *op.ref, why);
    if (st != FA2_SUCCESS) return st;
  }
  if (args.lse == nullptr && rows > 0) return why = "lse is NULL", FA2_ERROR_NULL_POINTER;
  if (reinterpret_cast<uintptr_t>(args.lse) % alignof(float) != 0)
    return why = "lse is not aligned to 4 bytes", FA2_ERROR_MISALIGNED;
  p.lse = const_cast<float *>(args.lse);
  return FA2_SUCCESS;
}

}  // namespace fa2
