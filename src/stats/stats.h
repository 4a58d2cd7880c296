/* Summary statistics of raw samples. p50 is the median: the middle sample
 * for odd counts, the mean of the two middle samples for even counts. */
#ifndef TB_STATS_STATS_H
#define TB_STATS_STATS_H

#include <stddef.h>

struct tb_summary {
  double p50, min, max;
  size_t count;
};

/* NaN fields for an empty input. */
struct tb_summary tb_summarize(const double *values, size_t count);
double tb_median(const double *values, size_t count);

#endif
