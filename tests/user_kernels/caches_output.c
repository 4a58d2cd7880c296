/* Broken on purpose: computes once, keeps the result and copies it out on
 * every later call of the same shape, whatever the inputs. Validation on
 * inputs of another seed catches it. */
#include <stdlib.h>
#include <string.h>

#include "softmax_rows.h"

static float *kept;
static int64_t kept_m, kept_n;

/* freed when the library is unloaded, so a leak checker sees no leak */
__attribute__((destructor)) static void forget(void) {
  free(kept);
}

int tb_user_softmax(const struct tb_kernel_args *a) {
  size_t bytes = (size_t)(a->m * a->n) * sizeof(float);
  if (kept != NULL && kept_m == a->m && kept_n == a->n) {
    memcpy(a->out, kept, bytes);
    return 0;
  }
  softmax_rows(a);
  free(kept);
  kept = malloc(bytes);
  if (kept == NULL) {
    return 2;
  }
  memcpy(kept, a->out, bytes);
  kept_m = a->m;
  kept_n = a->n;
  return 0;
}
