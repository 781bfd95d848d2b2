/* The public header compiles as strict C99 and one forward runs from C.
 * With seqlen_k = 1 every query sees one key, so out = v and
 * lse = scale * q.k: checkable by hand. Exit 77 (ctest: skipped) when the
 * CPU backend is not in this build. */
#include <math.h>
#include <stdio.h>

#include "fa2/fa2.h"

#define SEQLEN_Q 3
#define HEAD_DIM 32

int main(void) {
  float q[SEQLEN_Q * HEAD_DIM], k[HEAD_DIM], v[HEAD_DIM], out[SEQLEN_Q * HEAD_DIM];
  float lse[SEQLEN_Q];
  fa2_shape_t shape = {1, SEQLEN_Q, 1, 1, 1, HEAD_DIM};
  fa2_tensor_t tq = {0, FA2_DTYPE_F32, SEQLEN_Q * HEAD_DIM, HEAD_DIM, HEAD_DIM};
  fa2_tensor_t tk = {0, FA2_DTYPE_F32, HEAD_DIM, HEAD_DIM, HEAD_DIM};
  fa2_tensor_t tv, tout;
  fa2_options_t options = FA2_OPTIONS_INIT;
  fa2_handle_t handle = NULL;
  fa2_status_t status;
  int i, c, failures = 0;

  for (i = 0; i < SEQLEN_Q * HEAD_DIM; ++i) q[i] = (float)((i % 7) - 3) / 4.0f, out[i] = NAN;
  for (c = 0; c < HEAD_DIM; ++c) k[c] = (float)((c % 5) - 2) / 2.0f, v[c] = (float)c - 9.5f;
  for (i = 0; i < SEQLEN_Q; ++i) lse[i] = NAN;
  tq.data = q, tk.data = k;
  tv = tk, tv.data = v;
  tout = tq, tout.data = out;
  options.softmax_scale = 0.125f;

  status = fa2_create(&handle, FA2_BACKEND_CPU, 0);
  if (status == FA2_ERROR_BACKEND_NOT_BUILT) {
    printf("c_api_smoke: SKIPPED, the CPU backend is not built\n");
    return 77;
  }
  if (status != FA2_SUCCESS) {
    printf("c_api_smoke: fa2_create: %s\n", fa2_status_string(status));
    return 1;
  }
  status = fa2_fwd(handle, &shape, &tq, &tk, &tv, &tout, lse, &options, NULL, 0, NULL);
  if (status != FA2_SUCCESS) {
    printf("c_api_smoke: fa2_fwd: %s (%s)\n", fa2_status_string(status), fa2_last_error(handle));
    fa2_destroy(handle);
    return 1;
  }
  for (i = 0; i < SEQLEN_Q; ++i) {
    double dot = 0.0;
    for (c = 0; c < HEAD_DIM; ++c) {
      dot += (double)q[i * HEAD_DIM + c] * k[c];
      failures += fabs(out[i * HEAD_DIM + c] - v[c]) > 1e-5;
    }
    failures += fabs(lse[i] - 0.125 * dot) > 1e-4;
  }
  fa2_destroy(handle);
  printf("c_api_smoke: %s\n", failures == 0 ? "ok" : "WRONG values");
  return failures != 0;
}
