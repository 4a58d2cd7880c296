#include "cases/shard.h"

#include <stdlib.h>
#include <string.h>

#include "core/numbers.h"

void tb_shard_units_free(struct tb_shard_unit *units, size_t count) {
  for (size_t u = 0; units != NULL && u < count; ++u) {
    for (size_t r = 0; r < units[u].record_count; ++r) {
      free(units[u].records[r]);
    }
    free(units[u].records);
  }
  free(units);
}

uint64_t tb_shard_cost(double minimal_bytes, size_t runs) {
  double bytes = minimal_bytes > 0 ? minimal_bytes : 0;
  if (bytes >= 4e18) { /* no such case fits in memory */
    return TB_SHARD_COST_MAX;
  }
  uint64_t per_run = (uint64_t)bytes + TB_SHARD_RECORD_OVERHEAD_BYTES;
  if (runs != 0 && per_run > TB_SHARD_COST_MAX / runs) {
    return TB_SHARD_COST_MAX;
  }
  return per_run * (uint64_t)runs;
}

uint64_t tb_shard_hash(const char *text) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  return h;
}

struct ranked {
  uint64_t cost, hash;
  const char *key;
  size_t unit;
};

/* Largest cost first; then the smaller hash, then the smaller key. */
static int by_rank(const void *a, const void *b) {
  const struct ranked *x = a, *y = b;
  if (x->cost != y->cost) {
    return x->cost > y->cost ? -1 : 1;
  }
  if (x->hash != y->hash) {
    return x->hash < y->hash ? -1 : 1;
  }
  int keys = strcmp(x->key, y->key);
  if (keys != 0) {
    return keys;
  }
  return x->unit < y->unit ? -1 : x->unit > y->unit;
}

enum tb_status tb_shard_assign(const struct tb_shard_unit *units, size_t count, unsigned shards,
                               unsigned *shard_of, struct tb_error *err) {
  if (shards == 0 || shards > TB_SHARD_MAX) {
    return tb_fail(err, TB_ERR_USAGE, "a campaign is dealt to 1 to %d shards, not %u", TB_SHARD_MAX,
                   shards);
  }
  if (shards > count) {
    return tb_fail(err, TB_ERR_USAGE,
                   "%u shards for a campaign of %zu case(s) (op/shape/view): a shard would have "
                   "nothing to measure; give at most %zu",
                   shards, count, count);
  }
  struct ranked *order = calloc(count, sizeof *order);
  uint64_t *load = calloc(shards, sizeof *load);
  if (order == NULL || load == NULL) {
    free(order);
    free(load);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory dealing the campaign to shards");
  }
  for (size_t u = 0; u < count; ++u) {
    order[u] = (struct ranked){units[u].cost, tb_shard_hash(units[u].key), units[u].key, u};
  }
  qsort(order, count, sizeof *order, by_rank);
  for (size_t i = 0; i < count; ++i) {
    unsigned least = 0;
    for (unsigned s = 1; s < shards; ++s) {
      least = load[s] < load[least] ? s : least;
    }
    shard_of[order[i].unit] = least;
    load[least] =
        UINT64_MAX - load[least] < order[i].cost ? UINT64_MAX : load[least] + order[i].cost;
  }
  free(order);
  free(load);
  return TB_OK;
}

enum tb_status tb_shard_parse(const char *text, unsigned *index, unsigned *count,
                              struct tb_error *err) {
  const char *slash = strchr(text, '/');
  char first[32];
  size_t len = slash != NULL ? (size_t)(slash - text) : 0;
  if (slash == NULL || len == 0 || len >= sizeof first) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--shard takes I/N (shard I of N, counted from 0), for example 0/4, not '%s'",
                   text);
  }
  memcpy(first, text, len);
  first[len] = '\0';
  unsigned long long i = 0, n = 0;
  if (tb_parse_size(slash + 1, "--shard's N", 1, TB_SHARD_MAX, &n, err) != TB_OK ||
      tb_parse_size(first, "--shard's I", 0, TB_SHARD_MAX - 1, &i, err) != TB_OK) {
    return err->status;
  }
  if (i >= n) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--shard %s: shards are counted from 0, so I must be below N (0 to %llu)", text,
                   n - 1);
  }
  *index = (unsigned)i;
  *count = (unsigned)n;
  return TB_OK;
}
