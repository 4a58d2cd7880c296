/* Medians and summaries of raw samples. */
#include <math.h>

#include "measure/host_phase.h"
#include "stats/case_key.h"
#include "stats/stats.h"
#include "stats/verdict.h"
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

/* compare's rule: B decided only when its whole sample range clears A's. */
static void verdict_of_sample_ranges(void **state) {
  assert_int_equal(tb_verdict_of_ranges(10, 12, 7, 9.99), TB_VERDICT_LOWER);
  assert_int_equal(tb_verdict_of_ranges(10, 12, 12.01, 13), TB_VERDICT_HIGHER);
  assert_int_equal(tb_verdict_of_ranges(10, 12, 9, 10), TB_VERDICT_INCONCLUSIVE); /* touching */
  assert_int_equal(tb_verdict_of_ranges(10, 12, 11, 11), TB_VERDICT_INCONCLUSIVE);
  assert_int_equal(tb_verdict_of_ranges(10, 12, NAN, 5), TB_VERDICT_LOWER);
  assert_int_equal(tb_verdict_of_ranges(NAN, NAN, 1, 2), TB_VERDICT_INCONCLUSIVE);
  assert_string_equal(tb_verdict_text(TB_VERDICT_LOWER, &tb_compare_verdict_words),
                      "B faster in every sample");
  assert_string_equal(tb_verdict_text(TB_VERDICT_HIGHER, &tb_compare_verdict_words),
                      "B slower in every sample");
  assert_string_equal(tb_verdict_text(TB_VERDICT_INCONCLUSIVE, &tb_compare_verdict_words),
                      "inconclusive (ranges overlap)");
}

/* A replay's rule: every per-round ratio on one side of 1, never equal to it. */
static void verdict_of_ratio_ranges(void **state) {
  assert_int_equal(tb_verdict_of_ratios(1.01, 1.5), TB_VERDICT_HIGHER);
  assert_int_equal(tb_verdict_of_ratios(0.5, 0.99), TB_VERDICT_LOWER);
  assert_int_equal(tb_verdict_of_ratios(1.0, 1.5), TB_VERDICT_INCONCLUSIVE);
  assert_int_equal(tb_verdict_of_ratios(0.9, 1.1), TB_VERDICT_INCONCLUSIVE);
  assert_int_equal(tb_verdict_of_ratios(NAN, NAN), TB_VERDICT_INCONCLUSIVE);
  /* gains (reference / candidate) above 1: the candidate was faster */
  assert_string_equal(tb_verdict_text(tb_verdict_of_ratios(1.2, 1.3), &tb_gain_verdict_words),
                      "faster in all pairs");
  assert_string_equal(tb_verdict_text(tb_verdict_of_ratios(0.7, 0.8), &tb_gain_verdict_words),
                      "slower in all pairs");
  /* native / framework below 1: native was faster */
  assert_string_equal(
      tb_verdict_text(tb_verdict_of_ratios(0.7, 0.8), &tb_native_ratio_verdict_words),
      "native faster in all pairs");
  assert_string_equal(
      tb_verdict_text(tb_verdict_of_ratios(1.2, 1.3), &tb_native_ratio_verdict_words),
      "native slower in all pairs");
  assert_string_equal(
      tb_verdict_text(tb_verdict_of_ratios(0.9, 1.3), &tb_native_ratio_verdict_words),
      "inconclusive");
}

static void case_base_key(void **state) {
  char key[64];
  assert_string_equal(tb_case_base_key("softmax/37x769/packed/native/reference", key, sizeof key),
                      "softmax/37x769/packed/native");
  assert_string_equal(tb_case_base_key("softmax/37x769/packed/native", key, sizeof key),
                      "softmax/37x769/packed");
  assert_string_equal(tb_case_base_key("no-slash", key, sizeof key), "no-slash");
  assert_string_equal(tb_case_base_key("abcdefgh/ij", key, 5), "abcd"); /* truncated, no slash */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(median_of_odd_count),
      cmocka_unit_test(median_of_even_count),
      cmocka_unit_test(median_leaves_input_unsorted),
      cmocka_unit_test(summary_min_max),
      cmocka_unit_test(batch_calibration),
      cmocka_unit_test(verdict_of_sample_ranges),
      cmocka_unit_test(verdict_of_ratio_ranges),
      cmocka_unit_test(case_base_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
