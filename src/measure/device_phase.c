#include "measure/device_phase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/results.h"
#include "stats/stats.h"
#include "tilebench/timing.h"

/* Probe/control outside this range is reported as perturbation (docs/method.md §4). */
#define TB_PERTURBATION_LOW 0.95
#define TB_PERTURBATION_HIGH 1.05
/* Throttle reasons that mean lost clocks (power cap, slowdowns, thermal, brake). */
#define TB_THROTTLE_MASK (0x4ull | 0x8ull | 0x20ull | 0x40ull | 0x80ull)

unsigned tb_device_reps(double host_per_call_ns, double sample_ms) {
  unsigned long reps = tb_calibrate_batch(host_per_call_ns, sample_ms);
  return reps > TB_DEVICE_MAX_REPS ? TB_DEVICE_MAX_REPS : (unsigned)reps;
}

/* Raw samples of one scope of one metric. */
struct scope_samples {
  json_t *elapsed_ns, *per_call_ns;
  json_t *kernel_sum_ns, *kernels, *launches, *side_stream_kernels, *clock_drift_ns,
      *kernels_before_launch; /* probe only */
  double *per_call;
  double *kernel_per_call;
  size_t taken;
};

static void scope_init(struct scope_samples *s, unsigned samples, int probe) {
  memset(s, 0, sizeof *s);
  s->elapsed_ns = json_array();
  s->per_call_ns = json_array();
  s->per_call = calloc(samples, sizeof *s->per_call);
  if (probe) {
    s->kernel_sum_ns = json_array();
    s->kernels = json_array();
    s->launches = json_array();
    s->side_stream_kernels = json_array();
    s->clock_drift_ns = json_array();
    s->kernels_before_launch = json_array();
    s->kernel_per_call = calloc(samples, sizeof *s->kernel_per_call);
  }
}

static json_t *summary_json(const double *values, size_t count) {
  struct tb_summary s = tb_summarize(values, count);
  return json_pack("{s:o, s:o, s:o}", "p50", tb_json_number(s.p50), "min", tb_json_number(s.min),
                   "max", tb_json_number(s.max));
}

static json_t *scope_json(struct scope_samples *s, unsigned calls) {
  json_t *j = json_pack("{s:i, s:o, s:o, s:o}", "calls_per_sample", calls, "elapsed_ns",
                        s->elapsed_ns, "per_call_ns", s->per_call_ns, "per_call_summary_ns",
                        summary_json(s->per_call, s->taken));
  if (s->kernels != NULL) {
    json_object_set_new(j, "kernel_sum_ns", s->kernel_sum_ns);
    json_object_set_new(j, "kernels", s->kernels);
    json_object_set_new(j, "launches", s->launches);
    json_object_set_new(j, "side_stream_kernels", s->side_stream_kernels);
    json_object_set_new(j, "clock_drift_ns", s->clock_drift_ns);
    json_object_set_new(j, "kernels_before_launch", s->kernels_before_launch);
    json_object_set_new(j, "kernel_per_call_summary_ns",
                        summary_json(s->kernel_per_call, s->taken));
  }
  free(s->per_call);
  free(s->kernel_per_call);
  return j;
}

/* One timed sample: begin, `calls` calls, end. Returns the timing code. */
static int timed_sample(struct tb_provider *p, int probe, unsigned calls, unsigned capacity,
                        struct tb_timing_result *r, char *error, size_t error_size) {
  if (p->ops->device_sample != NULL) {
    return p->ops->device_sample(p, probe, calls, capacity, r, error, error_size);
  }
  void *stream = p->ops->device_stream(p);
  int rc = probe ? tb_timing_begin_probe(stream, capacity) : tb_timing_begin_control(stream);
  if (rc == TB_TIMING_OK) {
    struct tb_error err = {0};
    if (p->ops->launch(p, calls, &err) != TB_OK) {
      tb_timing_abort();
      snprintf(error, error_size, "%s", err.message);
      return TB_TIMING_E_CUDA;
    }
    tb_timing_declare_calls(calls);
    *r = tb_timing_result_for(NULL, 0);
    rc = tb_timing_end(r);
  }
  if (rc != TB_TIMING_OK) {
    snprintf(error, error_size, "%s %s: %s", probe ? "probe" : "control", tb_timing_code_name(rc),
             tb_timing_last_error());
  }
  return rc;
}

