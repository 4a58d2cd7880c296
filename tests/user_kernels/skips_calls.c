/* Broken on purpose: does the work on every other call only, so a timed
 * batch of R calls costs R/2. Validating several calls, the output poisoned
 * before each, catches it. */
#include "softmax_rows.h"

int tb_user_softmax(const struct tb_kernel_args *a) {
  static unsigned long calls;
  if (calls++ % 2 == 1) {
    return 0;
  }
  softmax_rows(a);
  return 0;
}
