/* Confidence intervals for "how much faster": distribution-free, so that a
 * verdict does not rest on the timings being normal (they never are: long
 * right tails, steps from clocks and interrupts). docs/method.md §3.
 *
 * - Two separate runs (compare): the Hodges–Lehmann shift of the log times
 *   with the exact Mann–Whitney confidence interval (Lehmann / Moses): the
 *   k-th smallest and k-th largest of the n·m differences log b_j − log a_i.
 *   Exponentiated, an interval for the ratio of B's times to A's.
 * - Paired rounds (replay): the order-statistic interval of the median of
 *   the per-round ratios, from the binomial (sign-test) distribution.
 *
 * Both aim at TB_INTERVAL_LEVEL and report the coverage actually reached
 * (exact ranks make it a little more). */
#ifndef TB_STATS_INTERVAL_H
#define TB_STATS_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>

#define TB_INTERVAL_LEVEL 0.95

/* Sample sizes up to this use the exact Mann–Whitney distribution; larger
 * ones its normal approximation (error in the coverage well under 0.5 %). */
#define TB_EXACT_RANK_MAX 50

struct tb_interval {
  bool bounded;    /* false: too few values for any interval (lo 0, hi +inf) */
  double estimate; /* Hodges–Lehmann ratio, or the median of the paired ratios */
  double lo, hi;   /* the interval of the ratio */
  double coverage; /* its coverage: exact, or the nominal level under the approximation */
  size_t rank;     /* k: the interval is the k-th smallest and k-th largest value */
};

/* k for the Mann–Whitney interval of sizes n and m: the largest k with
 * P(U <= k-1) <= (1 - TB_INTERVAL_LEVEL) / 2 under no difference, 0 when
 * none; *coverage (may be NULL) = 1 - 2 P(U <= k-1). */
size_t tb_mann_whitney_rank(size_t n, size_t m, double *coverage);

/* The same for the sign test of n paired values (U ~ Binomial(n, 1/2)). */
size_t tb_sign_rank(size_t n, double *coverage);

/* The ratio of b's times to a's (> 1: b slower). False when a sample is not
 * a positive finite number, a side is empty, or memory ran out (*out then
 * unbounded with NaN estimate). */
bool tb_ratio_interval(const double *a, size_t n, const double *b, size_t m,
                       struct tb_interval *out);

/* The median of n paired ratios and its order-statistic interval. With too
 * few values for TB_INTERVAL_LEVEL (n < 6) it gives [min, max] instead, with
 * its own coverage 1 - 2^(1-n), so a short replay still says what it can.
 * False when a ratio is not positive and finite, or n is 0. */
bool tb_paired_interval(const double *ratios, size_t n, struct tb_interval *out);

/* How far a scope's samples spread, relative to their level: 1.4826 × the
 * median absolute deviation over the median (a robust coefficient of
 * variation); NaN for no samples or a median that is not positive. */
double tb_robust_cv(const double *values, size_t count);

/* Above this robust CV a case's samples are flagged noisy in the report: its
 * own spread then exceeds 2.5 times the equivalence band's floor, so compare
 * cannot resolve differences below it. */
#define TB_NOISY_CV 0.05

#endif
