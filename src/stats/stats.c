#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double tb_median(const double *values, size_t count) {
  if (count == 0) {
    return NAN;
  }
  double *sorted = malloc(count * sizeof *sorted);
  if (sorted == NULL) {
    return NAN;
  }
  memcpy(sorted, values, count * sizeof *sorted);
  qsort(sorted, count, sizeof *sorted, compare_doubles);
  double mid = count % 2 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
  free(sorted);
  return mid;
}

struct tb_summary tb_summarize(const double *values, size_t count) {
  struct tb_summary s = {NAN, NAN, NAN, count};
  if (count == 0) {
    return s;
  }
  s.p50 = tb_median(values, count);
  s.min = s.max = values[0];
  for (size_t i = 1; i < count; ++i) {
    s.min = fmin(s.min, values[i]);
    s.max = fmax(s.max, values[i]);
  }
  return s;
}
