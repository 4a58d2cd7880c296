#include "stats/interval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

/* The two-sided normal quantile of TB_INTERVAL_LEVEL (95 %). */
#define TB_Z_975 1.959963984540054

static const double tail = (1.0 - TB_INTERVAL_LEVEL) / 2.0;

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- ranks ------------------------------------------------------------------ */

/* k from a lower-tail distribution: cdf(u) = P(U <= u), given as counts over
 * a total; the largest k with cdf(k-1) <= tail. */
static size_t rank_from_counts(const double *counts, size_t values, double total,
                               double *coverage) {
  double below = 0.0; /* P(U <= k-1) */
  size_t k = 0;
  while (k < values && (below + counts[k]) / total <= tail) {
    below += counts[k];
    k++;
  }
  if (coverage != NULL) {
    *coverage = 1.0 - 2.0 * below / total;
  }
  return k;
}

/* The normal approximation of a rank statistic of mean mu and sd sigma, with
 * the continuity correction: P(U <= k-1) ~ Phi((k - 1/2 - mu) / sigma). */
static size_t rank_from_normal(double mu, double sigma, double *coverage) {
  double k = floor(mu + 0.5 - TB_Z_975 * sigma);
  if (coverage != NULL) {
    *coverage = k >= 1.0 ? TB_INTERVAL_LEVEL : 0.0;
  }
  return k >= 1.0 ? (size_t)k : 0;
}

/* Counts of U = #{(i, j): b_j < a_i} over all arrangements of n a's and m b's,
 * by the recurrence on the largest value: an a above all j b's adds j,
 * a b adds nothing: N(i, j, u) = N(i-1, j, u-j) + N(i, j-1, u). */
static double *mann_whitney_counts(size_t n, size_t m) {
  size_t width = n * m + 1;
  double *prev = calloc((m + 1) * width, sizeof *prev);
  double *cur = calloc((m + 1) * width, sizeof *cur);
  if (prev == NULL || cur == NULL) {
    free(prev);
    free(cur);
    return NULL;
  }
  for (size_t j = 0; j <= m; ++j) {
    prev[j * width] = 1.0; /* i = 0: one arrangement, U = 0 */
  }
  for (size_t i = 1; i <= n; ++i) {
    memset(cur, 0, (m + 1) * width * sizeof *cur);
    cur[0] = 1.0; /* j = 0 */
    for (size_t j = 1; j <= m; ++j) {
      for (size_t u = 0; u <= i * j; ++u) {
        double a_top = u >= j ? prev[j * width + u - j] : 0.0;
        cur[j * width + u] = a_top + cur[(j - 1) * width + u];
      }
    }
    double *swap = prev;
    prev = cur;
    cur = swap;
  }
  /* row n, column m: move it to the front of one buffer */
  memmove(prev, prev + m * width, width * sizeof *prev);
  free(cur);
  return prev;
}

size_t tb_mann_whitney_rank(size_t n, size_t m, double *coverage) {
  if (n == 0 || m == 0) {
    if (coverage != NULL) {
      *coverage = 0.0;
    }
    return 0;
  }
  double nm = (double)n * (double)m;
  if (n > TB_EXACT_RANK_MAX || m > TB_EXACT_RANK_MAX) {
    return rank_from_normal(nm / 2.0, sqrt(nm * (double)(n + m + 1) / 12.0), coverage);
  }
  double *counts = mann_whitney_counts(n, m);
  if (counts == NULL) {
    return rank_from_normal(nm / 2.0, sqrt(nm * (double)(n + m + 1) / 12.0), coverage);
  }
  double total = 0.0;
  for (size_t u = 0; u <= n * m; ++u) {
    total += counts[u];
  }
  size_t k = rank_from_counts(counts, n * m + 1, total, coverage);
  free(counts);
  return k;
}

size_t tb_sign_rank(size_t n, double *coverage) {
  if (n > 1000) { /* 2^-n underflows; the binomial is near normal long before */
    return rank_from_normal(n / 2.0, sqrt((double)n) / 2.0, coverage);
  }
  double *counts = malloc((n + 1) * sizeof *counts);
  if (counts == NULL) {
    return rank_from_normal(n / 2.0, sqrt((double)n) / 2.0, coverage);
  }
  counts[0] = ldexp(1.0, -(int)n); /* P(U = t) = C(n, t) / 2^n */
  for (size_t t = 1; t <= n; ++t) {
    counts[t] = counts[t - 1] * (double)(n - t + 1) / (double)t;
  }
  size_t k = rank_from_counts(counts, n + 1, 1.0, coverage);
  free(counts);
  return k;
}

/* ---- the k-th smallest of the n·m differences b_j - a_i --------------------- */

/* a and b sorted ascending. */
struct differences {
  const double *a, *b;
  size_t n, m;
};

