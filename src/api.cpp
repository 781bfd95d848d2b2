// The C API: handles, argument validation, and dispatch to a backend.
// Every check runs before any backend code, so a refused call writes
// nothing; each refusal records which argument was wrong in the handle.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "backend.h"
#include "fa2/fa2.h"
#include "validate.h"

struct fa2_handle_s {
  fa2_backend_t kind;
  std::unique_ptr<fa2::Backend> impl;
  std::string last_error;
};

namespace {

fa2::BackendFactory factory_of(fa2_backend_t backend) {
  switch (backend) {
#ifdef FA2_WITH_CPU
    case FA2_BACKEND_CPU: return fa2::make_cpu_backend;
#endif
#ifdef FA2_WITH_CUDA
    case FA2_BACKEND_CUDA: return fa2::make_cuda_backend;
#endif
#ifdef FA2_WITH_HIP
    case FA2_BACKEND_HIP: return fa2::make_hip_backend;
#endif
#ifdef FA2_WITH_KOKKOS
    case FA2_BACKEND_KOKKOS: return fa2::make_kokkos_backend;
#endif
    default: return nullptr;
  }
}

fa2_status_t fail(fa2_handle_t handle, fa2_status_t status, std::string why) {
  handle->last_error = std::string(fa2_status_string(status)) + ": " + std::move(why);
  return status;
}

// Shared front half of every entry point: parse, validate, ask the backend.
fa2_status_t prepare(fa2_handle_t handle, const fa2::CallArgs &args, fa2::core::AttnParams &params) {
  handle->last_error.clear();
  std::string why;
  fa2_status_t status = fa2::validate(args, handle->impl->capabilities(), params, why);
  if (status == FA2_SUCCESS) status = handle->impl->check(params, why);
  if (status != FA2_SUCCESS) return fail(handle, status, why);
  return FA2_SUCCESS;
}

fa2_status_t check_workspace(fa2_handle_t handle, uint64_t needed, void *workspace,
                             size_t workspace_bytes, fa2::core::AttnParams &params) {
  if (workspace_bytes < needed)
    return fail(handle, FA2_ERROR_WORKSPACE_TOO_SMALL,
                "workspace_bytes = " + std::to_string(workspace_bytes) + ", the call needs " +
                    std::to_string(needed) + " (ask fa2_*_workspace_size)");
  if (needed > 0 && workspace == nullptr)
    return fail(handle, FA2_ERROR_NULL_POINTER, "workspace is NULL but the call needs " +
                                                    std::to_string(needed) + " bytes");
  if (needed > 0 && reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
    return fail(handle, FA2_ERROR_MISALIGNED, "workspace is not aligned to 16 bytes");
  params.workspace = workspace;
  params.workspace_bytes = workspace_bytes;
  return FA2_SUCCESS;
}

// Vendor code may throw (std::bad_alloc, a Kokkos error): never across C.
template <class F>
fa2_status_t guarded(fa2_handle_t handle, F &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(handle, FA2_ERROR_OUT_OF_MEMORY, "host allocation failed");
  } catch (const std::exception &e) {
    return fail(handle, FA2_ERROR_INTERNAL, e.what());
  }
}

// The two queries differ only in the pass whose scratch they size.
fa2_status_t workspace_size(fa2_handle_t handle, const fa2_shape_t *shape, fa2_dtype_t dtype,
                            const fa2_options_t *options, bool backward, size_t *bytes) {
  if (handle == nullptr) return FA2_ERROR_NULL_POINTER;
  return guarded(handle, [&] {
    if (bytes == nullptr) return fail(handle, FA2_ERROR_NULL_POINTER, "bytes is NULL");
    fa2::core::AttnParams params;
    const fa2::CallArgs args = fa2::CallArgs::for_size(shape, dtype, options, backward);
    const fa2_status_t status = prepare(handle, args, params);
    if (status != FA2_SUCCESS) return status;
    *bytes = size_t(backward ? handle->impl->bwd_workspace(params)
                             : handle->impl->fwd_workspace(params));
    return FA2_SUCCESS;
  });
}

}  // namespace

