#include "results/device_result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool append(char ***list, size_t *count, const char *text) {
  char **grown = realloc(*list, (*count + 2) * sizeof **list);
  if (grown == NULL) {
    return false;
  }
  *list = grown;
  grown[*count] = strdup(text);
  if (grown[*count] == NULL) {
    return false;
  }
  grown[++*count] = NULL;
  return true;
}

bool tb_device_result_add_flag(struct tb_device_result *d, const char *text) {
  return append(&d->flags, &d->flag_count, text);
}

bool tb_device_result_add_error(struct tb_device_result *d, const char *text) {
  return append(&d->errors, &d->error_count, text);
}

static bool scope_init(struct tb_scope_samples *s, size_t n, bool is_probe) {
  s->is_probe = is_probe;
  s->elapsed_ns = calloc(n, sizeof(double));
  s->per_call_ns = calloc(n, sizeof(double));
  bool ok = s->elapsed_ns && s->per_call_ns;
  if (!is_probe) {
    s->host_elapsed_ns = calloc(n, sizeof(double));
    ok = ok && s->host_elapsed_ns;
  } else {
    s->kernel_sum_ns = calloc(n, sizeof(double));
    s->kernel_per_call_ns = calloc(n, sizeof(double));
    s->clock_drift_ns = calloc(n, sizeof(double));
    s->kernels = calloc(n, sizeof(uint64_t));
    s->launches = calloc(n, sizeof(uint64_t));
    s->side_stream_kernels = calloc(n, sizeof(uint64_t));
    s->kernels_before_launch = calloc(n, sizeof(uint64_t));
    ok = ok && s->kernel_sum_ns && s->kernel_per_call_ns && s->clock_drift_ns && s->kernels &&
         s->launches && s->side_stream_kernels && s->kernels_before_launch;
  }
  return ok;
}

static bool ratios_init(struct tb_paired_ratios *r, size_t n) {
  r->values = malloc((n ? n : 1) * sizeof(double));
  r->count = n;
  for (size_t i = 0; r->values != NULL && i < n; ++i) {
    r->values[i] = NAN;
  }
  return r->values != NULL;
}

bool tb_metric_result_init(struct tb_metric_result *m, unsigned calls_per_sample, size_t samples) {
  memset(m, 0, sizeof *m);
  m->calls_per_sample = calls_per_sample;
  m->samples = samples;
  m->order = calloc(samples + 1, sizeof *m->order);
  struct tb_clock_checks *c = &m->clock;
  size_t n = samples ? samples : 1;
  c->sm_clock_before_mhz = calloc(n, sizeof(unsigned));
  c->sm_clock_after_mhz = calloc(n, sizeof(unsigned));
  c->clocks_event_reasons = calloc(n, sizeof(uint64_t));
  c->kept_throttled = calloc(n, sizeof(bool));
  c->discard_budget = samples;
  c->discarded = calloc(c->discard_budget ? c->discard_budget : 1, sizeof *c->discarded);
  bool ok = m->order != NULL && c->sm_clock_before_mhz && c->sm_clock_after_mhz &&
            c->clocks_event_reasons && c->kept_throttled && c->discarded;
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    struct tb_mode_samples *s = &m->modes[mode];
    ok = scope_init(&s->control, samples, false) && scope_init(&s->probe, samples, true) &&
         ratios_init(&s->probe_over_control, samples) &&
         ratios_init(&s->over_eager_control, samples) && ok;
  }
  return ok;
}

static void scope_free(struct tb_scope_samples *s) {
  free(s->elapsed_ns);
  free(s->per_call_ns);
  free(s->host_elapsed_ns);
  free(s->kernel_sum_ns);
  free(s->kernel_per_call_ns);
  free(s->clock_drift_ns);
  free(s->kernels);
  free(s->launches);
  free(s->side_stream_kernels);
  free(s->kernels_before_launch);
}

static void metric_free(struct tb_metric_result *m) {
  for (size_t i = 0; m->order != NULL && i < m->samples; ++i) {
    free(m->order[i]);
  }
  free(m->order);
  free(m->clock.sm_clock_before_mhz);
  free(m->clock.sm_clock_after_mhz);
  free(m->clock.clocks_event_reasons);
  free(m->clock.kept_throttled);
  free(m->clock.discarded);
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    scope_free(&m->modes[mode].control);
    scope_free(&m->modes[mode].probe);
    free(m->modes[mode].probe_over_control.values);
    free(m->modes[mode].over_eager_control.values);
  }
}

static void list_free(char **list, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    free(list[i]);
  }
  free(list);
}

void tb_device_result_free(struct tb_device_result *d) {
  if (d == NULL) {
    return;
  }
  metric_free(&d->throughput);
  metric_free(&d->latency);
  list_free(d->flags, d->flag_count);
  list_free(d->errors, d->error_count);
  memset(d, 0, sizeof *d);
}
