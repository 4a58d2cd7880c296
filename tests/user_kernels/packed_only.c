/* A right softmax that declares packed rows only (no flags function): its
 * strided cases are refused with the reason. Exports the ABI version. */
#include <math.h>

#include <tilebench/kernel.h>

uint32_t tb_user_kernel_abi_version(void) {
  return TB_KERNEL_ABI_VERSION;
}

int tb_user_softmax(const struct tb_kernel_args *a) {
  for (int64_t i = 0; i < a->m; ++i) {
    const float *x = a->x + i * a->n; /* assumes packed rows */
    float *y = a->out + i * a->n;
    float max = x[0];
    for (int64_t j = 1; j < a->n; ++j) {
      max = x[j] > max ? x[j] : max;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < a->n; ++j) {
      sum += y[j] = expf(x[j] - max);
    }
    for (int64_t j = 0; j < a->n; ++j) {
      y[j] = (float)(y[j] / sum);
    }
  }
  return 0;
}
