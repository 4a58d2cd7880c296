/* Broken on purpose: computes when its output holds the poison (a
 * validation call) and on the next call after one (so the call on fresh
 * inputs, made over the last validated output, computes too), then returns
 * at once until it sees the poison again: a timed batch of R calls costs
 * next to nothing. Every validation call is right; the output the timed
 * batches leave is the decoy written over it before each, which
 * timed_outputs catches. */
#include <stdint.h>
#include <string.h>

#include "softmax_rows.h"

int tb_user_softmax(const struct tb_kernel_args *a) {
  static unsigned long since_poison;
  uint32_t bits;
  memcpy(&bits, a->out, sizeof bits);
  if (bits == 0x7FC0DEADu) { /* TB_POISON_BITS, docs/method.md §2.4 */
    since_poison = 0;
  }
  if (since_poison++ >= 2) {
    return 0;
  }
  softmax_rows(a);
  return 0;
}
