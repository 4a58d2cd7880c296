/* One measured case: operation x shape x input view x provider. */
#ifndef TB_CASES_CASE_H
#define TB_CASES_CASE_H

#include "cases/ops.h"
#include "cases/shape.h"

struct tb_case {
  const struct tb_op_info *op;
  struct tb_shape shape;
  struct tb_view view;
  const char *provider; /* "native", later "torch", ... */
};

/* "softmax/37x769/packed/native" */
void tb_case_id(const struct tb_case *c, char *buf, size_t size);

#endif
