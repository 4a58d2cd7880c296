#include "cases/case.h"

#include <stdio.h>

void tb_case_id(const struct tb_case *c, char *buf, size_t size) {
  char dims[64];
  tb_shape_format(c->shape, dims, sizeof dims);
  const char *suffix = c->op->is_matmul ? tb_realization_name(c->realization)
                       : c->planned     ? tb_variant_name(c->variant)
                                        : NULL;
  snprintf(buf, size, "%s/%s/%s/%s%s%s", c->op->name, dims, tb_view_name(c->view.kind), c->provider,
           suffix ? "/" : "", suffix ? suffix : "");
}
