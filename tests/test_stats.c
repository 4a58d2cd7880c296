/* Medians and summaries of raw samples. */
#include <math.h>

#include "measure/host_phase.h"
#include "stats/case_key.h"
#include "stats/interval.h"
#include "stats/stats.h"
#include "stats/stopping.h"
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

/* Exact Mann–Whitney ranks, from the counts of U written out by hand:
 * n = m = 5 has 252 arrangements, 1, 1, 2, 3 of them with U = 0..3, so
 * P(U <= 2) = 4/252 <= 2.5 % < P(U <= 3) = 7/252: k = 3. */
static void mann_whitney_ranks(void **state) {
  double coverage;
  assert_int_equal(tb_mann_whitney_rank(5, 5, &coverage), 3);
  assert_double_equal(coverage, 1.0 - 8.0 / 252.0, 1e-12);
  /* 4 and 4: 70 arrangements, P(U = 0) = 1/70 <= 2.5 % < P(U <= 1) = 2/70 */
  assert_int_equal(tb_mann_whitney_rank(4, 4, &coverage), 1);
  assert_double_equal(coverage, 1.0 - 2.0 / 70.0, 1e-12);
  /* 3 and 3: P(U = 0) = 1/20 > 2.5 %: no interval at 95 % */
  assert_int_equal(tb_mann_whitney_rank(3, 3, &coverage), 0);
  assert_int_equal(tb_mann_whitney_rank(0, 7, NULL), 0);
  /* 60 and 60, normal approximation: floor(1800 + 0.5 - 1.96 sqrt(3600·121/12)) */
  assert_int_equal(tb_mann_whitney_rank(60, 60, &coverage), 1427);
  assert_double_equal(coverage, 0.95, 0.0);
  /* the exact rank and the approximation agree near the switch (51: approximate) */
  size_t exact = tb_mann_whitney_rank(50, 50, NULL), approx = tb_mann_whitney_rank(51, 51, NULL);
  assert_true(exact > 900 && approx > exact && approx < exact + 60);
}

/* Sign-test ranks: P(U = t) = C(n, t) / 2^n. */
static void sign_ranks(void **state) {
  double coverage;
  assert_int_equal(tb_sign_rank(4, &coverage), 0); /* 1/16 > 2.5 % */
  assert_int_equal(tb_sign_rank(6, &coverage), 1); /* 1/64 <= 2.5 % < 7/64 */
  assert_double_equal(coverage, 1.0 - 2.0 / 64.0, 1e-12);
  assert_int_equal(tb_sign_rank(10, &coverage), 2); /* 11/1024 <= 2.5 % < 56/1024 */
  assert_double_equal(coverage, 1.0 - 22.0 / 1024.0, 1e-12);
}

/* The interval of B / A: the k-th smallest and largest of the 25 ratios
 * b_j / a_i (k = 3 for 5 and 5), and their median for the estimate. */
static void ratio_interval_of_two_runs(void **state) {
  const double a[] = {3, 1, 5, 2, 4}, b[] = {10, 2, 6, 4, 8};
  struct tb_interval iv;
  assert_true(tb_ratio_interval(a, 5, b, 5, &iv));
  assert_true(iv.bounded);
  assert_int_equal(iv.rank, 3);
  assert_double_equal(iv.lo, 2.0 / 3.0, 1e-12); /* 0.4, 0.5, then 2/3 */
  assert_double_equal(iv.hi, 6.0, 1e-12);       /* 10, 8, then 6 */
  assert_double_equal(iv.estimate, 2.0, 1e-12); /* the 13th of 25 */
  assert_double_equal(iv.coverage, 1.0 - 8.0 / 252.0, 1e-12);
  /* 4 and 4: k = 1, [min b / max a, max b / min a]; the estimate is the
   * geometric mean of the 8th and 9th ratios (21/11 and 2) */
  const double c[] = {10, 11, 12, 13}, d[] = {20, 21, 22, 26};
  assert_true(tb_ratio_interval(c, 4, d, 4, &iv));
  assert_double_equal(iv.lo, 20.0 / 13.0, 1e-12);
  assert_double_equal(iv.hi, 2.6, 1e-12);
  assert_double_equal(iv.estimate, sqrt(21.0 / 11.0 * 2.0), 1e-12);
  /* ties: identical runs give exactly 1 */
  const double e[] = {5, 5, 5, 5, 5};
  assert_true(tb_ratio_interval(e, 5, e, 5, &iv));
  assert_double_equal(iv.lo, 1.0, 0.0);
  assert_double_equal(iv.hi, 1.0, 0.0);
  /* too few for 95 %: unbounded, still an estimate */
  assert_true(tb_ratio_interval(c, 3, d, 3, &iv));
  assert_false(iv.bounded);
  assert_true(isinf(iv.hi));
  /* a sample that is not a positive time */
  const double bad[] = {1, 0, 2};
  assert_false(tb_ratio_interval(bad, 3, c, 4, &iv));
  assert_false(tb_ratio_interval(c, 4, bad, 3, &iv));
  assert_false(tb_ratio_interval(c, 0, d, 4, &iv));
}

