#include "oracle/oracle.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Rows [first, m) step `stride` of out (m x n) = a (m x k) . b (k x n), in
 * float64; each element sums its k products in order p = 0..k-1. The loop
 * runs over rows of b (contiguous) so a 4096^3 oracle takes seconds. */
struct gemm_job {
  const struct tb_tensor *a, *b;
  size_t m, n, k, first, stride;
  double *out;
};

static void *gemm_rows(void *arg) {
  const struct gemm_job *j = arg;
  for (size_t i = j->first; i < j->m; i += j->stride) {
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
  return NULL;
}

/* The rows dealt over the machine's cores (the result does not depend on
 * how many: every element is computed by one thread in the same order). */
static void gemm(const struct tb_tensor *a, const struct tb_tensor *b, size_t m, size_t n, size_t k,
                 double *out) {
  enum { MAX_THREADS = 64 };
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  size_t threads = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (size_t)cores;
  if ((double)m * (double)n * (double)k < 1e7 || threads > m) {
    threads = 1; /* not worth a thread */
  }
  pthread_t ids[MAX_THREADS];
  struct gemm_job jobs[MAX_THREADS];
  bool running[MAX_THREADS] = {false};
  for (size_t t = 0; t < threads; ++t) {
    jobs[t] = (struct gemm_job){a, b, m, n, k, t, threads, out};
    running[t] = t > 0 && pthread_create(&ids[t], NULL, gemm_rows, &jobs[t]) == 0;
  }
  for (size_t t = 0; t < threads; ++t) {
    if (!running[t]) { /* job 0, or a thread that could not start: here */
      gemm_rows(&jobs[t]);
    }
  }
  for (size_t t = 1; t < threads; ++t) {
    if (running[t]) {
      pthread_join(ids[t], NULL);
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
