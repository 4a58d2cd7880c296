#include "stats/stopping.h"

#include <math.h>

#include "stats/interval.h"

const char *tb_stop_reason_name(enum tb_stop_reason reason) {
  switch (reason) {
  case TB_STOP_FIXED_COUNT: return "fixed_count";
  case TB_STOP_CONVERGED: return "converged";
  case TB_STOP_MAX_SAMPLES: return "max_samples";
  case TB_STOP_TIMEOUT: return "timeout";
  case TB_STOP_NOT_YET: break;
  }
  return NULL;
}

unsigned tb_stopping_capacity(const struct tb_stopping_rule *rule) {
  unsigned most = rule->by_noise ? rule->max_samples : rule->samples;
  return most > 0 ? most : 1; /* the first sample is always taken */
}

/* The floors: the noise is only judged once both are met. */
static bool floors_met(const struct tb_stopping_rule *rule, size_t count, double sampled_s) {
  return count >= rule->min_samples && sampled_s >= rule->min_time_s;
}

enum tb_stop_reason tb_stopping_decide(const struct tb_stopping_rule *rule, const double *per_call,
                                       size_t count, double sampled_s, double wall_s,
                                       double *noise) {
  double cv = tb_robust_cv(per_call, count);
  if (noise != NULL) {
    *noise = cv;
  }
  if (!rule->by_noise) {
    return count >= rule->samples ? TB_STOP_FIXED_COUNT : TB_STOP_NOT_YET;
  }
  /* NaN (no positive median) never converges: !(cv <= bound) */
  if (floors_met(rule, count, sampled_s) && cv <= rule->max_noise) {
    return TB_STOP_CONVERGED;
  }
  if (count >= rule->max_samples) {
    return TB_STOP_MAX_SAMPLES;
  }
  return wall_s >= rule->timeout_s ? TB_STOP_TIMEOUT : TB_STOP_NOT_YET;
}

bool tb_stopping_not_converged(const struct tb_stopping_rule *rule,
                               const struct tb_stopping_outcome *outcome) {
  bool ceiling = outcome->reason == TB_STOP_MAX_SAMPLES || outcome->reason == TB_STOP_TIMEOUT;
  return rule->by_noise && ceiling && !(outcome->noise <= rule->max_noise);
}