/* A selection over many values agrees with the plain sorted list. */
static void ratio_interval_matches_sorting(void **state) {
  enum { N = 40, M = 37 };
  double a[N], b[M], ratios[N * M];
  for (int i = 0; i < N; ++i) {
    a[i] = 100.0 + (i * 7919 % 101) * 0.37;
  }
  for (int j = 0; j < M; ++j) {
    b[j] = 103.0 + (j * 104729 % 97) * 0.41;
  }
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < M; ++j) {
      ratios[i * M + j] = b[j] / a[i];
    }
  }
  struct tb_interval iv;
  assert_true(tb_ratio_interval(a, N, b, M, &iv));
  double sorted_lo = 0, sorted_hi = 0;
  /* the k-th smallest and largest by counting, independent of the selection */
  for (int x = 0; x < N * M; ++x) {
    size_t below = 0, above = 0;
    for (int y = 0; y < N * M; ++y) {
      below += ratios[y] < ratios[x];
      above += ratios[y] > ratios[x];
    }
    if (below < iv.rank && below + (N * M - below - above) >= iv.rank) {
      sorted_lo = ratios[x];
    }
    if (above < iv.rank && above + (N * M - below - above) >= iv.rank) {
      sorted_hi = ratios[x];
    }
  }
  assert_double_equal(iv.lo, sorted_lo, 1e-12);
  assert_double_equal(iv.hi, sorted_hi, 1e-12);
}

/* The median of paired ratios and its order-statistic interval. */
static void paired_interval_of_rounds(void **state) {
  const double four[] = {1.1, 0.9, 1.05, 1.2};
  struct tb_interval iv;
  assert_true(tb_paired_interval(four, 4, &iv));
  assert_double_equal(iv.estimate, 1.075, 1e-12);
  assert_double_equal(iv.lo, 0.9, 0.0); /* too few for 95 %: [min, max] */
  assert_double_equal(iv.hi, 1.2, 0.0);
  assert_double_equal(iv.coverage, 0.875, 1e-12); /* 1 - 2/16 */
  const double ten[] = {1.3, 1.01, 1.08, 0.97, 1.05, 1.02, 1.11, 1.04, 1.06, 1.03};
  assert_true(tb_paired_interval(ten, 10, &iv));
  assert_int_equal(iv.rank, 2);
  assert_double_equal(iv.lo, 1.01, 0.0); /* the 2nd smallest */
  assert_double_equal(iv.hi, 1.11, 0.0); /* the 2nd largest */
  assert_double_equal(iv.estimate, 1.045, 1e-12);
  const double bad[] = {1.0, NAN};
  assert_false(tb_paired_interval(bad, 2, &iv));
  assert_false(tb_paired_interval(four, 0, &iv));
}

static void robust_cv(void **state) {
  const double v[] = {1, 2, 3, 4, 100}; /* median 3, deviations 2 1 0 1 97: MAD 1 */
  assert_double_equal(tb_robust_cv(v, 5), 1.4826 / 3.0, 1e-12);
  assert_true(isnan(tb_robust_cv(v, 0)));
}

/* The noise rule after each sample: the floors hold convergence back, then
 * converged, max_samples and timeout, checked in that order. */
static void stopping_rule_decisions(void **state) {
  const struct tb_stopping_rule rule = {.by_noise = true,
                                        .max_noise = 0.05,
                                        .min_samples = 3,
                                        .max_samples = 6,
                                        .min_time_s = 0.5,
                                        .timeout_s = 10.0};
  const double quiet[] = {100, 101, 100, 99, 100, 100};
  double noise = NAN;
  /* two samples: below min_samples however quiet */
  assert_int_equal(tb_stopping_decide(&rule, quiet, 2, 1.0, 1.0, &noise), TB_STOP_NOT_YET);
  /* three quiet samples but only 0.4 s sampled: below min_time */
  assert_int_equal(tb_stopping_decide(&rule, quiet, 3, 0.4, 1.0, &noise), TB_STOP_NOT_YET);
  assert_int_equal(tb_stopping_decide(&rule, quiet, 3, 0.6, 1.0, &noise), TB_STOP_CONVERGED);
  assert_double_equal(noise, tb_robust_cv(quiet, 3), 0.0); /* the measure of §3.1 itself */
  /* noisy: median 120, deviations 70 20 30 50 40 20 -> MAD 35, noise 0.432 */
  const double noisy[] = {50, 100, 150, 70, 160, 140};
  assert_int_equal(tb_stopping_decide(&rule, noisy, 5, 5.0, 5.0, &noise), TB_STOP_NOT_YET);
  assert_int_equal(tb_stopping_decide(&rule, noisy, 5, 5.0, 10.0, &noise), TB_STOP_TIMEOUT);
  assert_int_equal(tb_stopping_decide(&rule, noisy, 6, 5.0, 10.0, &noise), TB_STOP_MAX_SAMPLES);
  assert_double_equal(noise, 1.4826 * 35.0 / 120.0, 1e-12);
  /* convergence wins over a ceiling reached by the same sample */
  assert_int_equal(tb_stopping_decide(&rule, quiet, 6, 5.0, 10.0, &noise), TB_STOP_CONVERGED);
  struct tb_stopping_outcome out = {.reason = TB_STOP_MAX_SAMPLES, .taken = 6, .noise = 0.667};
  assert_true(tb_stopping_not_converged(&rule, &out));
  out.noise = 0.04; /* a ceiling reached with the noise within the bound: no flag */
  assert_false(tb_stopping_not_converged(&rule, &out));
  out.noise = NAN; /* no noise at all never counts as within the bound */
  assert_true(tb_stopping_not_converged(&rule, &out));
}

