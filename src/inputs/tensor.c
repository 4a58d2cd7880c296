#include "inputs/tensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/sysmem.h"
#include "inputs/generator.h"
#include "inputs/poison.h"

/* Share of available memory a single case may take; the rest is headroom
 * for the process, the oracle's scratch and other programs. */
#define TB_MEMORY_SHARE 0.7

static size_t matrix_storage_elems(const struct tb_view *view, size_t m, size_t n) {
  return view->offset + (m - 1) * view->row_stride + n;
}

/* One input of a case: its role, logical shape and whether the case's input
 * view (stride, offset) applies to it (matrices) or it is packed (vectors). */
struct tensor_spec {
  const char *role;
  size_t rows, cols;
  bool viewed;
};

/* The inputs of a case in order: x (or a, b), then weight and bias. A gemm's
 * a is m x k and b is k x n; every other matrix is m x n. */
static size_t case_tensor_specs(const struct tb_case *c, struct tensor_spec specs[TB_MAX_INPUTS]) {
  size_t m = c->shape.m, n = c->shape.n, k = c->shape.k, count = 0;
  if (c->op->is_matmul) {
    specs[count++] = (struct tensor_spec){"a", m, k, true};
    specs[count++] = (struct tensor_spec){"b", k, n, true};
  } else if (c->op->has_second_matrix) {
    specs[count++] = (struct tensor_spec){"a", m, n, true};
    specs[count++] = (struct tensor_spec){"b", m, n, true};
  } else {
    specs[count++] = (struct tensor_spec){"x", m, n, true};
  }
  if (c->op->has_weight) {
    specs[count++] = (struct tensor_spec){"weight", 1, n, false};
  }
  if (c->op->has_bias) {
    specs[count++] = (struct tensor_spec){"bias", 1, n, false};
  }
  return count;
}

double tb_case_host_bytes(const struct tb_case *c) {
  struct tensor_spec specs[TB_MAX_INPUTS];
  size_t count = case_tensor_specs(c, specs);
  double in_elems = 0.0;
  for (size_t i = 0; i < count; ++i) {
    double rows = (double)specs[i].rows, cols = (double)specs[i].cols;
    struct tb_view view = tb_view_for(c->view.kind, specs[i].cols);
    in_elems += specs[i].viewed ? (double)view.offset + (rows - 1) * (double)view.row_stride + cols
                                : rows * cols;
  }
  double m = (double)c->shape.m, n = (double)c->shape.n;
  double out_elems = c->op->output_is_vector ? m : m * n;
  return in_elems * 4.0 + out_elems * 4.0 /* output */ + out_elems * 8.0 /* fp64 oracle */;
}

struct fill_job {
  struct tb_tensor *t;
  uint64_t stream;
  float lo, hi;
};

static void nan_part(void *ctx, size_t k, size_t first, size_t end) {
  const struct fill_job *job = ctx;
  for (size_t i = first; i < end; ++i) {
    job->t->storage[i] = nanf("");
  }
}

static void rows_part(void *ctx, size_t k, size_t first, size_t end) {
  const struct fill_job *job = ctx;
  for (size_t r = first; r < end; ++r) {
    float *row = tb_tensor_row(job->t, r);
    for (size_t j = 0; j < job->t->cols; ++j) {
      row[j] = tb_generator_uniform(job->stream, (uint64_t)r * job->t->cols + j, job->lo, job->hi);
    }
  }
}

/* Fills padding with NaN (reads of it poison results) and logical elements
 * with generator values indexed by their logical position. Each value is a
 * function of its index alone, so the rows are filled in parallel (seconds on
 * one core at 268M elements, twice a case with the fresh-inputs defence). */
static void fill_tensor(struct tb_tensor *t, unsigned long long seed, size_t m, size_t n) {
  struct fill_job job = {.t = t, .stream = tb_generator_stream(seed, t->role, m, n)};
  tb_generator_range(t->role, &job.lo, &job.hi);
  tb_parallel_ranges(t->storage_elems, (double)t->storage_elems, nan_part, &job);
  tb_parallel_ranges(t->rows, 10.0 * (double)t->rows * (double)t->cols, rows_part, &job);
}

static enum tb_status alloc_tensor(struct tb_tensor *t, const char *role, size_t rows, size_t cols,
                                   const struct tb_view *view, struct tb_error *err) {
  t->role = role;
  t->rows = rows;
  t->cols = cols;
  t->row_stride = view ? view->row_stride : cols;
  t->offset = view ? view->offset : 0;
  t->storage_elems = view ? matrix_storage_elems(view, rows, cols) : rows * cols;
  t->storage = malloc(t->storage_elems * sizeof(float));
  if (t->storage == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory allocating %zux%zu tensor '%s'", rows, cols,
                   role);
  }
  return TB_OK;
}

enum tb_status tb_case_fits_memory(const struct tb_case *c, struct tb_error *err) {
  double need = tb_case_host_bytes(c), have = tb_available_memory_bytes();
  if (need > TB_MEMORY_SHARE * have) {
    char dims[64];
    tb_shape_format(c->shape, dims, sizeof dims);
    return tb_fail(err, TB_ERR_INPUT,
                   "shape %s for %s needs %.3g GB of host memory but only %.3g GB is available; "
                   "choose a smaller shape",
                   dims, c->op->name, need / 1e9, have / 1e9);
  }
  return TB_OK;
}

enum tb_status tb_case_data_create(const struct tb_case *c, unsigned long long seed,
                                   struct tb_case_data *out, struct tb_error *err) {
  memset(out, 0, sizeof *out);
  out->c = *c;
  if (tb_case_fits_memory(c, err) != TB_OK) {
    return err->status;
  }
  size_t m = c->shape.m, n = c->shape.n;
  struct tensor_spec specs[TB_MAX_INPUTS];
  size_t count = case_tensor_specs(c, specs);
  for (size_t i = 0; i < count; ++i) {
    struct tb_tensor *t = &out->inputs[i];
    struct tb_view view = tb_view_for(c->view.kind, specs[i].cols);
    if (alloc_tensor(t, specs[i].role, specs[i].rows, specs[i].cols, specs[i].viewed ? &view : NULL,
                     err) != TB_OK) {
      tb_case_data_free(out);
      return err->status;
    }
    out->input_count = i + 1;
    fill_tensor(t, seed, m, n);
  }
  size_t out_cols = c->op->output_is_vector ? 1 : n;
  if (alloc_tensor(&out->output, "out", m, out_cols, NULL, err) != TB_OK) {
    tb_case_data_free(out);
    return err->status;
  }
  tb_poison(out->output.storage, out->output.storage_elems);
  return TB_OK;
}

void tb_case_data_free(struct tb_case_data *data) {
  for (size_t i = 0; i < data->input_count; ++i) {
    free(data->inputs[i].storage);
  }
  free(data->output.storage);
  memset(data, 0, sizeof *data);
}

const struct tb_tensor *tb_case_input(const struct tb_case_data *data, const char *role) {
  for (size_t i = 0; i < data->input_count; ++i) {
    if (strcmp(data->inputs[i].role, role) == 0) {
      return &data->inputs[i];
    }
  }
  return NULL;
}
