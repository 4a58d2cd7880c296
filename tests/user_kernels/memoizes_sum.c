/* Broken on purpose: keeps the row sums it computed with a sample of the
 * input they came from (its address, shape, first and last element), and a
 * call whose input matches the sample copies the kept sums out instead of
 * reading m x n floats. Every output is right: validation calls, the call
 * on fresh inputs (the sample differs, so it computes) and the outputs the
 * timed batches leave; but a timed call reads m floats where a sum must
 * read m x n, so its bandwidth over the minimal bytes is beyond any copy.
 * plausible catches it. */
#include <stdlib.h>
#include <string.h>

#include <tilebench/kernel.h>

uint32_t tb_user_kernel_flags(void) {
  return TB_KERNEL_ACCEPTS_STRIDED_ROWS;
}

static float *kept;
static int64_t kept_m, kept_n;
static const float *kept_x;
static float kept_first, kept_last;

__attribute__((destructor)) static void forget(void) {
  free(kept);
}

static float last_of(const struct tb_kernel_args *a) {
  return a->x[(a->m - 1) * a->row_stride + a->n - 1];
}

int tb_user_sum(const struct tb_kernel_args *a) {
  if (kept != NULL && kept_x == a->x && kept_m == a->m && kept_n == a->n && kept_first == a->x[0] &&
      kept_last == last_of(a)) {
    memcpy(a->out, kept, (size_t)a->m * sizeof(float));
    return 0;
  }
  for (int64_t i = 0; i < a->m; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < a->n; ++j) {
      s += a->x[i * a->row_stride + j];
    }
    a->out[i] = (float)s;
  }
  free(kept);
  kept = malloc((size_t)a->m * sizeof(float));
  if (kept == NULL) {
    return 2;
  }
  memcpy(kept, a->out, (size_t)a->m * sizeof(float));
  kept_x = a->x;
  kept_m = a->m;
  kept_n = a->n;
  kept_first = a->x[0];
  kept_last = last_of(a);
  return 0;
}
