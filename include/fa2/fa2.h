/*
 * fa2 — exact FlashAttention-2 on every vendor's GPU and on the CPU.
 *
 * The public C99 contract. Nothing here depends on C++ or on a vendor
 * header: GPU streams travel as `void*` (cudaStream_t / hipStream_t).
 *
 * Conventions
 *  - Tensors are [batch, seqlen, heads, head_dim] with the last dimension
 *    contiguous; the other three strides are given in elements (int64), so
 *    packed QKV buffers and transposed gradients need no copy.
 *  - Variable-length batches: set options.cu_seqlens_q / cu_seqlens_k
 *    (int32, batch + 1 entries, in the memory of the handle's device), and
 *    shape.seqlen_q / seqlen_k to the max lengths. Tensors are then packed
 *    [total_tokens, heads, head_dim] and their stride_batch is ignored.
 *  - The logsumexp (natural log, of the scaled scores) is float32,
 *    contiguous [batch, heads_q, seqlen_q]; for varlen seqlen_q is the max
 *    length and the entries past a sequence's own length are left as they
 *    were. A fully masked row (and a row of a zero-length key sequence)
 *    gets output 0 and lse -inf, the exact value, which merges correctly
 *    when partial results are combined.
 *  - Every call that returns a status other than FA2_SUCCESS has written
 *    nothing to any output. fa2_last_error(handle) then says which argument
 *    was wrong and why.
 */
#ifndef FA2_FA2_H
#define FA2_FA2_H

#include <stddef.h>
#include <stdint.h>

#include "fa2/version.h"

#if defined(_WIN32)
#  define FA2_API __declspec(dllexport)
#else
#  define FA2_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  FA2_SUCCESS = 0,
  FA2_ERROR_INVALID_ARGUMENT = 1,    /* a value out of range (scale, window, ...) */
  FA2_ERROR_NULL_POINTER = 2,        /* a required pointer is NULL */
  FA2_ERROR_SHAPE_MISMATCH = 3,      /* shapes disagree (e.g. heads_q % heads_kv) */
  FA2_ERROR_BAD_STRIDE = 4,          /* negative, zero or overlapping strides */
  FA2_ERROR_UNSUPPORTED_HEAD_DIM = 5,/* the backend has no kernel for this head_dim */
  FA2_ERROR_UNSUPPORTED_DTYPE = 6,   /* dtype unknown, mixed, or not on this backend */
  FA2_ERROR_MISALIGNED = 7,          /* pointer or stride not aligned as required */
  FA2_ERROR_SIZE_OVERFLOW = 8,       /* a byte count does not fit in 64 bits / int32 */
  FA2_ERROR_BACKEND_NOT_BUILT = 9,   /* this build does not contain that backend */
  FA2_ERROR_NO_DEVICE = 10,          /* the backend is built but no device is present */
  FA2_ERROR_UNSUPPORTED_DEVICE = 11, /* a device too old for the compiled kernels */
  FA2_ERROR_OUT_OF_MEMORY = 12,      /* an allocation (handle setup) failed */
  FA2_ERROR_WORKSPACE_TOO_SMALL = 13,/* workspace_bytes below the queried size */
  FA2_ERROR_UNSUPPORTED_FEATURE = 14,/* an option this backend does not implement */
  FA2_ERROR_DEVICE_RUNTIME = 15,     /* the vendor runtime reported an error */
  FA2_ERROR_INTERNAL = 16,           /* a bug in fa2: please report it */
  FA2_NUM_STATUS = 17
} fa2_status_t;

typedef enum {
  FA2_BACKEND_CPU = 0,
  FA2_BACKEND_CUDA = 1,
  FA2_BACKEND_HIP = 2,
  FA2_BACKEND_KOKKOS = 3,
  FA2_NUM_BACKENDS = 4
} fa2_backend_t;

typedef enum {
  FA2_DTYPE_F16 = 0,
  FA2_DTYPE_BF16 = 1,
  FA2_DTYPE_F32 = 2,
  FA2_NUM_DTYPES = 3
} fa2_dtype_t;

