#include "oracle/oracle.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"

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

/* The oracle of one case, computed over ranges of its rows (one thread a
 * range: core/parallel.h); every element is computed by one thread in the
 * same order, so the result does not depend on how many threads there are. */
struct rows_job {
  void (*rows)(const struct rows_job *, size_t lo, size_t hi);
  enum tb_op op;
  const struct tb_tensor *a, *b, *weight, *bias;
  size_t m, n, k, out_cols;
  double *out;
};

/* out (m x n) = a (m x k) . b (k x n) in float64; each element sums its k
 * products in order p = 0..k-1. The loop runs over rows of b (contiguous)
 * so a 4096^3 oracle takes seconds. */
static void gemm_rows(const struct rows_job *j, size_t lo, size_t hi) {
  for (size_t i = lo; i < hi; ++i) {
    const float *ar = tb_tensor_row(j->a, i);
    double *row = j->out + i * j->n;
    memset(row, 0, j->n * sizeof *row);
    for (size_t p = 0; p < j->k; ++p) {
      const double x = ar[p];
      const float *br = tb_tensor_row(j->b, p);
      for (size_t c = 0; c < j->n; ++c) {
        row[c] += x * (double)br[c];
      }
    }
  }
}

static void op_rows(const struct rows_job *j, size_t lo, size_t hi) {
  for (size_t i = lo; i < hi; ++i) {
    const float *row = tb_tensor_row(j->a, i);
    double *out = j->out + i * j->out_cols;
    switch (j->op) {
    case TB_OP_SUM: row_sum(row, j->n, out); break;
    case TB_OP_SOFTMAX: row_softmax(row, j->n, out); break;
    case TB_OP_RMSNORM: row_rmsnorm(row, j->weight->storage, j->n, out); break;
    case TB_OP_LAYERNORM:
      row_layernorm(row, j->weight->storage, j->bias->storage, j->n, out);
      break;
    default: row_elementwise(j->op, row, tb_tensor_row(j->b, i), j->n, out); break;
    }
  }
}

static void rows_part(void *ctx, size_t k, size_t lo, size_t hi) {
  (void)k;
  const struct rows_job *j = ctx;
  j->rows(j, lo, hi);
}

static bool has_oracle(enum tb_op op) {
  switch (op) {
  case TB_OP_SUM:
  case TB_OP_SOFTMAX:
  case TB_OP_RMSNORM:
  case TB_OP_LAYERNORM:
  case TB_OP_ADD:
  case TB_OP_GELU_ADD:
  case TB_OP_GEMM: return true;
  default: return false;
  }
}

enum tb_status tb_oracle_compute(const struct tb_case_data *data, double **ref,
                                 struct tb_error *err) {
  const struct tb_case *c = &data->c;
  size_t m = c->shape.m, n = c->shape.n;
  size_t out_cols = c->op->output_is_vector ? 1 : n;
  if (!has_oracle(c->op->op)) {
    return tb_fail(err, TB_ERR_RUN, "no oracle for operation %s", c->op->name);
  }
  double *result = malloc(m * out_cols * sizeof(double));
  if (result == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for the float64 oracle of %zux%zu", m, n);
  }
  struct rows_job job = {
      .rows = c->op->is_matmul ? gemm_rows : op_rows,
      .op = c->op->op,
      .a = tb_case_input(data, c->op->has_second_matrix ? "a" : "x"),
      .b = tb_case_input(data, "b"),
      .weight = tb_case_input(data, "weight"),
      .bias = tb_case_input(data, "bias"),
      .m = m,
      .n = n,
      .k = c->shape.k,
      .out_cols = out_cols,
      .out = result,
  };
  /* the float64 exp and erf of a 268M-element case took seconds on one core */
  double per_element = c->op->is_matmul ? (double)c->shape.k : 4.0;
  tb_parallel_ranges(m, (double)m * (double)n * per_element, rows_part, &job);
  *ref = result;
  return TB_OK;
}
