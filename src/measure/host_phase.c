#include "measure/host_phase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"

/* Runs `calls` calls and waits for them; stores the wall time (and, for a
 * provider that times its own calls, the harness's time of the request in
 * *harness when harness is not NULL). */
static enum tb_status timed_calls(struct tb_provider *p, unsigned long calls, int64_t *elapsed,
                                  int64_t *harness, struct tb_error *err) {
  if (p->ops->host_sample != NULL) {
    int64_t around = 0;
    enum tb_status st = p->ops->host_sample(p, calls, elapsed, &around, err);
    if (harness != NULL) {
      *harness = around;
    }
    return st;
  }
  int64_t start = tb_monotonic_ns();
  if (p->ops->launch(p, calls, err) != TB_OK || p->ops->synchronize(p, err) != TB_OK) {
    return err->status;
  }
  *elapsed = tb_monotonic_ns() - start;
  return TB_OK;
}

unsigned long tb_calibrate_batch(double per_call_ns, double sample_ms) {
  if (!(per_call_ns > 0.0)) {
    return 1;
  }
  double calls = floor(sample_ms * 1e6 / per_call_ns + 0.5);
  if (calls < 1.0) {
    return 1;
  }
  return calls > (double)TB_MAX_BATCH_CALLS ? TB_MAX_BATCH_CALLS : (unsigned long)calls;
}

static enum tb_status alloc_samples(const struct tb_provider *p, struct tb_phase_samples *s,
                                    unsigned count, unsigned long calls, struct tb_error *err) {
  s->count = count;
  s->calls_per_sample = calls;
  s->elapsed_ns = calloc(count, sizeof *s->elapsed_ns);
  s->per_call_ns = calloc(count, sizeof *s->per_call_ns);
  s->harness_ns = p->ops->host_sample != NULL ? calloc(count, sizeof *s->harness_ns) : NULL;
  if (s->elapsed_ns == NULL || s->per_call_ns == NULL ||
      (p->ops->host_sample != NULL && s->harness_ns == NULL)) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for %u samples", count);
  }
  return TB_OK;
}

static void per_call_of(struct tb_phase_samples *s, size_t i) {
  s->per_call_ns[i] = (double)s->elapsed_ns[i] / (double)s->calls_per_sample;
}

static enum tb_status take_samples(struct tb_provider *p, struct tb_phase_samples *s,
                                   struct tb_error *err) {
  for (size_t i = 0; i < s->count; ++i) {
    if (timed_calls(p, s->calls_per_sample, &s->elapsed_ns[i],
                    s->harness_ns ? &s->harness_ns[i] : NULL, err) != TB_OK) {
      return err->status;
    }
    per_call_of(s, i);
  }
  s->summary = tb_summarize(s->per_call_ns, s->count);
  return TB_OK;
}

/* Throughput samples until the stopping rule says stop (docs/method.md
 * §2.6); s holds room for the rule's most. The decision is taken after every
 * whole sample, so no sample is ever cut short or dropped. */
struct decoy {
  const float *values; /* NULL: none */
  size_t count;
};

static enum tb_status take_until_stopped(struct tb_provider *p, const struct tb_stopping_rule *rule,
                                         struct decoy decoy, struct tb_phase_samples *s,
                                         struct tb_stopping_outcome *out, struct tb_error *err) {
  int64_t start = tb_monotonic_ns(), sampled = 0;
  size_t n = 0;
  out->reason = TB_STOP_NOT_YET;
  while (out->reason == TB_STOP_NOT_YET) {
    /* outside the timing: the output this batch leaves is its own work */
    if (decoy.values != NULL && p->ops->decoy_output(p, decoy.values, decoy.count, err) != TB_OK) {
      return err->status;
    }
    if (timed_calls(p, s->calls_per_sample, &s->elapsed_ns[n],
                    s->harness_ns ? &s->harness_ns[n] : NULL, err) != TB_OK) {
      return err->status;
    }
    per_call_of(s, n);
    sampled += s->elapsed_ns[n++];
    out->sampled_s = (double)sampled / 1e9;
    out->wall_s = (double)(tb_monotonic_ns() - start) / 1e9;
    out->reason =
        tb_stopping_decide(rule, s->per_call_ns, n, out->sampled_s, out->wall_s, &out->noise);
  }
  out->taken = n;
  s->count = n;
  s->summary = tb_summarize(s->per_call_ns, s->count);
  return TB_OK;
}

/* Warm-up: single calls until warmup_ms has passed (at least 3, so module
 * loads and first-touch faults stay out of the samples). Returns the median
 * of the last calls as the per-call estimate for calibration. */
static enum tb_status warm_up(struct tb_provider *p, double warmup_ms, struct tb_host_phase *out,
                              double *per_call_estimate, struct tb_error *err) {
  enum { RECENT = 5 };
  double recent[RECENT] = {0};
  int64_t start = tb_monotonic_ns(), elapsed = 0;
  unsigned long calls = 0;
  do {
    int64_t one = 0;
    if (timed_calls(p, 1, &one, NULL, err) != TB_OK) {
      return err->status;
    }
    recent[calls % RECENT] = (double)one;
    calls++;
    elapsed = tb_monotonic_ns() - start;
  } while (calls < 3 || (double)elapsed < warmup_ms * 1e6);
  out->warmup_calls = calls;
  out->warmup_ns = (double)elapsed;
  *per_call_estimate = tb_median(recent, calls < RECENT ? calls : RECENT);
  return TB_OK;
}

enum tb_status tb_measure_host_phase(struct tb_provider *p, const struct tb_measure_options *opt,
                                     const float *values, size_t decoy_count,
                                     struct tb_host_phase *out, struct tb_error *err) {
  memset(out, 0, sizeof *out);
  struct decoy decoy = {p->ops->decoy_output != NULL ? values : NULL, decoy_count};
  out->decoy_before_batches = decoy.values != NULL;
  double per_call = 0.0;
  if (warm_up(p, opt->warmup_ms, out, &per_call, err) != TB_OK) {
    return err->status;
  }
  tb_read_cpu_frequency(TB_CPU_FREQUENCY_ROOT, &out->cpu_before);
  unsigned long batch = tb_calibrate_batch(per_call, opt->sample_ms);
  out->rule = opt->stopping;
  if (!out->rule.by_noise) {
    out->rule.samples = opt->samples; /* one source for the fixed count */
  }
  if (alloc_samples(p, &out->throughput, tb_stopping_capacity(&out->rule), batch, err) != TB_OK ||
      take_until_stopped(p, &out->rule, decoy, &out->throughput, &out->stopping, err) != TB_OK) {
    return err->status;
  }
  /* as many latency samples as throughput samples were taken: the rule
   * judges the throughput samples, the latency ones follow their count */
  if (alloc_samples(p, &out->latency, (unsigned)out->stopping.taken, 1, err) != TB_OK ||
      take_samples(p, &out->latency, err) != TB_OK) {
    return err->status;
  }
  tb_read_cpu_frequency(TB_CPU_FREQUENCY_ROOT, &out->cpu_after);
  return TB_OK;
}
