/* Broken on purpose (GPU-only class "zero kernels"): a correct softmax that
 * launches nothing on the GPU. Each call copies the input to the host,
 * computes there (tests/user_kernels/softmax_rows.h, the CPU kernels' correct
 * softmax) and copies the output back, synchronously, so every output is
 * right. The probe sees no kernel (TB_TIMING_E_EMPTY): the defence
 * launches_on_stream must make the case invalid. Built with
 * -I tests/user_kernels. */
#include <cuda_runtime.h>
#include <stdlib.h>

#include "softmax_rows.h"

extern "C" int tb_user_softmax(const struct tb_kernel_args *a) {
  size_t in = (size_t)((a->m - 1) * a->row_stride + a->n), out = (size_t)(a->m * a->n);
  float *x = (float *)malloc(in * sizeof *x), *y = (float *)malloc(out * sizeof *y);
  int rc = x == NULL || y == NULL ? 3 : 0;
  if (rc == 0 && cudaMemcpy(x, a->x, in * sizeof *x, cudaMemcpyDeviceToHost) != cudaSuccess) {
    rc = 4;
  }
  if (rc == 0) {
    struct tb_kernel_args host = *a;
    host.x = x;
    host.out = y;
    softmax_rows(&host);
    rc = cudaMemcpy(a->out, y, out * sizeof *y, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : 5;
  }
  free(x);
  free(y);
  return rc;
}