static void record(struct scope_samples *s, const struct tb_timing_result *r, unsigned calls) {
  json_array_append_new(s->elapsed_ns, tb_json_number(r->gpu_elapsed_ns));
  json_array_append_new(s->per_call_ns, tb_json_number(r->gpu_elapsed_ns / calls));
  s->per_call[s->taken] = r->gpu_elapsed_ns / calls;
  if (s->kernels != NULL) {
    json_array_append_new(s->kernel_sum_ns, tb_json_number(r->kernel_sum_ns));
    json_array_append_new(s->kernels, json_integer((json_int_t)r->kernels_seen));
    json_array_append_new(s->launches, json_integer((json_int_t)r->counted_launches));
    json_array_append_new(s->side_stream_kernels, json_integer((json_int_t)r->side_stream_kernels));
    json_array_append_new(s->clock_drift_ns, tb_json_number(r->clock_drift_ns));
    json_array_append_new(s->kernels_before_launch,
                          json_integer((json_int_t)r->kernels_before_launch));
    s->kernel_per_call[s->taken] = r->kernel_sum_ns / calls;
  }
  s->taken++;
}

struct metric_result {
  json_t *json;
  bool control_complete;
  double control_p50, kernel_p50, ratio_p50, ratio_min, ratio_max;
  size_t ratios;
  unsigned long long side_stream;
};

/* Throughput (calls = reps) or latency (calls = 1): alternating order. */
static struct metric_result measure_metric(struct tb_provider *p, unsigned calls, unsigned samples,
                                           bool probe_usable, json_t *errors) {
  struct scope_samples control, probe;
  scope_init(&control, samples, 0);
  scope_init(&probe, samples, 1);
  json_t *order = json_array(), *ratios = json_array();
  double *ratio = calloc(samples, sizeof *ratio);
  size_t ratio_count = 0;
  unsigned capacity = calls * p->ops->launches_per_call(p) + 16;
  struct metric_result m = {0};
  for (unsigned i = 0; i < samples; ++i) {
    int control_first = i % 2 == 0;
    json_array_append_new(order, json_string(control_first ? "control,probe" : "probe,control"));
    struct tb_timing_result rc_result, rp_result;
    int control_ok = 0, probe_ok = 0;
    for (int step = 0; step < 2; ++step) {
      int is_probe = control_first ? step == 1 : step == 0;
      char error[1200];
      if (is_probe && !probe_usable) {
        continue;
      }
      int rc = timed_sample(p, is_probe, calls, capacity, is_probe ? &rp_result : &rc_result, error,
                            sizeof error);
      if (rc != TB_TIMING_OK) {
        json_array_append_new(errors, json_string(error));
      } else if (is_probe) {
        probe_ok = 1;
        record(&probe, &rp_result, calls);
        m.side_stream += rp_result.side_stream_kernels;
      } else {
        control_ok = 1;
        record(&control, &rc_result, calls);
      }
    }
    /* The paired ratio of this sample: probe_i / control_i (docs/method.md §3). */
    if (control_ok && probe_ok && rc_result.gpu_elapsed_ns > 0) {
      ratio[ratio_count] = rp_result.gpu_elapsed_ns / rc_result.gpu_elapsed_ns;
      json_array_append_new(ratios, tb_json_number(ratio[ratio_count++]));
    } else {
      json_array_append_new(ratios, json_null());
    }
  }
  struct tb_summary rs = tb_summarize(ratio, ratio_count);
  m.control_complete = control.taken == samples;
  m.control_p50 = tb_median(control.per_call, control.taken);
  m.kernel_p50 = tb_median(probe.kernel_per_call, probe.taken);
  m.ratio_p50 = rs.p50;
  m.ratio_min = rs.min;
  m.ratio_max = rs.max;
  m.ratios = ratio_count;
  size_t probe_taken = probe.taken;
  m.json = json_pack("{s:i, s:o, s:o, s:o, s:o}", "calls_per_sample", calls, "order", order,
                     "control", scope_json(&control, calls), "probe",
                     probe_taken > 0 ? scope_json(&probe, calls) : json_null(),
                     "probe_over_control", ratios);
  if (probe_taken == 0) { /* free what scope_json would have taken */
    json_decref(probe.elapsed_ns);
    json_decref(probe.per_call_ns);
    json_decref(probe.kernel_sum_ns);
    json_decref(probe.kernels);
    json_decref(probe.launches);
    json_decref(probe.side_stream_kernels);
    json_decref(probe.clock_drift_ns);
    json_decref(probe.kernels_before_launch);
    free(probe.per_call);
    free(probe.kernel_per_call);
  }
  json_object_set_new(m.json, "probe_over_control_summary",
                      json_pack("{s:o, s:o, s:o, s:I}", "median", tb_json_number(rs.p50), "min",
                                tb_json_number(rs.min), "max", tb_json_number(rs.max), "pairs",
                                (json_int_t)ratio_count));
  free(ratio);
  return m;
}

