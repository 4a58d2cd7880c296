/* Medians and summaries of raw samples. */
#include <math.h>

#include "measure/host_phase.h"
#include "stats/stats.h"
#include "test_support.h"

static void median_of_odd_count(void **state) {
  const double v[] = {9, 1, 5, 3, 7};
  assert_double_equal(tb_median(v, 5), 5.0, 0.0);
}

static void median_of_even_count(void **state) {
  const double v[] = {4, 1, 3, 10};
  assert_double_equal(tb_median(v, 4), 3.5, 0.0); /* mean of 3 and 4 */
}

static void median_leaves_input_unsorted(void **state) {
  double v[] = {3, 1, 2};
  tb_median(v, 3);
  assert_double_equal(v[0], 3.0, 0.0);
  assert_double_equal(v[1], 1.0, 0.0);
}

static void summary_min_max(void **state) {
  const double v[] = {2.5, -1, 8};
  struct tb_summary s = tb_summarize(v, 3);
  assert_double_equal(s.p50, 2.5, 0.0);
  assert_double_equal(s.min, -1.0, 0.0);
  assert_double_equal(s.max, 8.0, 0.0);
  assert_int_equal(s.count, 3);
  assert_true(isnan(tb_summarize(v, 0).p50));
}

static void batch_calibration(void **state) {
  assert_int_equal(tb_calibrate_batch(1e6, 10.0), 10); /* 1 ms calls, 10 ms batch */
  assert_int_equal(tb_calibrate_batch(3e7, 10.0), 1);  /* a call longer than a batch */
  assert_int_equal(tb_calibrate_batch(0.0, 10.0), 1);  /* no estimate */
  assert_int_equal(tb_calibrate_batch(1e-3, 1000.0), TB_MAX_BATCH_CALLS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(median_of_odd_count),
      cmocka_unit_test(median_of_even_count),
      cmocka_unit_test(median_leaves_input_unsorted),
      cmocka_unit_test(summary_min_max),
      cmocka_unit_test(batch_calibration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