/* One attention operand: [batch, seqlen, heads, head_dim], last dim contiguous. */
typedef struct {
  void *data;
  fa2_dtype_t dtype;
  int64_t stride_batch; /* elements; ignored for varlen */
  int64_t stride_seq;   /* elements */
  int64_t stride_head;  /* elements */
} fa2_tensor_t;

typedef struct {
  int64_t batch;
  int64_t seqlen_q; /* max length for varlen */
  int64_t seqlen_k; /* max length for varlen */
  int64_t heads_q;
  int64_t heads_kv; /* heads_q % heads_kv == 0: MHA, GQA, MQA */
  int64_t head_dim;
} fa2_shape_t;

#define FA2_OPTIONS_VERSION 1

/* Grows only at its end; callers start from FA2_OPTIONS_INIT. */
typedef struct {
  size_t struct_size;   /* sizeof(fa2_options_t) of the caller */
  uint32_t version;     /* FA2_OPTIONS_VERSION of the caller */
  float softmax_scale;  /* > 0; 0 = 1/sqrt(head_dim) */
  int causal;           /* bottom-right aligned when seqlen_q != seqlen_k */
  int window_left;      /* keys allowed left of the diagonal, -1 = unlimited */
  int window_right;     /* keys allowed right of the diagonal, -1 = unlimited */
  const int32_t *cu_seqlens_q; /* varlen: batch + 1 offsets, or NULL */
  const int32_t *cu_seqlens_k; /* varlen: batch + 1 offsets, or NULL */
} fa2_options_t;

#define FA2_OPTIONS_INIT \
  { sizeof(fa2_options_t), FA2_OPTIONS_VERSION, 0.0f, 0, -1, -1, NULL, NULL }

typedef struct fa2_handle_s *fa2_handle_t;

/* Version of the library that is running (FA2_VERSION_CODE of its build). */
FA2_API fa2_status_t fa2_get_version(int *version);
FA2_API const char *fa2_status_string(fa2_status_t status);
FA2_API const char *fa2_backend_name(fa2_backend_t backend);
/* *built = 1 when this build holds the backend. */
FA2_API fa2_status_t fa2_backend_built(fa2_backend_t backend, int *built);

FA2_API fa2_status_t fa2_create(fa2_handle_t *handle, fa2_backend_t backend, int device);
FA2_API fa2_status_t fa2_destroy(fa2_handle_t handle);
/* Detail of the last refused or failed call on this handle ("" if none). */
FA2_API const char *fa2_last_error(fa2_handle_t handle);

/* The workspace (at least the queried bytes, on the handle's device) is
 * scratch for one call: its contents on entry do not matter, and the call
 * may leave anything in it. */
FA2_API fa2_status_t fa2_fwd_workspace_size(fa2_handle_t handle, const fa2_shape_t *shape,
                                            fa2_dtype_t dtype, const fa2_options_t *options,
                                            size_t *bytes);

FA2_API fa2_status_t fa2_fwd(fa2_handle_t handle, const fa2_shape_t *shape,
                             const fa2_tensor_t *q, const fa2_tensor_t *k,
                             const fa2_tensor_t *v, const fa2_tensor_t *out, float *lse,
                             const fa2_options_t *options, void *workspace,
                             size_t workspace_bytes, void *stream);

FA2_API fa2_status_t fa2_bwd_workspace_size(fa2_handle_t handle, const fa2_shape_t *shape,
                                            fa2_dtype_t dtype, const fa2_options_t *options,
                                            size_t *bytes);

FA2_API fa2_status_t fa2_bwd(fa2_handle_t handle, const fa2_shape_t *shape,
                             const fa2_tensor_t *dout, const fa2_tensor_t *q,
                             const fa2_tensor_t *k, const fa2_tensor_t *v,
                             const fa2_tensor_t *out, const float *lse,
                             const fa2_tensor_t *dq, const fa2_tensor_t *dk,
                             const fa2_tensor_t *dv, const fa2_options_t *options,
                             void *workspace, size_t workspace_bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* FA2_FA2_H */
