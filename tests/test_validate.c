/* Full-output validation: planted errors, NaN and unwritten elements fail. */
#include <math.h>
#include <stdlib.h>

#include "oracle/validate.h"
#include "test_support.h"

#define COUNT 64

static void fill(float *out, double *ref) {
  for (int i = 0; i < COUNT; ++i) {
    ref[i] = 0.5 + i * 0.25;
    out[i] = (float)ref[i];
  }
}

static const struct tb_tolerance tol = {1e-6, 1e-6, 1.0};

static void correct_output_passes(void **state) {
  float out[COUNT];
  double ref[COUNT];
  fill(out, ref);
  struct tb_validation v;
  tb_validate(out, ref, COUNT, tol, &v);
  assert_true(v.passed);
  assert_int_equal(v.failed, 0);
  assert_int_equal(v.checked, COUNT);
}

static void one_wrong_element_fails(void **state) {
  float out[COUNT];
  double ref[COUNT];
  fill(out, ref);
  out[37] += 1e-3f;
  struct tb_validation v;
  tb_validate(out, ref, COUNT, tol, &v);
  assert_false(v.passed);
  assert_int_equal(v.failed, 1);
  assert_int_equal(v.first_failure, 37);
  assert_true(v.max_abs_error > 9e-4 && v.max_abs_error < 1.1e-3);
}

static void nan_never_passes(void **state) {
  float out[COUNT];
  double ref[COUNT];
  fill(out, ref);
  out[5] = nanf("");
  struct tb_validation v;
  tb_validate(out, ref, COUNT, (struct tb_tolerance){INFINITY, INFINITY, 1.0}, &v);
  assert_false(v.passed);
  assert_int_equal(v.failed, 1);
  assert_int_equal(v.unwritten, 0); /* a computed NaN is not the poison pattern */
}

static void nan_reference_fails(void **state) {
  float out[COUNT];
  double ref[COUNT];
  fill(out, ref);
  ref[9] = NAN;
  struct tb_validation v;
  tb_validate(out, ref, COUNT, tol, &v);
  assert_false(v.passed);
  assert_int_equal(v.first_failure, 9);
}

static void unwritten_elements_are_caught(void **state) {
  float out[COUNT];
  double ref[COUNT];
  fill(out, ref);
  tb_poison(out + 60, 4); /* a kernel that skipped the tail */
  struct tb_validation v;
  tb_validate(out, ref, COUNT, tol, &v);
  assert_false(v.passed);
  assert_int_equal(v.unwritten, 4);
  assert_int_equal(v.failed, 4);
  assert_int_equal(v.first_failure, 60);
  assert_true(tb_is_poison(out[63]));
  assert_false(tb_is_poison(nanf("")));
}

static void tolerance_is_absolute_plus_relative(void **state) {
  float out[1] = {101.0f};
  double ref[1] = {100.0};
  struct tb_validation v;
  tb_validate(out, ref, 1, (struct tb_tolerance){0.5, 0.005, 1.0}, &v); /* bound 1.0 */
  assert_true(v.passed);
  tb_validate(out, ref, 1, (struct tb_tolerance){0.4, 0.005, 1.0}, &v); /* bound 0.9 */
  assert_false(v.passed);
  assert_double_equal(v.max_rel_error, 0.01, 1e-12);
}

static void sum_tolerance_catches_one_dropped_element(void **state) {
  /* The documented sum tolerance must stay below one input element (|x| up
   * to 4, about 2 on average) even for very long rows. */
  struct tb_tolerance t = tb_tolerance_for(TB_OP_SUM, 1u << 24, false);
  assert_true(t.atol < 0.1);
  assert_true(tb_tolerance_for(TB_OP_ADD, 10, false).atol == 0.0);
}

/* An output long enough to be validated in parts on several threads (one
 * part where there is one core): the merge keeps the earliest failure and
 * every count and maximum, whichever part they fell in. */
static void a_long_output_merges_its_parts_in_order(void **state) {
  enum { LONG = 2000000 };
  float *out = malloc(LONG * sizeof *out);
  double *ref = malloc(LONG * sizeof *ref);
  assert_non_null(out);
  assert_non_null(ref);
  for (size_t i = 0; i < LONG; ++i) {
    ref[i] = 1.0 + (double)(i % 1000) * 1e-3;
    out[i] = (float)ref[i];
  }
  struct tb_tolerance wide = {1e-5, 1e-5, 1.0};
  struct tb_validation r;
  tb_validate(out, ref, LONG, wide, &r);
  assert_true(r.passed);
  assert_int_equal(r.checked, LONG);
  out[1900000] = 7.0f; /* in the last part */
  tb_validate(out, ref, LONG, wide, &r);
  assert_false(r.passed);
  assert_int_equal(r.failed, 1);
  assert_int_equal(r.first_failure, 1900000);
  out[400000] = NAN; /* in the first part too */
  tb_validate(out, ref, LONG, wide, &r);
  assert_int_equal(r.failed, 2);
  assert_int_equal(r.first_failure, 400000);
  assert_true(isinf(r.max_abs_error));
  out[400000] = (float)ref[400000];
  tb_validate(out, ref, LONG, wide, &r);
  assert_int_equal(r.first_failure, 1900000);
  assert_true(fabs(r.max_abs_error - (7.0 - ref[1900000])) < 1e-9);
  assert_true(fabs(r.max_abs_reference - ref[999]) < 1e-12);
  free(out);
  free(ref);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(correct_output_passes),
      cmocka_unit_test(one_wrong_element_fails),
      cmocka_unit_test(nan_never_passes),
      cmocka_unit_test(nan_reference_fails),
      cmocka_unit_test(unwritten_elements_are_caught),
      cmocka_unit_test(tolerance_is_absolute_plus_relative),
      cmocka_unit_test(sum_tolerance_catches_one_dropped_element),
      cmocka_unit_test(a_long_output_merges_its_parts_in_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
