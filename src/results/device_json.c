#include "results/device_json.h"

#include <stdio.h>

#include "results/json_number.h"

static json_t *doubles(const double *values, size_t count) {
  json_t *a = json_array();
  for (size_t i = 0; i < count; ++i) {
    json_array_append_new(a, tb_json_number(values[i]));
  }
  return a;
}

static json_t *integers(const uint64_t *values, size_t count) {
  json_t *a = json_array();
  for (size_t i = 0; i < count; ++i) {
    json_array_append_new(a, json_integer((json_int_t)values[i]));
  }
  return a;
}

static json_t *summary_json(const double *values, size_t count) {
  struct tb_summary s = tb_summarize(values, count);
  return json_pack("{s:o, s:o, s:o}", "p50", tb_json_number(s.p50), "min", tb_json_number(s.min),
                   "max", tb_json_number(s.max));
}

static json_t *scope_json(const struct tb_scope_samples *s, unsigned calls) {
  json_t *j =
      json_pack("{s:i, s:o, s:o, s:o}", "calls_per_sample", calls, "elapsed_ns",
                doubles(s->elapsed_ns, s->taken), "per_call_ns", doubles(s->per_call_ns, s->taken),
                "per_call_summary_ns", summary_json(s->per_call_ns, s->taken));
  if (!s->is_probe) {
    json_object_set_new(j, "host_elapsed_ns", doubles(s->host_elapsed_ns, s->taken));
  } else {
    json_object_set_new(j, "kernel_sum_ns", doubles(s->kernel_sum_ns, s->taken));
    json_object_set_new(j, "kernels", integers(s->kernels, s->taken));
    json_object_set_new(j, "launches", integers(s->launches, s->taken));
    json_object_set_new(j, "side_stream_kernels", integers(s->side_stream_kernels, s->taken));
    json_object_set_new(j, "clock_drift_ns", doubles(s->clock_drift_ns, s->taken));
    json_object_set_new(j, "kernels_before_launch", integers(s->kernels_before_launch, s->taken));
    json_object_set_new(j, "kernel_per_call_summary_ns",
                        summary_json(s->kernel_per_call_ns, s->taken));
  }
  return j;
}

static json_t *probe_or_null(const struct tb_scope_samples *s, unsigned calls) {
  return s->taken > 0 ? scope_json(s, calls) : json_null();
}

static json_t *ratios_summary(const struct tb_paired_ratios *r) {
  return json_pack("{s:o, s:o, s:o, s:I}", "median", tb_json_number(r->summary.p50), "min",
                   tb_json_number(r->summary.min), "max", tb_json_number(r->summary.max), "pairs",
                   (json_int_t)r->pairs);
}

/* The eager control and probe's relative order in each sample: the device
 * phase takes its scopes forward on even samples and reversed on odd ones,
 * eager control first in the forward order. */
static json_t *eager_order(const struct tb_metric_result *m) {
  json_t *a = json_array();
  for (size_t i = 0; i < m->samples; ++i) {
    json_array_append_new(a, json_string(i % 2 == 0 ? "control,probe" : "probe,control"));
  }
  return a;
}

static json_t *mode_json(const struct tb_mode_samples *s, unsigned calls) {
  json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "control",
                        s->control.taken > 0 ? scope_json(&s->control, calls) : json_null(),
                        "probe", probe_or_null(&s->probe, calls), "probe_over_control",
                        doubles(s->probe_over_control.values, s->probe_over_control.count),
                        "probe_over_control_summary", ratios_summary(&s->probe_over_control),
                        "over_eager_control",
                        doubles(s->over_eager_control.values, s->over_eager_control.count),
                        "over_eager_control_summary", ratios_summary(&s->over_eager_control));
  if (s->reason[0] != '\0') {
    json_object_set_new(j, "unavailable", json_string(s->reason));
  }
  return j;
}

