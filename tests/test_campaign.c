/* The campaign's one walk over its axes (measure/campaign.h): ops x shapes x
 * views x (variants | realizations | one) x providers, in the order a run
 * measures them, and everything derived from it. */
#include <stdlib.h>
#include <string.h>

#include "cases/shard.h"
#include "measure/campaign.h"
#include "stats/case_key.h"
#include "test_support.h"

static char native[] = "native", torch[] = "torch";
static char *two_providers[] = {native, torch};

/* sum and add on 4x8, gemm on 2x3x4; both views; two variants, two
 * realizations; native and torch. */
static void small_campaign(struct tb_campaign *c, struct tb_shape *shapes) {
  struct tb_error err = {0};
  memset(c, 0, sizeof *c);
  c->ops[0] = tb_op_by_name("sum");
  c->ops[1] = tb_op_by_name("add");
  c->ops[2] = tb_op_by_name("gemm");
  c->op_count = 3;
  assert_int_equal(tb_shape_parse("4x8", &shapes[0], &err), TB_OK);
  assert_int_equal(tb_shape_parse("2x3x4", &shapes[1], &err), TB_OK);
  c->shapes = shapes;
  c->shape_count = 2;
  c->views[0] = TB_VIEW_PACKED;
  c->views[1] = TB_VIEW_STRIDED;
  c->view_count = 2;
  c->variants[0] = TB_VARIANT_REFERENCE;
  c->variants[1] = TB_VARIANT_CANDIDATE;
  c->variant_count = 2;
  c->realizations[0] = TB_REALIZATION_SIMT;
  c->realizations[1] = TB_REALIZATION_TENSOR;
  c->realization_count = 2;
  c->providers = two_providers;
  c->provider_count = 2;
  c->round = -1;
}

/* The ids of every run, in the walk's order, "|"-joined. */
static void walk_ids(const struct tb_campaign *c, bool alternate, char *out, size_t size) {
  struct tb_campaign_cursor cur;
  tb_campaign_cursor_start(&cur, alternate);
  out[0] = '\0';
  while (tb_campaign_next_case(c, &cur)) {
    while (tb_campaign_next_run(c, &cur)) {
      struct tb_case k = tb_campaign_run_case(c, &cur);
      char id[160];
      tb_case_id(&k, id, sizeof id);
      strncat(out, id, size - strlen(out) - 1);
      strncat(out, "|", size - strlen(out) - 1);
    }
  }
}

static void walks_every_axis_once(void **state) {
  struct tb_campaign c;
  struct tb_shape shapes[2];
  small_campaign(&c, shapes);
  char ids[4096];
  walk_ids(&c, false, ids, sizeof ids);
  assert_string_equal(ids, "sum/4x8/packed/native/reference|sum/4x8/packed/native/candidate|"
                           "sum/4x8/packed/torch|"
                           "sum/4x8/strided/native/reference|sum/4x8/strided/native/candidate|"
                           "sum/4x8/strided/torch|"
                           "add/4x8/packed/native|add/4x8/packed/torch|"
                           "add/4x8/strided/native|add/4x8/strided/torch|"
                           "gemm/2x3x4/packed/native/simt|gemm/2x3x4/packed/native/tensor|"
                           "gemm/2x3x4/packed/torch/simt|gemm/2x3x4/packed/torch/tensor|"
                           "gemm/2x3x4/strided/native/simt|gemm/2x3x4/strided/native/tensor|"
                           "gemm/2x3x4/strided/torch/simt|gemm/2x3x4/strided/torch/tensor|");
  assert_int_equal(tb_campaign_case_count(&c), 18);
}

/* Fixed candidates sSpP are variants like the named ones: one run each, the
 * name ending the case id. */
