#include "backends/cpu/cpu_kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Pairwise combination of lanes[0..count): halves until one value is left. */
static float combine_lanes(float *lanes, unsigned count) {
  while (count > 1) {
    unsigned half = count / 2;
    for (unsigned i = 0; i < half; ++i) {
      lanes[i] += lanes[count - 1 - i];
    }
    count -= half;
  }
  return lanes[0];
}

enum accumulate { ACC_VALUE, ACC_SQUARE, ACC_EXP };

/* Sum over the row of f(x[j] - shift), dealt to lanes in groups of 4. */
static float row_accumulate(const float *x, size_t n, float shift, enum accumulate f,
                            unsigned lanes, float *scratch) {
  memset(scratch, 0, lanes * sizeof *scratch);
  for (size_t j = 0; j < n; ++j) {
    float v = x[j] - shift;
    float term = f == ACC_VALUE ? v : f == ACC_SQUARE ? v * v : expf(v);
    scratch[(j / 4) % lanes] += term;
  }
  return combine_lanes(scratch, lanes);
}

static float row_max(const float *x, size_t n) {
  float mx = -INFINITY;
  for (size_t j = 0; j < n; ++j) {
    mx = fmaxf(mx, x[j]);
  }
  return mx;
}

static float gelu_exact_f32(float v) {
  return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

static void run_row(const struct tb_case_data *d, size_t i, unsigned lanes, float *scratch,
                    float *out) {
  size_t n = d->c.shape.n;
  const float *x = tb_tensor_row(&d->inputs[0], i);
  switch (d->c.op->op) {
  case TB_OP_SUM: out[0] = row_accumulate(x, n, 0.0f, ACC_VALUE, lanes, scratch); break;
  case TB_OP_SOFTMAX: {
    float mx = row_max(x, n);
    float inv = 1.0f / row_accumulate(x, n, mx, ACC_EXP, lanes, scratch);
    for (size_t j = 0; j < n; ++j) {
      out[j] = expf(x[j] - mx) * inv;
    }
    break;
  }
  case TB_OP_RMSNORM: {
    const float *w = d->inputs[1].storage;
    float mean_sq = row_accumulate(x, n, 0.0f, ACC_SQUARE, lanes, scratch) / (float)n;
    float inv = 1.0f / sqrtf(mean_sq + (float)TB_RMSNORM_EPS);
    for (size_t j = 0; j < n; ++j) {
      out[j] = x[j] * inv * w[j];
    }
    break;
  }
  case TB_OP_LAYERNORM: {
    const float *w = d->inputs[1].storage, *b = d->inputs[2].storage;
    float mean = row_accumulate(x, n, 0.0f, ACC_VALUE, lanes, scratch) / (float)n;
    /* two passes: no cancellation in the variance */
    float var = row_accumulate(x, n, mean, ACC_SQUARE, lanes, scratch) / (float)n;
    float inv = 1.0f / sqrtf(var + (float)TB_LAYERNORM_EPS);
    for (size_t j = 0; j < n; ++j) {
      out[j] = (x[j] - mean) * inv * w[j] + b[j];
    }
    break;
  }
  case TB_OP_ADD:
  case TB_OP_GELU_ADD: {
    const float *y = tb_tensor_row(&d->inputs[1], i);
    int gelu = d->c.op->op == TB_OP_GELU_ADD;
    for (size_t j = 0; j < n; ++j) {
      float s = x[j] + y[j];
      out[j] = gelu ? gelu_exact_f32(s) : s;
    }
    break;
  }
  default: break;
  }
}

float tb_round_tf32(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7F800000u) != 0x7F800000u) { /* finite: add half of the dropped ulp */
    bits = (bits + 0x1000u) & 0xFFFFE000u;
  }
  memcpy(&x, &bits, sizeof x);
  return x;
}

/* out = a . b with each dot product blocked over `lanes` partial sums. */
static void run_gemm(const struct tb_case_data *d, bool tf32, unsigned lanes, float *scratch,
                     float *out) {
  const struct tb_tensor *a = &d->inputs[0], *b = &d->inputs[1];
  size_t m = d->c.shape.m, n = d->c.shape.n, k = d->c.shape.k;
  for (size_t i = 0; i < m; ++i) {
    const float *ar = tb_tensor_row(a, i);
    for (size_t j = 0; j < n; ++j) {
      memset(scratch, 0, lanes * sizeof *scratch);
      for (size_t p = 0; p < k; ++p) {
        float x = ar[p], y = tb_tensor_row(b, p)[j];
        scratch[p % lanes] += tf32 ? tb_round_tf32(x) * tb_round_tf32(y) : x * y;
      }
      out[i * n + j] = combine_lanes(scratch, lanes);
    }
  }
}

void tb_cpu_run_case(const struct tb_case_data *d, enum tb_realization realization, unsigned lanes,
                     float *scratch, float *out) {
  if (d->c.op->is_matmul) {
    run_gemm(d, tb_realization_is_tf32(realization), lanes, scratch, out);
    return;
  }
  size_t out_cols = d->c.op->output_is_vector ? 1 : d->c.shape.n;
  for (size_t i = 0; i < d->c.shape.m; ++i) {
    run_row(d, i, lanes, scratch, out + i * out_cols);
  }
}
