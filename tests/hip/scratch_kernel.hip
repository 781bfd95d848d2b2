// A kernel that must fail check_code_objects.sh: a private array indexed at
// run time lives in scratch memory, and its loop has no MFMA. The ctest
// hip.code_objects_rejects_scratch shows the check can fail.
#include <hip/hip_runtime.h>

__global__ void fwd_kernel_with_scratch(float *data, int stride) {
  float scratch[256];
  for (int i = 0; i < 256; ++i) scratch[(i * stride) & 255] = data[i];
  data[threadIdx.x] = scratch[(threadIdx.x * stride) & 255];
}
