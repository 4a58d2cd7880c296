#include "inputs/guard.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void tb_guard_fill(float *zone) {
  uint32_t bits = TB_GUARD_BITS;
  for (size_t i = 0; i < TB_GUARD_ELEMS; ++i) {
    memcpy(&zone[i], &bits, sizeof bits);
  }
}

long long tb_guard_first_damage(const float *zone) {
  for (size_t i = 0; i < TB_GUARD_ELEMS; ++i) {
    uint32_t bits;
    memcpy(&bits, &zone[i], sizeof bits);
    if (bits != TB_GUARD_BITS) {
      return (long long)i;
    }
  }
  return -1;
}

bool tb_guarded_alloc(struct tb_guarded *g, size_t count) {
  memset(g, 0, sizeof *g);
  g->base = calloc(count + 2 * (size_t)TB_GUARD_ELEMS, sizeof(float));
  if (g->base == NULL) {
    return false;
  }
  g->data = g->base + TB_GUARD_ELEMS;
  g->count = count;
  tb_guard_fill(g->base);
  tb_guard_fill(g->data + count);
  return true;
}

void tb_guarded_free(struct tb_guarded *g) {
  free(g->base);
  memset(g, 0, sizeof *g);
}

bool tb_guarded_intact(const struct tb_guarded *g, long long *offset) {
  long long before = tb_guard_first_damage(g->base);
  if (before >= 0) {
    *offset = before - (long long)TB_GUARD_ELEMS;
    return false;
  }
  long long after = tb_guard_first_damage(g->data + g->count);
  if (after >= 0) {
    *offset = (long long)g->count + after;
    return false;
  }
  *offset = 0;
  return true;
}

enum tb_status tb_guarded_read(const struct tb_guarded *g, float *dst, size_t count,
                               struct tb_error *err) {
  if (count != g->count) {
    return tb_fail(err, TB_ERR_RUN, "output has %zu elements, %zu were asked for", g->count, count);
  }
  memcpy(dst, g->data, count * sizeof(float));
  return TB_OK;
}

enum tb_status tb_guarded_write(struct tb_guarded *g, const float *src, size_t count,
                                struct tb_error *err) {
  if (count != g->count) {
    return tb_fail(err, TB_ERR_RUN, "a decoy of %zu elements for an output of %zu", count,
                   g->count);
  }
  memcpy(g->data, src, count * sizeof(float));
  return TB_OK;
}