/* How many differences are <= x. For a larger a_i more b_j - a_i are <= x
 * (rounding is monotone), so one pointer walks b once over all i. */
static size_t count_at_most(const struct differences *d, double x) {
  size_t count = 0, j = 0;
  for (size_t i = 0; i < d->n; ++i) { /* a_i ascending: the b_j that qualify grow */
    while (j < d->m && d->b[j] - d->a[i] <= x) {
      j++;
    }
    count += j;
  }
  return count;
}

/* The least difference above x. */
static double least_above(const struct differences *d, double x) {
  double least = INFINITY;
  size_t j = 0;
  for (size_t i = 0; i < d->n; ++i) {
    while (j < d->m && d->b[j] - d->a[i] <= x) {
      j++;
    }
    if (j < d->m) {
      least = fmin(least, d->b[j] - d->a[i]);
    }
  }
  return least;
}

/* The k-th smallest difference (1-based), exactly, without forming all n·m:
 * bisect on the value until no double lies between the bounds
 * (count(lo) < k <= count(hi)); the answer is then the least difference
 * above lo. */
static double kth_difference(const struct differences *d, size_t k) {
  double lo = d->b[0] - d->a[d->n - 1], hi = d->b[d->m - 1] - d->a[0];
  if (count_at_most(d, lo) >= k) {
    return lo;
  }
  for (;;) {
    double mid = lo + (hi - lo) / 2.0;
    if (mid <= lo || mid >= hi) {
      break;
    }
    if (count_at_most(d, mid) >= k) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return least_above(d, lo);
}

static double median_difference(const struct differences *d) {
  size_t count = d->n * d->m;
  if (count % 2) {
    return kth_difference(d, count / 2 + 1);
  }
  return 0.5 * (kth_difference(d, count / 2) + kth_difference(d, count / 2 + 1));
}

/* ---- the intervals ---------------------------------------------------------- */

static void unbounded(struct tb_interval *out) {
  out->bounded = false;
  out->lo = 0.0;
  out->hi = INFINITY;
  out->rank = 0;
}

/* Sorted logs of positive finite values; NULL when one is not, or no memory. */
static double *sorted_logs(const double *values, size_t count) {
  double *logs = malloc(count * sizeof *logs);
  for (size_t i = 0; logs != NULL && i < count; ++i) {
    if (!(isfinite(values[i]) && values[i] > 0.0)) {
      free(logs);
      return NULL;
    }
    logs[i] = log(values[i]);
  }
  if (logs != NULL) {
    qsort(logs, count, sizeof *logs, compare_doubles);
  }
  return logs;
}

bool tb_ratio_interval(const double *a, size_t n, const double *b, size_t m,
                       struct tb_interval *out) {
  memset(out, 0, sizeof *out);
  unbounded(out);
  out->estimate = NAN;
  double *la = n > 0 && m > 0 ? sorted_logs(a, n) : NULL;
  double *lb = la != NULL ? sorted_logs(b, m) : NULL;
  if (lb == NULL) {
    free(la);
    return false;
  }
  struct differences d = {la, lb, n, m};
  out->estimate = exp(median_difference(&d));
  size_t k = tb_mann_whitney_rank(n, m, &out->coverage);
  if (k >= 1) {
    out->bounded = true;
    out->rank = k;
    out->lo = exp(kth_difference(&d, k));
    out->hi = exp(kth_difference(&d, n * m + 1 - k));
  }
  free(la);
  free(lb);
  return true;
}

bool tb_paired_interval(const double *ratios, size_t n, struct tb_interval *out) {
  memset(out, 0, sizeof *out);
  unbounded(out);
  out->estimate = NAN;
  double *sorted = n > 0 ? malloc(n * sizeof *sorted) : NULL;
  if (sorted == NULL) {
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!(isfinite(ratios[i]) && ratios[i] > 0.0)) {
      free(sorted);
      return false;
    }
    sorted[i] = ratios[i];
  }
  qsort(sorted, n, sizeof *sorted, compare_doubles);
  out->estimate = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  size_t k = tb_sign_rank(n, &out->coverage);
  if (k == 0) { /* the widest interval there is, with what it covers */
    k = 1;
    out->coverage = 1.0 - ldexp(1.0, 1 - (int)n);
  }
  out->bounded = true;
  out->rank = k;
  out->lo = sorted[k - 1];
  out->hi = sorted[n - k];
  free(sorted);
  return true;
}

double tb_robust_cv(const double *values, size_t count) {
  double median = tb_median(values, count);
  if (!(median > 0.0)) {
    return NAN;
  }
  double *deviations = malloc(count * sizeof *deviations);
  if (deviations == NULL) {
    return NAN;
  }
  for (size_t i = 0; i < count; ++i) {
    deviations[i] = fabs(values[i] - median);
  }
  double mad = tb_median(deviations, count);
  free(deviations);
  return 1.4826 * mad / median;
}
