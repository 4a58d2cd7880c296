/* Host tensors of a case: fp32 matrices or vectors with an explicit layout,
 * so strided input views are real (row stride > n, non-zero offset). */
#ifndef TB_INPUTS_TENSOR_H
#define TB_INPUTS_TENSOR_H

#include <stddef.h>

#include "cases/case.h"
#include "core/error.h"

struct tb_tensor {
  const char *role; /* "x", "a", "b", "weight", "bias", "out" */
  float *storage;   /* the whole allocation, padding included */
  size_t storage_elems;
  size_t offset;     /* element index of [0,0] inside storage */
  size_t rows, cols; /* logical shape */
  size_t row_stride; /* elements between row starts */
};

static inline float *tb_tensor_row(const struct tb_tensor *t, size_t row) {
  return t->storage + t->offset + row * t->row_stride;
}

#define TB_MAX_INPUTS 4

/* Everything a provider needs to run one case on the host side. */
struct tb_case_data {
  struct tb_case c;
  struct tb_tensor inputs[TB_MAX_INPUTS]; /* x (or a, b), then weight, bias */
  size_t input_count;
  struct tb_tensor output; /* packed: m x n, or m x 1 for sum */
};

/* Bytes of host memory a case needs (inputs, output and the fp64 oracle). */
double tb_case_host_bytes(const struct tb_case *c);

/* TB_ERR_INPUT, with sizes, when a case would not fit in host memory now. */
enum tb_status tb_case_fits_memory(const struct tb_case *c, struct tb_error *err);

/* Allocates and fills inputs from the seeded generator; output allocated and
 * poisoned. Refuses (TB_ERR_INPUT) a case that would not fit in memory. */
enum tb_status tb_case_data_create(const struct tb_case *c, unsigned long long seed,
                                   struct tb_case_data *out, struct tb_error *err);
void tb_case_data_free(struct tb_case_data *data);

/* Looks an input up by role; NULL when the case has no such input. */
const struct tb_tensor *tb_case_input(const struct tb_case_data *data, const char *role);

#endif
