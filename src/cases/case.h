/* One measured case: operation x shape x input view x provider. */
#ifndef TB_CASES_CASE_H
#define TB_CASES_CASE_H

#include <stdbool.h>

#include "cases/case_params.h"
#include "cases/ops.h"
#include "cases/shape.h"

struct tb_case {
  const struct tb_op_info *op;
  struct tb_shape shape;
  struct tb_view view;
  const char *provider;    /* "native", later "torch", ... */
  bool planned;            /* a native row reduction: the planner picks its mapping */
  enum tb_variant variant; /* which plan, when planned */
  const char *profile;     /* the planner's cost profile, when planned (NULL: analytic) */
  /* gemm: how the products are computed (every provider matches it) */
  enum tb_realization realization;
  struct tb_gemm_block gemm_block; /* --gemm-block, zeros for the planner's rule */
};

/* "softmax/37x769/packed/native/automatic"; no variant part when unplanned;
 * gemm ends in its realization: "gemm/64x64x64/packed/cublas/tensor". */
void tb_case_id(const struct tb_case *c, char *buf, size_t size);

#endif