static void fixed_candidates_are_variants(void **state) {
  struct tb_campaign c;
  struct tb_shape shapes[2];
  small_campaign(&c, shapes);
  c.op_count = 1; /* sum */
  c.shape_count = 1;
  c.view_count = 1;
  c.provider_count = 1;
  c.variants[0] = TB_VARIANT_AUTOMATIC;
  c.variants[1] = tb_variant_fixed(4, 2);
  c.variants[2] = tb_variant_fixed(1, 8);
  c.variant_count = 3;
  char ids[1024];
  walk_ids(&c, false, ids, sizeof ids);
  assert_string_equal(ids, "sum/4x8/packed/native/automatic|sum/4x8/packed/native/s4p2|"
                           "sum/4x8/packed/native/reference|");
  c.variant_count = 2;
  assert_int_equal(tb_campaign_variant_at(&c, 1, 0), tb_variant_fixed(4, 2));
  assert_int_equal(tb_campaign_variant_at(&c, 1, 1), TB_VARIANT_AUTOMATIC);
}

/* Named fields: a gemm run has a realization and no variant, a planned
 * reduction a variant; the position counts the provider's runs of the case. */
static void variant_and_realization_are_apart(void **state) {
  struct tb_campaign c;
  struct tb_shape shapes[2];
  small_campaign(&c, shapes);
  struct tb_campaign_cursor cur;
  tb_campaign_cursor_start(&cur, false);
  assert_true(tb_campaign_next_case(&c, &cur)); /* sum 4x8 packed */
  assert_true(tb_campaign_next_run(&c, &cur));
  assert_true(cur.planned);
  assert_int_equal(cur.variant, TB_VARIANT_REFERENCE);
  assert_int_equal(cur.realization, TB_REALIZATION_SIMT);
  assert_true(tb_campaign_next_run(&c, &cur));
  assert_int_equal(cur.variant, TB_VARIANT_CANDIDATE);
  assert_int_equal(cur.position, 1);
  assert_true(tb_campaign_next_run(&c, &cur)); /* torch does not plan */
  assert_false(cur.planned);
  assert_int_equal(cur.variant, TB_VARIANT_AUTOMATIC);
  assert_int_equal(cur.position, 0);
  assert_int_equal(cur.provider, 1);
  assert_false(tb_campaign_next_run(&c, &cur));
  for (int i = 0; i < 4; ++i) { /* to gemm 2x3x4 packed */
    assert_true(tb_campaign_next_case(&c, &cur));
  }
  assert_int_equal(cur.case_index, 4);
  assert_true(cur.base.op->is_matmul);
  assert_true(tb_campaign_next_run(&c, &cur));
  assert_true(tb_campaign_next_run(&c, &cur));
  assert_false(cur.planned);
  assert_int_equal(cur.variant, TB_VARIANT_AUTOMATIC);
  assert_int_equal(cur.realization, TB_REALIZATION_TENSOR);
  assert_int_equal(cur.position, 1);
}

/* The run's order: providers alternate case by case (and round by round);
 * a replay's odd rounds measure the variants in reverse. */
static void orders_alternate(void **state) {
  struct tb_campaign c;
  struct tb_shape shapes[2];
  small_campaign(&c, shapes);
  struct tb_campaign_cursor cur;
  tb_campaign_cursor_start(&cur, true);
  assert_true(tb_campaign_next_case(&c, &cur));
  assert_true(tb_campaign_next_run(&c, &cur));
  assert_int_equal(cur.provider, 0); /* case 0: native first */
  assert_true(tb_campaign_next_case(&c, &cur));
  assert_true(tb_campaign_next_run(&c, &cur));
  assert_int_equal(cur.slot, 0);
  assert_int_equal(cur.provider, 1); /* case 1: torch first */
  c.round = 1;                       /* and in round 1 the other way round */
  tb_campaign_cursor_start(&cur, true);
  assert_true(tb_campaign_next_case(&c, &cur));
  assert_true(tb_campaign_next_run(&c, &cur));
  assert_int_equal(cur.provider, 1);
  assert_true(tb_campaign_next_run(&c, &cur));
  assert_int_equal(cur.provider, 0);
  assert_int_equal(cur.variant, TB_VARIANT_CANDIDATE); /* odd round: candidate first */
  assert_int_equal(tb_campaign_variant_at(&c, 1, 0), TB_VARIANT_CANDIDATE);
  assert_int_equal(tb_campaign_variant_at(&c, 2, 0), TB_VARIANT_REFERENCE);
  assert_int_equal(tb_campaign_variant_at(&c, -1, 1), TB_VARIANT_CANDIDATE);
}

