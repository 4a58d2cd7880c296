#include "stats/verdict.h"

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

const struct tb_verdict_words tb_gain_verdict_words = {"slower in all pairs", "faster in all pairs",
                                                       "inconclusive"};
const struct tb_verdict_words tb_native_ratio_verdict_words = {
    "native faster in all pairs", "native slower in all pairs", "inconclusive"};
const struct tb_verdict_words tb_compare_verdict_words = {
    "B faster in every sample", "B slower in every sample", "inconclusive (ranges overlap)"};

const char *tb_verdict_text(enum tb_verdict verdict, const struct tb_verdict_words *words) {
  switch (verdict) {
  case TB_VERDICT_LOWER: return words->lower;
  case TB_VERDICT_HIGHER: return words->higher;
  default: return words->inconclusive;
  }
}