/* The fixed rule: exactly its count, whatever the noise; never flagged. */
static void stopping_fixed_count(void **state) {
  const struct tb_stopping_rule rule = {.samples = 3};
  const double noisy[] = {50, 100, 150};
  assert_int_equal(tb_stopping_decide(&rule, noisy, 2, 0, 0, NULL), TB_STOP_NOT_YET);
  assert_int_equal(tb_stopping_decide(&rule, noisy, 3, 0, 0, NULL), TB_STOP_FIXED_COUNT);
  assert_int_equal(tb_stopping_capacity(&rule), 3);
  struct tb_stopping_outcome out = {.reason = TB_STOP_FIXED_COUNT, .taken = 3, .noise = 0.5};
  assert_false(tb_stopping_not_converged(&rule, &out));
  assert_string_equal(tb_stop_reason_name(TB_STOP_TIMEOUT), "timeout");
}

/* The band and the four outcomes of an interval. */
static void verdict_of_intervals(void **state) {
  assert_double_equal(tb_equivalence_band(0.01, NAN), 0.02, 0.0);
  assert_double_equal(tb_equivalence_band(0.05, 0.03), 0.05, 0.0);
  assert_int_equal(tb_verdict_of_interval(0.99, 1.01, 0.02), TB_VERDICT_SAME);
  /* excludes 1 but inside the band: SAME, not SLOWER */
  assert_int_equal(tb_verdict_of_interval(1.005, 1.015, 0.02), TB_VERDICT_SAME);
  assert_int_equal(tb_verdict_of_interval(1.0 / 1.02, 1.02, 0.02), TB_VERDICT_SAME); /* edges */
  assert_int_equal(tb_verdict_of_interval(1.03, 1.2, 0.02), TB_VERDICT_HIGHER);
  assert_int_equal(tb_verdict_of_interval(0.5, 0.97, 0.02), TB_VERDICT_LOWER);
  /* excludes 1 and reaches out of the band, but not wholly outside it */
  assert_int_equal(tb_verdict_of_interval(1.01, 1.05, 0.02), TB_VERDICT_INCONCLUSIVE);
  assert_int_equal(tb_verdict_of_interval(0.9, 1.1, 0.02), TB_VERDICT_INCONCLUSIVE);
  /* runs that spread by 25 % cannot tell 3-20 % apart from nothing */
  assert_int_equal(tb_verdict_of_interval(1.03, 1.2, 0.25), TB_VERDICT_SAME);
  assert_int_equal(tb_verdict_of_interval(1.03, 1.3, 0.25), TB_VERDICT_INCONCLUSIVE);
  assert_int_equal(tb_verdict_of_interval(NAN, 1.0, 0.02), TB_VERDICT_INCONCLUSIVE);
  assert_int_equal(tb_verdict_of_interval(0.0, INFINITY, 0.02), TB_VERDICT_INCONCLUSIVE);
  assert_string_equal(tb_verdict_text(TB_VERDICT_HIGHER, &tb_time_ratio_verdict_words), "SLOWER");
  assert_string_equal(tb_verdict_text(TB_VERDICT_LOWER, &tb_time_ratio_verdict_words), "FASTER");
  assert_string_equal(tb_verdict_text(TB_VERDICT_SAME, &tb_time_ratio_verdict_words), "SAME");
  assert_string_equal(tb_verdict_text(TB_VERDICT_HIGHER, &tb_gain_interval_verdict_words),
                      "FASTER");
  assert_string_equal(tb_verdict_text(TB_VERDICT_INCONCLUSIVE, &tb_gain_interval_verdict_words),
                      "INCONCLUSIVE");
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
      cmocka_unit_test(mann_whitney_ranks),
      cmocka_unit_test(sign_ranks),
      cmocka_unit_test(ratio_interval_of_two_runs),
      cmocka_unit_test(ratio_interval_matches_sorting),
      cmocka_unit_test(paired_interval_of_rounds),
      cmocka_unit_test(robust_cv),
      cmocka_unit_test(stopping_rule_decisions),
      cmocka_unit_test(stopping_fixed_count),
      cmocka_unit_test(verdict_of_intervals),
      cmocka_unit_test(case_base_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