/* The pairs the walk leaves out, with the same reasons, op by op. */
static void skipped_pairs_and_replays(void **state) {
  struct tb_campaign c;
  struct tb_shape shapes[2];
  small_campaign(&c, shapes);
  struct tb_skipped_pair pairs[6];
  assert_int_equal(tb_campaign_skipped_pairs(&c, pairs), 3);
  assert_string_equal(pairs[0].op, "sum");
  assert_string_equal(pairs[0].shape, "2x3x4");
  assert_string_equal(pairs[0].reason, "this operation takes MxN shapes");
  assert_string_equal(pairs[2].op, "gemm");
  assert_string_equal(pairs[2].shape, "4x8");
  assert_string_equal(pairs[2].reason, "gemm takes MxNxK shapes");
  c.reductions_only = true; /* a replay: row reductions only */
  assert_int_equal(tb_campaign_case_count(&c), 6);
  char ids[4096];
  walk_ids(&c, false, ids, sizeof ids);
  assert_null(strstr(ids, "add/"));
  assert_null(strstr(ids, "gemm/"));
}

/* The rule of cases/shard.h: largest cost first to the least loaded shard,
 * ties broken by the key's hash; deterministic and balanced. */
static void shards_are_dealt_by_cost(void **state) {
  struct tb_shard_unit units[5];
  static const uint64_t costs[5] = {10, 70, 30, 30, 20};
  memset(units, 0, sizeof units);
  for (int u = 0; u < 5; ++u) {
    snprintf(units[u].key, sizeof units[u].key, "add/%dx8/packed", u + 1);
    units[u].cost = costs[u];
  }
  unsigned shard_of[5], again[5];
  struct tb_error err = {0};
  assert_int_equal(tb_shard_assign(units, 5, 2, shard_of, &err), TB_OK);
  assert_int_equal(tb_shard_assign(units, 5, 2, again, &err), TB_OK);
  assert_memory_equal(shard_of, again, sizeof shard_of);
  uint64_t load[2] = {0, 0};
  for (int u = 0; u < 5; ++u) {
    load[shard_of[u]] += costs[u];
  }
  /* 70 to shard 0, 30, 30 and 20 to shard 1 (the lighter each time), then 10 to shard 0 */
  assert_int_equal(shard_of[1], 0);
  assert_true(shard_of[2] == 1 && shard_of[3] == 1 && shard_of[4] == 1 && shard_of[0] == 0);
  assert_true(load[0] == 80 && load[1] == 80);
  /* one shard: everything in it */
  assert_int_equal(tb_shard_assign(units, 5, 1, shard_of, &err), TB_OK);
  for (int u = 0; u < 5; ++u) {
    assert_int_equal(shard_of[u], 0);
  }
  /* equal costs: two and two and one, whatever the keys */
  for (int u = 0; u < 5; ++u) {
    units[u].cost = 7;
  }
  assert_int_equal(tb_shard_assign(units, 5, 3, shard_of, &err), TB_OK);
  unsigned per[3] = {0, 0, 0};
  for (int u = 0; u < 5; ++u) {
    per[shard_of[u]]++;
  }
  assert_true(per[0] == 2 && per[1] == 2 && per[2] == 1);
  /* more shards than units, none at all, too many: refused */
  assert_int_equal(tb_shard_assign(units, 5, 6, shard_of, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "nothing to measure"));
  tb_error_clear(&err);
  assert_int_equal(tb_shard_assign(units, 5, 0, shard_of, &err), TB_ERR_USAGE);
  tb_error_clear(&err);
  assert_int_equal(tb_shard_assign(units, 5, TB_SHARD_MAX + 1, shard_of, &err), TB_ERR_USAGE);
  /* the FNV-1a of the audit's own implementation (tools/audit) */
  assert_true(tb_shard_hash("") == 14695981039346656037ull);
  assert_true(tb_shard_hash("a") == 0xaf63dc4c8601ec8cull);
  assert_true(tb_shard_cost(100.0, 3) == 3 * (100 + TB_SHARD_RECORD_OVERHEAD_BYTES));
  assert_true(tb_shard_cost(1e30, 2) == TB_SHARD_COST_MAX);
}