json_t *tb_stopping_json(const struct tb_stopping_rule *rule, const struct tb_stopping_outcome *o) {
  json_t *j =
      json_pack("{s:s, s:I, s:o, s:s?, s:o, s:o}", "rule", rule->by_noise ? "noise" : "fixed",
                "samples_taken", (json_int_t)o->taken, "noise", tb_json_number(o->noise), "reason",
                tb_stop_reason_name(o->reason), "sampled_s", tb_json_number(o->sampled_s), "wall_s",
                tb_json_number(o->wall_s));
  if (rule->by_noise) {
    json_object_set_new(j, "max_noise", tb_json_number(rule->max_noise));
    json_object_set_new(j, "min_samples", json_integer(rule->min_samples));
    json_object_set_new(j, "max_samples", json_integer(rule->max_samples));
    json_object_set_new(j, "min_time_s", tb_json_number(rule->min_time_s));
    json_object_set_new(j, "timeout_s", tb_json_number(rule->timeout_s));
  } else {
    json_object_set_new(j, "samples", json_integer(rule->samples));
  }
  json_t *flags = json_array();
  if (tb_stopping_not_converged(rule, o)) {
    char flag[200];
    snprintf(flag, sizeof flag,
             "not_converged: noise %.4g above the bound %.4g after %zu samples (%s)", o->noise,
             rule->max_noise, o->taken, tb_stop_reason_name(o->reason));
    json_array_append_new(flags, json_string(flag));
  }
  json_object_set_new(j, "flags", flags);
  return j;
}

static json_t *discarded_json(const struct tb_discarded_sample *d) {
  return json_pack("{s:I, s:s, s:i, s:i, s:I}", "sample", (json_int_t)d->sample, "reason",
                   d->reason, "sm_clock_before_mhz", d->sm_clock_before_mhz, "sm_clock_after_mhz",
                   d->sm_clock_after_mhz, "clocks_event_reasons",
                   (json_int_t)d->clocks_event_reasons);
}

static json_t *unsigned_array(const unsigned *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; ++i) {
    json_array_append_new(a, json_integer(v[i]));
  }
  return a;
}

/* The per-sample clock checks (docs/results-schema.md, schema 7). */
static json_t *clock_checks_json(const struct tb_clock_checks *c, size_t samples) {
  if (!c->checked) {
    return json_pack("{s:b, s:s}", "checked", 0, "why_unchecked", c->why_unchecked);
  }
  json_t *reasons = json_array(), *kept_throttled = json_array(), *discarded = json_array();
  for (size_t i = 0; i < samples; ++i) {
    json_array_append_new(reasons, json_integer((json_int_t)c->clocks_event_reasons[i]));
    json_array_append_new(kept_throttled, json_boolean(c->kept_throttled[i]));
  }
  for (size_t i = 0; i < c->discarded_count; ++i) {
    json_array_append_new(discarded, discarded_json(&c->discarded[i]));
  }
  json_t *rule = json_pack("{s:o, s:I, s:i, s:I}", "tolerance", tb_json_number(c->tolerance),
                           "reason_mask", (json_int_t)c->reason_mask, "recovery_ms", c->recovery_ms,
                           "discard_budget", (json_int_t)c->discard_budget);
  return json_pack("{s:b, s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "checked", 1,
                   "reference_sm_clock_mhz", c->reference_sm_clock_mhz, "rule", rule,
                   "sm_clock_before_mhz", unsigned_array(c->sm_clock_before_mhz, samples),
                   "sm_clock_after_mhz", unsigned_array(c->sm_clock_after_mhz, samples),
                   "clocks_event_reasons", reasons, "kept_throttled", kept_throttled, "discarded",
                   discarded);
}

