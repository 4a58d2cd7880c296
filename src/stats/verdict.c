#include "stats/verdict.h"

#include <math.h>

enum tb_verdict tb_verdict_of_ranges(double a_min, double a_max, double b_min, double b_max) {
  /* both tests are false for a NaN bound: nothing is decided from a lost value */
  if (b_max < a_min) {
    return TB_VERDICT_LOWER;
  }
  if (b_min > a_max) {
    return TB_VERDICT_HIGHER;
  }
  return TB_VERDICT_INCONCLUSIVE;
}

enum tb_verdict tb_verdict_of_ratios(double min_ratio, double max_ratio) {
  return tb_verdict_of_ranges(1.0, 1.0, min_ratio, max_ratio);
}

double tb_equivalence_band(double noise_a, double noise_b) {
  double w = TB_BAND_FLOOR;
  w = noise_a > w ? noise_a : w; /* false for NaN */
  w = noise_b > w ? noise_b : w;
  return w;
}

enum tb_verdict tb_verdict_of_interval(double lo, double hi, double w) {
  double top = 1.0 + w, bottom = 1.0 / (1.0 + w);
  if (!(lo <= hi)) { /* NaN, or not an interval */
    return TB_VERDICT_INCONCLUSIVE;
  }
  if (lo >= bottom && hi <= top) {
    return TB_VERDICT_SAME;
  }
  if (lo > top) {
    return TB_VERDICT_HIGHER;
  }
  if (hi < bottom) {
    return TB_VERDICT_LOWER;
  }
  return TB_VERDICT_INCONCLUSIVE;
}

/* Range verdicts are never SAME: a range rule has no band. */
const struct tb_verdict_words tb_gain_verdict_words = {"slower in all pairs", "faster in all pairs",
                                                       "inconclusive", "inconclusive"};
const struct tb_verdict_words tb_native_ratio_verdict_words = {
    "native faster in all pairs", "native slower in all pairs", "inconclusive", "inconclusive"};
const struct tb_verdict_words tb_compare_verdict_words = {
    "B faster in every sample", "B slower in every sample", "inconclusive (ranges overlap)",
    "inconclusive (ranges overlap)"};
const struct tb_verdict_words tb_time_ratio_verdict_words = {"FASTER", "SLOWER", "INCONCLUSIVE",
                                                             "SAME"};
/* a gain above the band is the candidate faster */
const struct tb_verdict_words tb_gain_interval_verdict_words = {"SLOWER", "FASTER", "INCONCLUSIVE",
                                                                "SAME"};

const char *tb_verdict_text(enum tb_verdict verdict, const struct tb_verdict_words *words) {
  switch (verdict) {
  case TB_VERDICT_LOWER: return words->lower;
  case TB_VERDICT_HIGHER: return words->higher;
  case TB_VERDICT_SAME: return words->same;
  default: return words->inconclusive;
  }
}
