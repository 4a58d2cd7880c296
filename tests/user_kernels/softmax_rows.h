/* The correct softmax every broken kernel of this folder starts from, so
 * each differs from a right one by exactly the fault it demonstrates. */
#ifndef TB_TEST_SOFTMAX_ROWS_H
#define TB_TEST_SOFTMAX_ROWS_H

#include <math.h>

#include <tilebench/kernel.h>

uint32_t tb_user_kernel_flags(void) {
  return TB_KERNEL_ACCEPTS_STRIDED_ROWS;
}

static void softmax_rows(const struct tb_kernel_args *a) {
  for (int64_t i = 0; i < a->m; ++i) {
    const float *x = a->x + i * a->row_stride;
    float *y = a->out + i * a->n;
    float max = x[0];
    for (int64_t j = 1; j < a->n; ++j) {
      max = x[j] > max ? x[j] : max;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < a->n; ++j) {
      y[j] = expf(x[j] - max);
      sum += y[j];
    }
    for (int64_t j = 0; j < a->n; ++j) {
      y[j] = (float)(y[j] / sum);
    }
  }
}

#endif