static void shard_option_parses(void **state) {
  struct tb_error err = {0};
  unsigned i = 9, n = 9;
  assert_int_equal(tb_shard_parse("0/1", &i, &n, &err), TB_OK);
  assert_true(i == 0 && n == 1);
  assert_int_equal(tb_shard_parse("3/4", &i, &n, &err), TB_OK);
  assert_true(i == 3 && n == 4);
  static const char *const bad[] = {"4/4", "1/0", "-1/4", "1/+4",  "1 /4",  "1",
                                    "/4",  "1/",  "a/b",  "1/4/5", "0/4097"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    tb_error_clear(&err);
    assert_int_equal(tb_shard_parse(bad[k], &i, &n, &err), TB_ERR_USAGE);
  }
}

/* Every unit walked by exactly one shard, with all its runs; a shard keeps
 * the whole campaign's case_index (the provider order alternates as in the
 * whole). */
static void shards_partition_the_walk(void **state) {
  struct tb_campaign c;
  struct tb_shape shapes[2];
  small_campaign(&c, shapes);
  struct tb_shard_unit *units = NULL;
  size_t count = 0;
  struct tb_error err = {0};
  assert_int_equal(tb_campaign_units(&c, &units, &count, &err), TB_OK);
  assert_int_equal(count, 3 * 2); /* (sum, add on 4x8; gemm on 2x3x4) x 2 views */
  assert_string_equal(units[0].key, "sum/4x8/packed");
  assert_int_equal(units[0].record_count, 3); /* native x 2 variants, torch */
  assert_string_equal(units[0].records[0], "sum/4x8/packed/native/reference");
  assert_int_equal(units[5].record_count, 4); /* gemm: 2 providers x 2 realizations */
  char whole[4096], alternating[4096];
  walk_ids(&c, false, whole, sizeof whole);
  walk_ids(&c, true, alternating, sizeof alternating);
  unsigned shard_of[6];
  assert_int_equal(tb_shard_assign(units, count, 3, shard_of, &err), TB_OK);
  c.shard_of = shard_of;
  size_t seen = 0;
  for (unsigned s = 0; s < 3; ++s) {
    c.shard_index = s;
    struct tb_campaign_cursor cur;
    tb_campaign_cursor_start(&cur, true);
    while (tb_campaign_next_case(&c, &cur)) {
      assert_int_equal(shard_of[cur.case_index], s);
      size_t run = 0;
      while (tb_campaign_next_run(&c, &cur)) {
        struct tb_case k = tb_campaign_run_case(&c, &cur);
        char id[160], key[TB_SHARD_KEY_SIZE];
        tb_case_id(&k, id, sizeof id);
        assert_string_equal(tb_case_unit_key(id, key, sizeof key), units[cur.case_index].key);
        assert_non_null(strstr(alternating, id)); /* and in the whole's order: */
        if (run++ == 0) { /* the first provider of the case is the whole run's first */
          char *at = strstr(alternating, units[cur.case_index].key);
          assert_non_null(at);
          assert_memory_equal(at, id, strlen(id));
        }
        seen++;
      }
    }
  }
  size_t total = 0;
  for (size_t u = 0; u < count; ++u) {
    total += units[u].record_count;
  }
  assert_int_equal(seen, total);
  c.shard_of = NULL;
  assert_int_equal(tb_campaign_case_count(&c), total);
  (void)whole;
  tb_shard_units_free(units, count);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(walks_every_axis_once),
      cmocka_unit_test(fixed_candidates_are_variants),
      cmocka_unit_test(variant_and_realization_are_apart),
      cmocka_unit_test(orders_alternate),
      cmocka_unit_test(skipped_pairs_and_replays),
      cmocka_unit_test(shards_are_dealt_by_cost),
      cmocka_unit_test(shard_option_parses),
      cmocka_unit_test(shards_partition_the_walk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
