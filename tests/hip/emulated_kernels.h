// The HIP backend's kernels run on the CPU (emulated_kernels.cpp, compiled
// by clang against emulation/hip/hip_runtime.h), launched the way
// HipBackend launches them. Plain C++ interface for the test.
#pragma once

#include "core/params.h"

namespace fa2::hip::emulated {

// out and lse from q, k, v.
void fwd(const core::AttnParams &p);
// dq, dk, dv; `workspace` holds bwd_workspace(p).bytes (launch.h).
void bwd(const core::AttnParams &p, void *workspace);

}  // namespace fa2::hip::emulated
