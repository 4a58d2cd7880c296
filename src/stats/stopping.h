/* When a timing phase stops taking samples (docs/method.md §2.6): a fixed
 * count, or the noise rule in the manner of nvbench's stdrel criterion:
 * sample until the robust noise of the samples so far (tb_robust_cv, the
 * measure of §3.1) is within a bound, with a floor of samples and sampled
 * time and a ceiling of samples and wall time. A pure function of the
 * samples, so the audit can re-derive every decision from the record. */
#ifndef TB_STATS_STOPPING_H
#define TB_STATS_STOPPING_H

#include <stdbool.h>
#include <stddef.h>

/* Bounds of the options (the CLI refuses values outside them). The noise
 * of fewer than 3 samples says nothing (the MAD of two is half their gap);
 * the ceiling keeps the per-sample re-computation (O(n log n) each) cheap. */
#define TB_STOP_MIN_SAMPLES_FLOOR 3u
#define TB_STOP_MAX_SAMPLES_CEILING 10000u

/* Defaults of the noise rule's parameters not given on the command line. */
#define TB_STOP_DEFAULT_MIN_SAMPLES 5u
#define TB_STOP_DEFAULT_MAX_SAMPLES 1000u
#define TB_STOP_DEFAULT_TIMEOUT_S 60.0

enum tb_stop_reason {
  TB_STOP_NOT_YET = 0,
  TB_STOP_FIXED_COUNT, /* the fixed rule's count was taken */
  TB_STOP_CONVERGED,   /* noise <= max_noise after the floors were met */
  TB_STOP_MAX_SAMPLES, /* max_samples taken without converging */
  TB_STOP_TIMEOUT      /* wall time reached timeout_s without converging */
};

struct tb_stopping_rule {
  bool by_noise;    /* false: exactly `samples` samples */
  unsigned samples; /* the fixed count */
  double max_noise; /* the noise rule: bound on tb_robust_cv */
  unsigned min_samples, max_samples;
  double min_time_s; /* floor on the sum of the samples' own timed lengths */
  double timeout_s;  /* ceiling on wall time since the phase's first sample began */
};

/* What a phase's stopping did; kept in its record. */
struct tb_stopping_outcome {
  enum tb_stop_reason reason;
  size_t taken;     /* samples taken */
  double noise;     /* tb_robust_cv of all of them (NaN when undefined) */
  double sampled_s; /* sum of their timed lengths */
  double wall_s;    /* wall time from the first sample's start to the last's end */
};

/* "fixed_count", "converged", "max_samples", "timeout" (NULL for NOT_YET). */
const char *tb_stop_reason_name(enum tb_stop_reason reason);

/* The decision after the count-th sample: per_call holds the count samples
 * so far, sampled_s and wall_s as in the outcome. Checked in this order:
 * converged, max_samples (or the fixed count), timeout; NOT_YET: take
 * another. *noise (may be NULL) gets tb_robust_cv of the samples so far. */
enum tb_stop_reason tb_stopping_decide(const struct tb_stopping_rule *rule, const double *per_call,
                                       size_t count, double sampled_s, double wall_s,
                                       double *noise);

/* The most samples the rule can take: the arrays a phase allocates. */
unsigned tb_stopping_capacity(const struct tb_stopping_rule *rule);

/* True when the phase stopped by a ceiling with its noise above the bound
 * (or undefined): the `not_converged` flag. */
bool tb_stopping_not_converged(const struct tb_stopping_rule *rule,
                               const struct tb_stopping_outcome *outcome);

#endif
