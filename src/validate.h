// Argument validation for the C API: turns the caller's structs into
// core::AttnParams or a status plus a sentence naming the bad argument.
#pragma once

#include <string>

#include "backend.h"
#include "core/params.h"
#include "fa2/fa2.h"

namespace fa2 {

struct CallArgs {
  const fa2_shape_t *shape = nullptr;
  fa2_dtype_t dtype = FA2_DTYPE_F16;  // size queries only; calls take the tensors' dtype
  const fa2_options_t *options = nullptr;
  bool backward = false;
  bool has_tensors = false;  // false for workspace-size queries
  const fa2_tensor_t *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
  const fa2_tensor_t *dout = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr;
  const float *lse = nullptr;

  static CallArgs for_size(const fa2_shape_t *shape, fa2_dtype_t dtype,
                           const fa2_options_t *options, bool backward) {
    CallArgs a;
    a.shape = shape, a.dtype = dtype, a.options = options, a.backward = backward;
    return a;
  }
};

fa2_status_t validate(const CallArgs &args, const Capabilities &caps, core::AttnParams &params,
                      std::string &why);

}  // namespace fa2
