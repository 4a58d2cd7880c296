/* Broken on purpose: a right output, and one element written just past its
 * end (an off-by-one bound). The guard zones catch it. */
#include "softmax_rows.h"

int tb_user_softmax(const struct tb_kernel_args *a) {
  softmax_rows(a);
  a->out[a->m * a->n] = 0.0f;
  return 0;
}
