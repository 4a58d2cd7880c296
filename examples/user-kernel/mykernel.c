/* A user kernel library for `tilebench run --providers native,user --kernel`:
 * softmax and rmsnorm over the rows of an m x n fp32 matrix, on the host
 * (the CPU backend's contract: compute before returning). Any row stride is
 * accepted, so both input views are measured. */
#include <math.h>
#include <stddef.h>

#include <tilebench/kernel.h>

uint32_t tb_user_kernel_abi_version(void) {
  return TB_KERNEL_ABI_VERSION;
}

uint32_t tb_user_kernel_flags(void) {
  return TB_KERNEL_ACCEPTS_STRIDED_ROWS;
}

const char *tb_user_kernel_description(void) {
  return "example: two-pass softmax and rmsnorm in float, accumulated in double";
}

/* The ABI this file was compiled against must be the one tilebench passes. */
static int wrong_abi(const struct tb_kernel_args *a) {
  return a->abi_version != TB_KERNEL_ABI_VERSION || a->struct_size < sizeof *a;
}

int tb_user_softmax(const struct tb_kernel_args *a) {
  if (wrong_abi(a)) {
    return 1;
  }
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
    float inv = (float)(1.0 / sum);
    for (int64_t j = 0; j < a->n; ++j) {
      y[j] *= inv;
    }
  }
  return 0;
}

int tb_user_rmsnorm(const struct tb_kernel_args *a) {
  if (wrong_abi(a) || a->weight == NULL) {
    return 1;
  }
  for (int64_t i = 0; i < a->m; ++i) {
    const float *x = a->x + i * a->row_stride;
    float *y = a->out + i * a->n;
    double squares = 0.0;
    for (int64_t j = 0; j < a->n; ++j) {
      squares += (double)x[j] * x[j];
    }
    float scale = (float)(1.0 / sqrt(squares / (double)a->n + a->eps));
    for (int64_t j = 0; j < a->n; ++j) {
      y[j] = x[j] * scale * a->weight[j];
    }
  }
  return 0;
}
