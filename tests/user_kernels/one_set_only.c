/* Broken on purpose, for rotating buffer sets (the CUDA backend): computes
 * only into the first output it is given, that of buffer set 0, where every
 * validation call lands (poisoning rewinds the rotation to it), and returns
 * at once on every other set, so a timed batch over the sets costs 1/sets
 * of the work. Every validated call is right; the other sets' outputs, as
 * the timed calls left them, still hold the poison they were allocated
 * with: timed_outputs catches it. One case per load (the first output is
 * remembered for the library's lifetime); on the CPU backend, with one
 * output, it is correct. */
#include <stddef.h>

#include "softmax_rows.h"

int tb_user_softmax(const struct tb_kernel_args *a) {
  static const float *first;
  if (first == NULL) {
    first = a->out;
  }
  if (a->out != first) {
    return 0;
  }
  softmax_rows(a);
  return 0;
}
