/* Broken on purpose: skips the work when the output already holds finite
 * values, returning the output buffer's previous contents (a "result is
 * still there" shortcut). Poisoned outputs make it compute, so only the call
 * on other inputs over the last output catches it. */
#include "softmax_rows.h"

int tb_user_softmax(const struct tb_kernel_args *a) {
  if (isfinite(a->out[0]) && isfinite(a->out[a->m * a->n - 1])) {
    return 0;
  }
  softmax_rows(a);
  return 0;
}
