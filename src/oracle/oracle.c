#include "oracle/oracle.h"

#include <math.h>
#include <stdlib.h>

double tb_gelu_exact(double x) {
  return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

static void row_sum(const float *x, size_t n, double *out) {
  double s = 0.0;
  for (size_t j = 0; j < n; ++j) {
    s += x[j];
  }
  *out = s;
}

static void row_softmax(const float *x, size_t n, double *out) {
  double mx = -INFINITY, s = 0.0;
  for (size_t j = 0; j < n; ++j) {
    mx = fmax(mx, (double)x[j]);
  }
  for (size_t j = 0; j < n; ++j) {
    out[j] = exp((double)x[j] - mx);
    s += out[j];
  }
  for (size_t j = 0; j < n; ++j) {
    out[j] /= s;
  }
}

static void row_rmsnorm(const float *x, const float *w, size_t n, double *out) {
  double sq = 0.0;
  for (size_t j = 0; j < n; ++j) {
    sq += (double)x[j] * (double)x[j];
  }
  double inv = 1.0 / sqrt(sq / (double)n + TB_RMSNORM_EPS);
  for (size_t j = 0; j < n; ++j) {
    out[j] = (double)x[j] * inv * (double)w[j];
  }
}

static void row_layernorm(const float *x, const float *w, const float *b, size_t n, double *out) {
  double mean = 0.0, var = 0.0;
  for (size_t j = 0; j < n; ++j) {
    mean += x[j];
  }
  mean /= (double)n;
  for (size_t j = 0; j < n; ++j) { /* two-pass: exact enough to be the oracle */
    double d = (double)x[j] - mean;
    var += d * d;
  }
  double inv = 1.0 / sqrt(var / (double)n + TB_LAYERNORM_EPS);
  for (size_t j = 0; j < n; ++j) {
    out[j] = ((double)x[j] - mean) * inv * (double)w[j] + (double)b[j];
  }
}

static void row_elementwise(enum tb_op op, const float *a, const float *b, size_t n, double *out) {
  for (size_t j = 0; j < n; ++j) {
    double s = (double)a[j] + (double)b[j];
    out[j] = op == TB_OP_GELU_ADD ? tb_gelu_exact(s) : s;
  }
}

/* out (m x n) = a (m x k) . b (k x n), in float64. */
static void gemm(const struct tb_tensor *a, const struct tb_tensor *b, size_t m, size_t n, size_t k,
                 double *out) {
  for (size_t i = 0; i < m; ++i) {
    const float *ar = tb_tensor_row(a, i);
    for (size_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (size_t p = 0; p < k; ++p) {
        s += (double)ar[p] * (double)tb_tensor_row(b, p)[j];
      }
      out[i * n + j] = s;
    }
  }
}

enum tb_status tb_oracle_compute(const struct tb_case_data *data, double **ref,
                                 struct tb_error *err) {
  const struct tb_case *c = &data->c;
  size_t m = c->shape.m, n = c->shape.n;
  size_t out_cols = c->op->output_is_vector ? 1 : n;
  double *result = malloc(m * out_cols * sizeof(double));
  if (result == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for the float64 oracle of %zux%zu", m, n);
  }
  const struct tb_tensor *x = tb_case_input(data, c->op->has_second_matrix ? "a" : "x");
  const struct tb_tensor *y = tb_case_input(data, "b");
  const struct tb_tensor *w = tb_case_input(data, "weight");
  const struct tb_tensor *bias = tb_case_input(data, "bias");
  if (c->op->is_matmul) {
    gemm(x, y, m, n, c->shape.k, result);
    *ref = result;
    return TB_OK;
  }
  for (size_t i = 0; i < m; ++i) {
    const float *row = tb_tensor_row(x, i);
    double *out = result + i * out_cols;
    switch (c->op->op) {
    case TB_OP_SUM: row_sum(row, n, out); break;
    case TB_OP_SOFTMAX: row_softmax(row, n, out); break;
    case TB_OP_RMSNORM: row_rmsnorm(row, w->storage, n, out); break;
    case TB_OP_LAYERNORM: row_layernorm(row, w->storage, bias->storage, n, out); break;
    case TB_OP_ADD:
    case TB_OP_GELU_ADD: row_elementwise(c->op->op, row, tb_tensor_row(y, i), n, out); break;
    default:
      free(result);
      return tb_fail(err, TB_ERR_RUN, "no oracle for operation %s", c->op->name);
    }
  }
  *ref = result;
  return TB_OK;
}
