#include "backends/cpu/cpu_kernels.h"

#include <math.h>

/* Combines the lanes pairwise: ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). */
static float combine_lanes(float lanes[TB_CPU_LANES]) {
  for (int width = TB_CPU_LANES / 2; width >= 1; width /= 2) {
    for (int i = 0; i < width; ++i) {
      lanes[i] += lanes[i + width];
    }
  }
  return lanes[0];
}

/* Sum of f(x[j]) over a row with TB_CPU_LANES interleaved accumulators. */
#define TB_DEFINE_ROW_ACCUMULATOR(fn_name, expr)                                                  \
  static float fn_name(const float *x, size_t n, float shift) {                                    \
    float lanes[TB_CPU_LANES] = {0};                                                               \
    for (size_t j = 0; j < n; ++j) {                                                               \
      float v = x[j] - shift;                                                                      \
      lanes[j % TB_CPU_LANES] += (expr);                                                           \
    }                                                                                              \
    return combine_lanes(lanes);                                                                   \
  }

TB_DEFINE_ROW_ACCUMULATOR(row_sum, v)
TB_DEFINE_ROW_ACCUMULATOR(row_sum_squares, v *v)
TB_DEFINE_ROW_ACCUMULATOR(row_sum_exp, expf(v))

static float row_max(const float *x, size_t n) {
  float mx = -INFINITY;
  for (size_t j = 0; j < n; ++j) {
    mx = fmaxf(mx, x[j]);
  }
  return mx;
}

static float gelu_exact_f32(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

static void run_row(const struct tb_case_data *d, size_t i, float *out) {
  size_t n = d->c.shape.n;
  const struct tb_tensor *x0 = &d->inputs[0];
  const float *x = tb_tensor_row(x0, i);
  switch (d->c.op->op) {
  case TB_OP_SUM:
    out[0] = row_sum(x, n, 0.0f);
    break;
  case TB_OP_SOFTMAX: {
    float mx = row_max(x, n);
    float inv = 1.0f / row_sum_exp(x, n, mx);
    for (size_t j = 0; j < n; ++j) {
      out[j] = expf(x[j] - mx) * inv;
    }
    break;
  }
  case TB_OP_RMSNORM: {
    const float *w = d->inputs[1].storage;
    float inv = 1.0f / sqrtf(row_sum_squares(x, n, 0.0f) / (float)n + (float)TB_RMSNORM_EPS);
    for (size_t j = 0; j < n; ++j) {
      out[j] = x[j] * inv * w[j];
    }
    break;
  }
  case TB_OP_LAYERNORM: {
    const float *w = d->inputs[1].storage, *b = d->inputs[2].storage;
    float mean = row_sum(x, n, 0.0f) / (float)n;
    float var = row_sum_squares(x, n, mean) / (float)n; /* two-pass: no cancellation */
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
  default:
    break;
  }
}

void tb_cpu_run_case(const struct tb_case_data *d, float *out) {
  size_t out_cols = d->c.op->output_is_vector ? 1 : d->c.shape.n;
  for (size_t i = 0; i < d->c.shape.m; ++i) {
    run_row(d, i, out + i * out_cols);
  }
}