extern "C" {

fa2_status_t fa2_get_version(int *version) {
  if (version == nullptr) return FA2_ERROR_NULL_POINTER;
  *version = FA2_VERSION_CODE;
  return FA2_SUCCESS;
}

const char *fa2_status_string(fa2_status_t status) {
  switch (status) {
    case FA2_SUCCESS: return "success";
    case FA2_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case FA2_ERROR_NULL_POINTER: return "null pointer";
    case FA2_ERROR_SHAPE_MISMATCH: return "shape mismatch";
    case FA2_ERROR_BAD_STRIDE: return "bad stride";
    case FA2_ERROR_UNSUPPORTED_HEAD_DIM: return "unsupported head dim";
    case FA2_ERROR_UNSUPPORTED_DTYPE: return "unsupported dtype";
    case FA2_ERROR_MISALIGNED: return "misaligned pointer or stride";
    case FA2_ERROR_SIZE_OVERFLOW: return "size overflow";
    case FA2_ERROR_BACKEND_NOT_BUILT: return "backend not built";
    case FA2_ERROR_NO_DEVICE: return "no device";
    case FA2_ERROR_UNSUPPORTED_DEVICE: return "unsupported device";
    case FA2_ERROR_OUT_OF_MEMORY: return "out of memory";
    case FA2_ERROR_WORKSPACE_TOO_SMALL: return "workspace too small";
    case FA2_ERROR_UNSUPPORTED_FEATURE: return "unsupported feature";
    case FA2_ERROR_DEVICE_RUNTIME: return "device runtime error";
    case FA2_ERROR_INTERNAL: return "internal error";
    default: return "unknown status";
  }
}

const char *fa2_backend_name(fa2_backend_t backend) {
  switch (backend) {
    case FA2_BACKEND_CPU: return "cpu";
    case FA2_BACKEND_CUDA: return "cuda";
    case FA2_BACKEND_HIP: return "hip";
    case FA2_BACKEND_KOKKOS: return "kokkos";
    default: return "unknown";
  }
}

fa2_status_t fa2_backend_built(fa2_backend_t backend, int *built) {
  if (built == nullptr) return FA2_ERROR_NULL_POINTER;
  if (int(backend) < 0 || backend >= FA2_NUM_BACKENDS) return FA2_ERROR_INVALID_ARGUMENT;
  *built = factory_of(backend) != nullptr;
  return FA2_SUCCESS;
}

fa2_status_t fa2_create(fa2_handle_t *handle, fa2_backend_t backend, int device) {
  if (handle == nullptr) return FA2_ERROR_NULL_POINTER;
  *handle = nullptr;
  if (int(backend) < 0 || backend >= FA2_NUM_BACKENDS) return FA2_ERROR_INVALID_ARGUMENT;
  if (device < 0) return FA2_ERROR_INVALID_ARGUMENT;
  const fa2::BackendFactory factory = factory_of(backend);
  if (factory == nullptr) return FA2_ERROR_BACKEND_NOT_BUILT;
  try {
    auto created = std::make_unique<fa2_handle_s>();
    created->kind = backend;
    std::string why;
    const fa2_status_t status = factory(device, created->impl, why);
    if (status != FA2_SUCCESS) return status;
    *handle = created.release();
    return FA2_SUCCESS;
  } catch (const std::bad_alloc &) {
    return FA2_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return FA2_ERROR_INTERNAL;
  }
}

fa2_status_t fa2_destroy(fa2_handle_t handle) {
  delete handle;  // deleting NULL is a no-op, as free() is
  return FA2_SUCCESS;
}

const char *fa2_last_error(fa2_handle_t handle) {
  return handle == nullptr ? "handle is NULL" : handle->last_error.c_str();
}

fa2_status_t fa2_fwd_workspace_size(fa2_handle_t handle, const fa2_shape_t *shape,
                                    fa2_dtype_t dtype, const fa2_options_t *options,
                                    size_t *bytes) {
  return workspace_size(handle, shape, dtype, options, false, bytes);
}

fa2_status_t fa2_bwd_workspace_size(fa2_handle_t handle, const fa2_shape_t *shape,
                                    fa2_dtype_t dtype, const fa2_options_t *options,
                                    size_t *bytes) {
  return workspace_size(handle, shape, dtype, options, true, bytes);
}

fa2_status_t fa2_fwd(fa2_handle_t handle, const fa2_shape_t *shape, const fa2_tensor_t *q,
                     const fa2_tensor_t *k, const fa2_tensor_t *v, const fa2_tensor_t *out,
                     float *lse, const fa2_options_t *options, void *workspace,
                     size_t workspace_bytes, void *stream) {
  if (handle == nullptr) return FA2_ERROR_NULL_POINTER;
  return guarded(handle, [&] {
    fa2::CallArgs args = fa2::CallArgs::for_size(shape, FA2_DTYPE_F16, options, false);
    args.q = q, args.k = k, args.v = v, args.out = out, args.lse = lse;
    args.has_tensors = true;
    fa2::core::AttnParams params;
    fa2_status_t status = prepare(handle, args, params);
    if (status == FA2_SUCCESS)
      status = check_workspace(handle, handle->impl->fwd_workspace(params), workspace,
                               workspace_bytes, params);
    if (status != FA2_SUCCESS) return status;
    std::string why;
    status = handle->impl->fwd(params, stream, why);
    return status == FA2_SUCCESS ? status : fail(handle, status, why);
  });
}

fa2_status_t fa2_bwd(fa2_handle_t handle, const fa2_shape_t *shape, const fa2_tensor_t *dout,
                     const fa2_tensor_t *q, const fa2_tensor_t *k, const fa2_tensor_t *v,
                     const fa2_tensor_t *out, const float *lse, const fa2_tensor_t *dq,
                     const fa2_tensor_t *dk, const fa2_tensor_t *dv,
                     const fa2_options_t *options, void *workspace, size_t workspace_bytes,
                     void *stream) {
  if (handle == nullptr) return FA2_ERROR_NULL_POINTER;
  return guarded(handle, [&] {
    fa2::CallArgs args = fa2::CallArgs::for_size(shape, FA2_DTYPE_F16, options, true);
    args.q = q, args.k = k, args.v = v, args.out = out, args.lse = lse;
    args.dout = dout, args.dq = dq, args.dk = dk, args.dv = dv;
    args.has_tensors = true;
    fa2::core::AttnParams params;
    fa2_status_t status = prepare(handle, args, params);
    if (status == FA2_SUCCESS)
      status = check_workspace(handle, handle->impl->bwd_workspace(params), workspace,
                               workspace_bytes, params);
    if (status != FA2_SUCCESS) return status;
    std::string why;
    status = handle->impl->bwd(params, stream, why);
    return status == FA2_SUCCESS ? status : fail(handle, status, why);
  });
}

}  // extern "C"