static json_t *gpu_state_json(void) {
  struct tb_timing_gpu_state g;
  memset(&g, 0, sizeof g);
  g.struct_size = sizeof g;
  if (tb_timing_gpu_state(&g) != TB_TIMING_OK || !g.valid) {
    return json_pack("{s:b, s:s}", "valid", 0, "reason", tb_timing_last_error());
  }
  return json_pack("{s:b, s:i, s:i, s:i, s:i, s:I, s:i}", "valid", 1, "sm_clock_mhz",
                   g.sm_clock_mhz, "memory_clock_mhz", g.memory_clock_mhz, "max_sm_clock_mhz",
                   g.max_sm_clock_mhz, "temperature_c", g.temperature_c, "clocks_event_reasons",
                   (json_int_t)g.clocks_event_reasons, "power_mw", g.power_mw);
}

/* The hazard flags of docs/method.md §4 that this phase can see. */
static json_t *flags_json(const struct metric_result *thr, const struct tb_host_phase *host,
                          json_t *before, json_t *after) {
  json_t *flags = json_array();
  double host_p50 = host->throughput.summary.p50;
  if (thr->control_p50 >= 0.8 * host_p50 && thr->kernel_p50 < 0.5 * thr->control_p50) {
    json_array_append_new(flags, json_string("host-bound: GPU control time is close to host E2E "
                                             "time while kernels take far less; the GPU waited "
                                             "on the host"));
  }
  if (thr->ratios > 0 &&
      (thr->ratio_p50 < TB_PERTURBATION_LOW || thr->ratio_p50 > TB_PERTURBATION_HIGH)) {
    json_array_append_new(flags, json_string("probe perturbation: median probe/control outside "
                                             "[0.95, 1.05]"));
  }
  if (thr->side_stream > 0) {
    json_array_append_new(flags, json_string("side-stream work: the probe saw kernels on streams "
                                             "other than the timed one"));
  }
  json_int_t sm0 = json_integer_value(json_object_get(before, "sm_clock_mhz"));
  json_int_t sm1 = json_integer_value(json_object_get(after, "sm_clock_mhz"));
  if (sm0 > 0 && sm1 > 0 && (sm1 < sm0 * 9 / 10 || sm1 > sm0 * 11 / 10)) {
    json_array_append_new(flags, json_string("clock change: SM clock moved by more than 10% "
                                             "during the case"));
  }
  json_int_t reasons = json_integer_value(json_object_get(before, "clocks_event_reasons")) |
                       json_integer_value(json_object_get(after, "clocks_event_reasons"));
  if (reasons & (json_int_t)TB_THROTTLE_MASK) {
    json_array_append_new(flags, json_string("throttling: a power, slowdown or thermal clocks "
                                             "event reason was set"));
  }
  return flags;
}

void tb_measure_device_phase(struct tb_provider *p, const struct tb_measure_options *opt,
                             const struct tb_host_phase *host, struct tb_device_phase *out) {
  memset(out, 0, sizeof *out);
  json_t *errors = json_array();
  json_t *before = gpu_state_json();
  unsigned reps = tb_device_reps(host->throughput.summary.p50, opt->sample_ms);
  /* One discarded probe pass: CUPTI instruments modules as they load. */
  struct tb_timing_result warm;
  char error[1200];
  unsigned capacity = reps * p->ops->launches_per_call(p) + 16;
  bool probe_usable = false;
  if (opt->probe) {
    probe_usable = timed_sample(p, 1, reps, capacity, &warm, error, sizeof error) == TB_TIMING_OK;
    if (!probe_usable) {
      json_array_append_new(errors, json_string(error));
    }
  }
  struct metric_result thr = measure_metric(p, reps, opt->samples, probe_usable, errors);
  struct metric_result lat = measure_metric(p, 1, opt->samples, probe_usable, errors);
  json_t *after = gpu_state_json();
  out->control_complete = thr.control_complete && lat.control_complete;
  out->control_throughput_p50_ns = thr.control_p50;
  out->control_latency_p50_ns = lat.control_p50;
  json_t *flags = flags_json(&thr, host, before, after);
  out->json =
      json_pack("{s:s, s:s, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o}", "clock",
                "CUDA events (control); CUPTI kernel records (probe, instrumented)", "probe_state",
                probe_usable ? "measured"
                : opt->probe ? "unavailable"
                             : "disabled (--probe off)",
                "throughput", thr.json, "latency", lat.json, "control_complete",
                out->control_complete, "gpu_state_before", before, "gpu_state_after", after,
                "flags", flags, "errors", errors, "probe_warmup_discarded", json_true());
}

void tb_device_phase_free(struct tb_device_phase *phase) {
  json_decref(phase->json);
  memset(phase, 0, sizeof *phase);
}
