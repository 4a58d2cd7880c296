#include "cases/case.h"

#include <stdio.h>

void tb_case_id(const struct tb_case *c, char *buf, size_t size) {
  snprintf(buf, size, "%s/%zux%zu/%s/%s%s%s", c->op->name, c->shape.m, c->shape.n,
           tb_view_name(c->view.kind), c->provider, c->planned ? "/" : "",
           c->planned ? tb_variant_name(c->variant) : "");
}
