// The internal contract between the C API layer (api.cpp) and a backend.
// A backend sees only validated AttnParams; it never parses C API structs.
#pragma once

#include <memory>
#include <string>

#include "core/params.h"
#include "fa2/fa2.h"

namespace fa2 {

// What the API layer must check before a call reaches the backend.
struct Capabilities {
  bool dtypes[FA2_NUM_DTYPES];  // indexed by fa2_dtype_t
  int max_head_dim;             // largest head dim with a kernel
  int head_dim_multiple;        // head_dim % this == 0 (1 = any)
  int alignment_bytes;          // data pointers and strides in bytes
  bool host_memory;             // operands live in host memory (cu_seqlens can be read)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Capabilities capabilities() const = 0;
  // Checks only the backend can make (pointer residency, device
  // generation). Must not write any output.
  virtual fa2_status_t check(const core::AttnParams &, std::string &why) const {
    (void)why;
    return FA2_SUCCESS;
  }
  virtual uint64_t fwd_workspace(const core::AttnParams &) const = 0;
  virtual uint64_t bwd_workspace(const core::AttnParams &) const = 0;
  virtual fa2_status_t fwd(const core::AttnParams &, void *stream, std::string &why) = 0;
  virtual fa2_status_t bwd(const core::AttnParams &, void *stream, std::string &why) = 0;
};

// Factories: one per backend, each defined in its own backends/<name>.
// Return FA2_SUCCESS and a backend, or a status and `why`.
using BackendFactory = fa2_status_t (*)(int device, std::unique_ptr<Backend> &out,
                                        std::string &why);
fa2_status_t make_cpu_backend(int device, std::unique_ptr<Backend> &out, std::string &why);
fa2_status_t make_cuda_backend(int device, std::unique_ptr<Backend> &out, std::string &why);
fa2_status_t make_hip_backend(int device, std::unique_ptr<Backend> &out, std::string &why);
fa2_status_t make_kokkos_backend(int device, std::unique_ptr<Backend> &out, std::string &why);

}  // namespace fa2
