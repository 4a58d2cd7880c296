/* The one verdict rule of tilebench: a comparison is decided only when two
 * ranges do not overlap (docs/method.md §3), never from a median alone.
 * `compare` puts run B's sample range against run A's; a replay puts the
 * range of its per-round ratios against 1. Each reader keeps its own words
 * for the three outcomes (struct tb_verdict_words). */
#ifndef TB_STATS_VERDICT_H
#define TB_STATS_VERDICT_H

enum tb_verdict {
  TB_VERDICT_INCONCLUSIVE, /* the ranges overlap (or a bound is NaN) */
  TB_VERDICT_LOWER,        /* every value of the range lies below the other range */
  TB_VERDICT_HIGHER,       /* every value lies above it */
};

/* [b_min, b_max] against [a_min, a_max]. */
enum tb_verdict tb_verdict_of_ranges(double a_min, double a_max, double b_min, double b_max);

/* A range of ratios against 1 (every ratio < 1: LOWER; every ratio > 1: HIGHER). */
enum tb_verdict tb_verdict_of_ratios(double min_ratio, double max_ratio);

/* What a reader calls each outcome. */
struct tb_verdict_words {
  const char *lower, *higher, *inconclusive;
};

/* replay: gain_r = reference_r / candidate_r, > 1 when the candidate was faster */
extern const struct tb_verdict_words tb_gain_verdict_words;
/* replay: ratio_r = native_r / framework_r, < 1 when native was faster */
extern const struct tb_verdict_words tb_native_ratio_verdict_words;
/* compare: B's per-call samples against A's, lower = faster */
extern const struct tb_verdict_words tb_compare_verdict_words;

const char *tb_verdict_text(enum tb_verdict verdict, const struct tb_verdict_words *words);

#endif