static json_t *metric_json(const struct tb_metric_result *m, bool throughput) {
  const struct tb_mode_samples *eager = &m->modes[TB_BATCH_EAGER];
  unsigned calls = m->calls_per_sample;
  json_t *j = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o}", "calls_per_sample", calls, "order",
                        eager_order(m), "control", scope_json(&eager->control, calls), "probe",
                        probe_or_null(&eager->probe, calls), "probe_over_control",
                        doubles(eager->probe_over_control.values, eager->probe_over_control.count),
                        "probe_over_control_summary", ratios_summary(&eager->probe_over_control));
  if (throughput) {
    json_object_set_new(j, "stopping", tb_stopping_json(&m->rule, &m->stopping));
  }
  json_object_set_new(j, "clock_checks", clock_checks_json(&m->clock, m->samples));
  json_t *modes = json_object();
  for (int mode = TB_BATCH_GRAPH; mode < TB_BATCH_MODE_COUNT; ++mode) {
    if (m->modes[mode].attempted) {
      json_object_set_new(modes, tb_batch_mode_name(mode), mode_json(&m->modes[mode], calls));
    }
  }
  if (json_object_size(modes) == 0) {
    json_decref(modes);
    return j;
  }
  json_t *sequence = json_array();
  for (size_t i = 0; i < m->samples; ++i) {
    json_array_append_new(sequence, json_string(m->order[i] ? m->order[i] : ""));
  }
  json_object_set_new(j, "batch_modes", modes);
  json_object_set_new(j, "scope_order", sequence);
  if (m->has_gap_free) {
    const struct tb_scope_samples *c = &m->modes[m->gap_free_mode].control;
    json_object_set_new(j, "gap_free",
                        json_pack("{s:s, s:o}", "mode", tb_batch_mode_name(m->gap_free_mode),
                                  "per_call_p50_ns",
                                  tb_json_number(tb_median(c->per_call_ns, c->taken))));
  }
  return j;
}

static json_t *snapshot_json(const struct tb_gpu_snapshot *g) {
  if (!g->valid) {
    return json_pack("{s:b, s:s}", "valid", 0, "reason", g->reason);
  }
  return json_pack("{s:b, s:i, s:i, s:i, s:i, s:I, s:i}", "valid", 1, "sm_clock_mhz",
                   g->sm_clock_mhz, "memory_clock_mhz", g->memory_clock_mhz, "max_sm_clock_mhz",
                   g->max_sm_clock_mhz, "temperature_c", g->temperature_c, "clocks_event_reasons",
                   (json_int_t)g->clocks_event_reasons, "power_mw", g->power_mw);
}

static json_t *strings(char *const *list, size_t count) {
  json_t *a = json_array();
  for (size_t i = 0; i < count; ++i) {
    json_array_append_new(a, json_string(list[i]));
  }
  return a;
}

static json_t *warmup_json(const struct tb_clock_warmup *w) {
  if (!w->checked) {
    return json_pack("{s:b, s:s}", "checked", 0, "why_unchecked", w->why_unchecked);
  }
  return json_pack("{s:b, s:b, s:i, s:i, s:o}", "checked", 1, "steady", w->steady, "reads",
                   w->reads, "sm_clock_mhz", w->sm_clock_mhz, "waited_ms",
                   tb_json_number(w->waited_ms));
}

json_t *tb_device_result_to_json(const struct tb_device_result *d) {
  json_t *j = json_pack(
      "{s:s, s:s, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:I}", "clock",
      "CUDA events (control); CUPTI kernel records (probe, instrumented)", "probe_state",
      d->probe_state ? d->probe_state : "unavailable", "throughput",
      metric_json(&d->throughput, true), "latency", metric_json(&d->latency, false),
      "control_complete", d->control_complete, "gpu_state_before", snapshot_json(&d->before),
      "gpu_state_after", snapshot_json(&d->after), "flags", strings(d->flags, d->flag_count),
      "errors", strings(d->errors, d->error_count), "probe_warmup_discarded", json_true(),
      "probe_samples_without_kernels", (json_int_t)d->probe_samples_without_kernels);
  json_object_set_new(j, "clock_warmup", warmup_json(&d->clock_warmup));
  return j;
}
