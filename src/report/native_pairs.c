#include "report/native_pairs.h"

#include <stdbool.h>
#include <string.h>

#include "report/format.h"

static bool same_text(const char *a, const char *b) {
  return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* gemm's realization: both records without it, or both with the same (so
 * precisions are never mixed); a key that is not text compares as null. */
static bool same_realization(const struct tb_model_case *a, const struct tb_model_case *b) {
  if (a->has_realization != b->has_realization) {
    return false;
  }
  if (a->realization == NULL || b->realization == NULL) {
    return a->realization == b->realization;
  }
  return strcmp(a->realization, b->realization) == 0;
}

/* The same computation: op, shape (k too), input view and, for gemm, the
 * realization. */
static bool same_computation(const struct tb_model_case *a, const struct tb_model_case *b) {
  return strcmp(a->op, b->op) == 0 && a->m == b->m && a->n == b->n && a->has_k == b->has_k &&
         a->k == b->k && same_realization(a, b) && same_text(a->view_kind, b->view_kind);
}

static bool is_framework(const char *provider) {
  return strncmp(provider, "torch", 5) == 0 || strcmp(provider, "cublas") == 0;
}

/* A plain run's native record of the planner's own pick (or unplanned). */
static bool is_native_automatic(const struct tb_model_case *c) {
  return strcmp(c->provider, "native") == 0 && !c->has_round &&
         (c->variant == NULL || strcmp(c->variant, "automatic") == 0);
}

size_t tb_native_pairs(const struct tb_results_model *m, struct tb_native_pair *pairs,
                       size_t most) {
  size_t count = 0;
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *n = &m->cases[i];
    if (!is_native_automatic(n)) {
      continue;
    }
    for (size_t j = 0; j < m->case_count; ++j) {
      const struct tb_model_case *t = &m->cases[j];
      if (is_framework(t->provider) && !t->has_round && !tb_provider_unavailable(t) &&
          same_computation(n, t) && count < most) {
        pairs[count++] = (struct tb_native_pair){n, t};
      }
    }
  }
  return count;
}
