/* The verdict rules of tilebench (docs/method.md §3), never a median alone:
 * - ranges: decided only when two ranges do not overlap. `compare` puts run
 *   B's sample range against run A's ("every sample", its strictest line); a
 *   replay puts the range of its per-round ratios against 1.
 * - intervals: a confidence interval of a ratio (stats/interval.h) against
 *   an equivalence band around 1: SAME inside it, LOWER / HIGHER wholly
 *   outside it on one side, else INCONCLUSIVE.
 * Each reader keeps its own words for the outcomes (struct tb_verdict_words). */
#ifndef TB_STATS_VERDICT_H
#define TB_STATS_VERDICT_H

enum tb_verdict {
  TB_VERDICT_INCONCLUSIVE, /* the ranges overlap (or a bound is NaN) */
  TB_VERDICT_LOWER,        /* every value of the range lies below the other range */
  TB_VERDICT_HIGHER,       /* every value lies above it */
  TB_VERDICT_SAME,         /* intervals only: wholly inside the equivalence band */
};

/* [b_min, b_max] against [a_min, a_max]. */
enum tb_verdict tb_verdict_of_ranges(double a_min, double a_max, double b_min, double b_max);

/* A range of ratios against 1 (every ratio < 1: LOWER; every ratio > 1: HIGHER). */
enum tb_verdict tb_verdict_of_ratios(double min_ratio, double max_ratio);

/* The least half-width of the equivalence band: differences under 2 % are
 * not ones a user can act on, however tight the interval. */
#define TB_BAND_FLOOR 0.02

/* The band's half-width for two sides of the given noise (robust
 * coefficients of variation, stats/interval.h): max(2 %, noise_a, noise_b);
 * a NaN noise counts as none. The band on a ratio is [1/(1+w), 1+w]. */
double tb_equivalence_band(double noise_a, double noise_b);

/* A ratio's interval [lo, hi] against the band of half-width w: SAME when
 * 1/(1+w) <= lo and hi <= 1+w (even when the interval excludes 1: a real
 * difference smaller than the band); HIGHER when lo > 1+w; LOWER when
 * hi < 1/(1+w); otherwise (it reaches across an edge of the band, or a
 * bound is NaN) INCONCLUSIVE. */
enum tb_verdict tb_verdict_of_interval(double lo, double hi, double w);

/* What a reader calls each outcome. */
struct tb_verdict_words {
  const char *lower, *higher, *inconclusive, *same;
};

/* replay: gain_r = reference_r / candidate_r, > 1 when the candidate was faster */
extern const struct tb_verdict_words tb_gain_verdict_words;
/* replay: ratio_r = native_r / framework_r, < 1 when native was faster */
extern const struct tb_verdict_words tb_native_ratio_verdict_words;
/* compare: B's per-call samples against A's, lower = faster */
extern const struct tb_verdict_words tb_compare_verdict_words;
/* compare's and a replay's interval verdicts, of a ratio where lower is
 * faster (B / A, native / framework): FASTER, SLOWER, SAME, INCONCLUSIVE */
extern const struct tb_verdict_words tb_time_ratio_verdict_words;
/* a replay's interval verdict of gains (reference / candidate): higher is
 * the candidate faster */
extern const struct tb_verdict_words tb_gain_interval_verdict_words;

const char *tb_verdict_text(enum tb_verdict verdict, const struct tb_verdict_words *words);

#endif
