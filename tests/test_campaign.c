/* The campaign's one walk over its axes (measure/campaign.h): ops x shapes x
 * views x (variants | realizations | one) x providers, in the order a run
 * measures them, and everything derived from it. */
#include <stdlib.h>
#include <string.h>

#include "measure/campaign.h"
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(walks_every_axis_once),
      cmocka_unit_test(variant_and_realization_are_apart),
      cmocka_unit_test(orders_alternate),
      cmocka_unit_test(skipped_pairs_and_replays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
