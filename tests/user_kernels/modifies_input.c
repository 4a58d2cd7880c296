/* Broken on purpose: computes in place in its input's first row before
 * copying it out (it casts the const away). The input hash catches it. */
#include <string.h>

#include "softmax_rows.h"

int tb_user_softmax(const struct tb_kernel_args *a) {
  softmax_rows(a);
  memcpy((float *)a->x, a->out, (size_t)a->n * sizeof(float));
  return 0;
}
