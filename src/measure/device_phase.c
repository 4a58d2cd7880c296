#include "measure/device_phase.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "measure/clock_guard.h"
#include "stats/stats.h"
#include "tilebench/timing.h"

/* Probe/control outside this range is reported as perturbation (docs/method.md §4). */
#define TB_PERTURBATION_LOW 0.95
#define TB_PERTURBATION_HIGH 1.05
/* Two scopes' medians differ "beyond noise" when apart by more than this
 * fraction, or by more than either one's own spread (max - min) / p50. */
#define TB_SCOPE_TOLERANCE 0.10
/* cuEventElapsedTime resolves about 0.5 us (CUDA's documentation), and the
 * GPU's clock and CLOCK_MONOTONIC may run a few parts per million apart: a
 * GPU interval more than this above the host's time around it is beyond both. */
#define TB_EVENT_RESOLUTION_NS 1000.0
#define TB_CLOCK_RATE_TOLERANCE 1e-5
/* A hold waits at least this long for the calls to be issued behind it. */
#define TB_HOLD_TIMEOUT_MIN_NS 1000000000ull

unsigned tb_device_reps(double host_per_call_ns, double sample_ms) {
  unsigned long reps = tb_calibrate_batch(host_per_call_ns, sample_ms);
  return reps > TB_DEVICE_MAX_REPS ? TB_DEVICE_MAX_REPS : (unsigned)reps;
}

/* One scope of one sample: a batch mode, control or probe. */
struct step {
  enum tb_batch_mode mode;
  bool probe;
};

/* What every sample of the phase shares. */
struct phase {
  struct tb_provider *p;
  uint64_t hold_timeout_ns;
  struct tb_device_result *out; /* its clock_warmup is every metric's reference */
};

static unsigned probe_capacity(const struct phase *ph, unsigned calls) {
  return calls * ph->p->ops->launches_per_call(ph->p) + 16;
}

/* Issues the sample's calls inside an open session. */
static enum tb_status issue(struct tb_provider *p, enum tb_batch_mode mode, unsigned calls,
                            struct tb_error *err) {
  return mode == TB_BATCH_GRAPH ? p->ops->replay_graph(p, err) : p->ops->launch(p, calls, err);
}

/* Opens the session of step s. A graph replay is held, probe and control
 * alike: the events then hold the graph's work alone, not the host's launch
 * of it nor, in the probe, CUPTI's work at its first launches (hundreds of
 * microseconds a sample on the H200, tests/gpu/probe_gaps.py); held eager
 * calls have no probe (their queueing under the probe's callbacks would
 * differ from the control's). */
static int begin_step(const struct phase *ph, struct step s, void *stream, unsigned capacity) {
  bool held = s.mode != TB_BATCH_EAGER;
  if (s.probe) {
    return held ? tb_timing_begin_probe_held(stream, capacity, ph->hold_timeout_ns)
                : tb_timing_begin_probe(stream, capacity);
  }
  return held ? tb_timing_begin_control_held(stream, ph->hold_timeout_ns)
              : tb_timing_begin_control(stream);
}

/* One timed sample: begin, the calls, end. Returns the timing code. */
static int sample_once(const struct phase *ph, struct step s, unsigned calls,
                       struct tb_timing_result *r, char *error, size_t error_size) {
  struct tb_provider *p = ph->p;
  unsigned capacity = probe_capacity(ph, calls);
  if (p->ops->device_sample != NULL) {
    return p->ops->device_sample(p, s.mode, s.probe, calls, capacity, r, error, error_size);
  }
  void *stream = p->ops->device_stream(p);
  int rc = begin_step(ph, s, stream, capacity);
  if (rc == TB_TIMING_OK) {
    struct tb_error err = {0};
    if (issue(p, s.mode, calls, &err) != TB_OK) {
      tb_timing_abort();
      snprintf(error, error_size, "%s %s: %s", tb_batch_mode_name(s.mode),
               s.probe ? "probe" : "control", err.message);
      return TB_TIMING_E_CUDA;
    }
    tb_timing_declare_calls(calls);
    *r = tb_timing_result_for(NULL, 0);
    rc = tb_timing_end(r);
  }
  if (rc != TB_TIMING_OK) {
    snprintf(error, error_size, "%s %s %s: %s", tb_batch_mode_name(s.mode),
             s.probe ? "probe" : "control", tb_timing_code_name(rc), tb_timing_last_error());
  }
  return rc;
}

/* sample_once, counting the probe samples that saw no kernel: for the
 * defence launches_on_stream that is the provider's outcome (its calls put
 * nothing on the GPU), not only a failed sample. */
static int timed_sample(const struct phase *ph, struct step s, unsigned calls,
                        struct tb_timing_result *r, char *error, size_t error_size) {
  int rc = sample_once(ph, s, calls, r, error, error_size);
  if (rc == TB_TIMING_E_EMPTY && s.probe) {
    ph->out->probe_samples_without_kernels++;
  }
  return rc;
}

static void record(struct tb_scope_samples *s, const struct tb_timing_result *r, unsigned calls) {
  size_t i = s->taken++;
  s->elapsed_ns[i] = r->gpu_elapsed_ns;
  s->per_call_ns[i] = r->gpu_elapsed_ns / calls;
  if (!s->is_probe) {
    s->host_elapsed_ns[i] =
        r->end_host_ns >= r->begin_host_ns ? (double)(r->end_host_ns - r->begin_host_ns) : NAN;
  } else {
    s->kernel_sum_ns[i] = r->kernel_sum_ns;
    s->kernel_per_call_ns[i] = r->kernel_sum_ns / calls;
    s->kernels[i] = r->kernels_seen;
    s->launches[i] = r->counted_launches;
    s->side_stream_kernels[i] = r->side_stream_kernels;
    s->clock_drift_ns[i] = r->clock_drift_ns;
    s->kernels_before_launch[i] = r->kernels_before_launch;
  }
}

/* The scopes of sample i: forward on even samples, reversed on odd ones, so
 * every pair of scopes is taken in both orders equally often (§3); eager
 * control comes first in the forward order (results/device_json.c relies on
 * it for the eager "order"). */
static size_t sample_order(const struct step *steps, size_t n, size_t i, struct step *order) {
  for (size_t k = 0; k < n; ++k) {
    order[k] = steps[i % 2 == 0 ? k : n - 1 - k];
  }
  return n;
}

static char *order_text(const struct step *order, size_t n) {
  char text[160] = "";
  size_t used = 0;
  for (size_t k = 0; k < n && used < sizeof text; ++k) {
    used += (size_t)snprintf(
        text + used, sizeof text - used, "%s%s%s%s", k ? "," : "",
        order[k].mode == TB_BATCH_EAGER ? "" : tb_batch_mode_name(order[k].mode),
        order[k].mode == TB_BATCH_EAGER ? "" : ".", order[k].probe ? "probe" : "control");
  }
  return strdup(text);
}

/* Paired ratio of sample i: a / b when both were taken in this sample. */
static void pair(struct tb_paired_ratios *r, size_t i, bool have, double a, double b) {
  if (have && b > 0.0) {
    r->values[i] = a / b;
  }
}

static void summarize_ratios(struct tb_paired_ratios *r) {
  double *finite = malloc((r->count ? r->count : 1) * sizeof *finite);
  size_t n = 0;
  for (size_t i = 0; finite != NULL && i < r->count; ++i) {
    if (isfinite(r->values[i])) {
      finite[n++] = r->values[i];
    }
  }
  r->pairs = n;
  r->summary = tb_summarize(finite, n);
  free(finite);
}

/* The stopping decision after whole sample i (docs/method.md §2.6), on the
 * eager control: the one scope every sample takes. Under the noise rule a
 * stop ends the metric at i + 1 samples, every scope and pair of them whole. */
static bool stop_after(struct tb_metric_result *m, size_t i, int64_t start_ns) {
  const struct tb_scope_samples *eager = &m->modes[TB_BATCH_EAGER].control;
  struct tb_stopping_outcome *o = &m->stopping;
  o->sampled_s = 0.0;
  for (size_t k = 0; k < eager->taken; ++k) {
    o->sampled_s += eager->elapsed_ns[k] / 1e9;
  }
  o->wall_s = (double)(tb_monotonic_ns() - start_ns) / 1e9;
  o->reason = tb_stopping_decide(&m->rule, eager->per_call_ns, eager->taken, o->sampled_s,
                                 o->wall_s, &o->noise);
  /* a fixed rule stops at the arrays' end whatever a failed sample left */
  if (!m->rule.by_noise) {
    o->reason = i + 1 >= m->samples ? TB_STOP_FIXED_COUNT : TB_STOP_NOT_YET;
  } else if (o->reason == TB_STOP_NOT_YET && i + 1 >= m->samples) {
    o->reason = TB_STOP_MAX_SAMPLES; /* eager samples failed: the arrays are full */
  }
  if (o->reason == TB_STOP_NOT_YET) {
    return false;
  }
  m->samples = i + 1;
  o->taken = m->samples;
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    m->modes[mode].probe_over_control.count = m->samples;
    m->modes[mode].over_eager_control.count = m->samples;
  }
  return true;
}

static void gpu_snapshot(struct tb_gpu_snapshot *s) {
  struct tb_timing_gpu_state g;
  memset(&g, 0, sizeof g);
  g.struct_size = sizeof g;
  memset(s, 0, sizeof *s);
  if (tb_timing_gpu_state(&g) != TB_TIMING_OK || !g.valid) {
    snprintf(s->reason, sizeof s->reason, "%s", tb_timing_last_error());
    return;
  }
  s->valid = true;
  s->sm_clock_mhz = g.sm_clock_mhz;
  s->memory_clock_mhz = g.memory_clock_mhz;
  s->max_sm_clock_mhz = g.max_sm_clock_mhz;
  s->temperature_c = g.temperature_c;
  s->clocks_event_reasons = g.clocks_event_reasons;
  s->power_mw = g.power_mw;
}

/* What one attempt at sample i took: which scopes and their GPU times. */
struct attempt {
  bool ok[TB_BATCH_MODE_COUNT][2];
  double elapsed[TB_BATCH_MODE_COUNT][2];
};

/* Takes every scope of sample i once, in the sample's order. */
static void attempt_sample(const struct phase *ph, struct tb_metric_result *m,
                           const struct step *steps, size_t n, size_t i, struct attempt *a) {
  struct step order[2 * TB_BATCH_MODE_COUNT];
  sample_order(steps, n, i, order);
  free(m->order[i]);
  m->order[i] = order_text(order, n);
  memset(a, 0, sizeof *a);
  for (size_t k = 0; k < n; ++k) {
    struct tb_mode_samples *mode = &m->modes[order[k].mode];
    struct tb_timing_result r;
    char error[1200];
    if (timed_sample(ph, order[k], m->calls_per_sample, &r, error, sizeof error) != TB_TIMING_OK) {
      tb_device_result_add_error(ph->out, error);
      continue;
    }
    record(order[k].probe ? &mode->probe : &mode->control, &r, m->calls_per_sample);
    a->ok[order[k].mode][order[k].probe] = true;
    a->elapsed[order[k].mode][order[k].probe] = r.gpu_elapsed_ns;
  }
}

/* Takes back what a discarded attempt recorded (every scope records at the
 * end of its arrays, so dropping the last entry of each is enough). */
static void forget_attempt(struct tb_metric_result *m, const struct attempt *a) {
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    if (a->ok[mode][0]) {
      m->modes[mode].control.taken--;
    }
    if (a->ok[mode][1]) {
      m->modes[mode].probe.taken--;
    }
  }
}

static void pair_attempt(struct tb_metric_result *m, size_t i, const struct attempt *a) {
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    struct tb_mode_samples *s = &m->modes[mode];
    pair(&s->probe_over_control, i, a->ok[mode][0] && a->ok[mode][1], a->elapsed[mode][1],
         a->elapsed[mode][0]);
    pair(&s->over_eager_control, i, a->ok[mode][0] && a->ok[TB_BATCH_EAGER][0], a->elapsed[mode][0],
         a->elapsed[TB_BATCH_EAGER][0]);
  }
}

static void sleep_ms(unsigned ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Sample i, taken again (after the recovery delay) while the clock reads
 * around it say throttled and the discard budget lasts (method §2.7). */
static void take_sample(const struct phase *ph, struct tb_metric_result *m,
                        const struct step *steps, size_t n, size_t i) {
  struct tb_clock_checks *clock = &m->clock;
  for (;;) {
    struct tb_gpu_snapshot before, after;
    struct attempt a;
    if (clock->checked) {
      gpu_snapshot(&before);
    }
    attempt_sample(ph, m, steps, n, i, &a);
    if (!clock->checked) {
      pair_attempt(m, i, &a);
      return;
    }
    gpu_snapshot(&after);
    char why[200];
    bool throttled =
        tb_clock_sample_throttled(clock->reference_sm_clock_mhz, &before, &after, why, sizeof why);
    if (!throttled || !tb_clock_discard(clock, i, &before, &after, why)) {
      tb_clock_keep(clock, i, &before, &after, throttled);
      pair_attempt(m, i, &a);
      return;
    }
    forget_attempt(m, &a);
    sleep_ms(TB_CLOCK_RECOVERY_MS);
  }
}

/* Takes the samples of one metric over `steps`, recording per scope and
 * pairing within each sample, until the metric's rule stops it. */
static void take_samples(const struct phase *ph, struct tb_metric_result *m,
                         const struct step *steps, size_t n) {
  int64_t start = tb_monotonic_ns();
  bool stopped = m->samples == 0;
  for (size_t i = 0; !stopped; ++i) {
    take_sample(ph, m, steps, n, i);
    stopped = stop_after(m, i, start);
  }
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    summarize_ratios(&m->modes[mode].probe_over_control);
    summarize_ratios(&m->modes[mode].over_eager_control);
  }
}

/* Makes the graphs of one throughput batch ready (captured, each launched
 * once by the provider, finished); the reason goes to the mode when they
 * cannot be. */
static bool prepare_graph(const struct phase *ph, struct tb_mode_samples *mode, unsigned calls) {
  struct tb_provider *p = ph->p;
  if (p->ops->device_sample != NULL) {
    return true; /* the provider captures its own on the first graph sample */
  }
  struct tb_error err = {0};
  if (p->ops->capture_graph == NULL) {
    snprintf(mode->reason, sizeof mode->reason, "the provider cannot be captured into a graph");
    return false;
  }
  if (p->ops->capture_graph(p, calls, &err) != TB_OK || p->ops->synchronize(p, &err) != TB_OK) {
    snprintf(mode->reason, sizeof mode->reason, "graph capture failed: %s", err.message);
    p->ops->release_graph(p);
    return false;
  }
  return true;
}

/* The scopes one metric takes: eager control and probe, then for the
 * throughput batch the graph and held modes asked for that apply. */
static size_t metric_steps(const struct phase *ph, struct tb_metric_result *m, bool throughput,
                           bool probe_usable, unsigned batch_modes, struct step *steps) {
  size_t n = 0;
  steps[n++] = (struct step){TB_BATCH_EAGER, false};
  if (probe_usable) {
    steps[n++] = (struct step){TB_BATCH_EAGER, true};
  }
  m->modes[TB_BATCH_EAGER].attempted = true;
  if (!throughput) {
    return n;
  }
  if (batch_modes & (1u << TB_BATCH_GRAPH)) {
    struct tb_mode_samples *graph = &m->modes[TB_BATCH_GRAPH];
    graph->attempted = true;
    if (prepare_graph(ph, graph, m->calls_per_sample)) {
      steps[n++] = (struct step){TB_BATCH_GRAPH, false};
      if (probe_usable) {
        steps[n++] = (struct step){TB_BATCH_GRAPH, true};
      }
    }
  }
  if (batch_modes & (1u << TB_BATCH_HELD)) {
    m->modes[TB_BATCH_HELD].attempted = true;
    steps[n++] = (struct step){TB_BATCH_HELD, false};
  }
  return n;
}

static void finish_metric(struct tb_metric_result *m) {
  static const enum tb_batch_mode preference[] = {TB_BATCH_GRAPH, TB_BATCH_HELD, TB_BATCH_EAGER};
  for (size_t k = 0; k < sizeof preference / sizeof preference[0]; ++k) {
    struct tb_mode_samples *s = &m->modes[preference[k]];
    if (s->attempted && s->control.taken == m->samples && m->samples > 0) {
      m->gap_free_mode = preference[k];
      m->has_gap_free = true;
      return;
    }
  }
}

/* One metric: `samples` is the fixed count, or the most the rule may take. */
static bool measure_metric(const struct phase *ph, struct tb_metric_result *m, unsigned calls,
                           unsigned samples, const struct tb_stopping_rule *rule, bool throughput,
                           bool probe_usable, unsigned batch_modes) {
  if (!tb_metric_result_init(m, calls, samples)) {
    return false;
  }
  m->rule = *rule;
  const struct tb_clock_warmup *w = &ph->out->clock_warmup;
  m->clock.checked = w->checked;
  m->clock.reference_sm_clock_mhz = w->sm_clock_mhz;
  m->clock.tolerance = TB_CLOCK_TOLERANCE;
  m->clock.reason_mask = TB_CLOCK_THROTTLE_MASK;
  m->clock.recovery_ms = TB_CLOCK_RECOVERY_MS;
  snprintf(m->clock.why_unchecked, sizeof m->clock.why_unchecked, "%s", w->why_unchecked);
  struct step steps[2 * TB_BATCH_MODE_COUNT];
  size_t n = metric_steps(ph, m, throughput, probe_usable, batch_modes, steps);
  take_samples(ph, m, steps, n);
  if (throughput && ph->p->ops->release_graph != NULL && ph->p->ops->device_sample == NULL) {
    ph->p->ops->release_graph(ph->p);
  }
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    struct tb_mode_samples *s = &m->modes[mode];
    if (s->attempted && s->control.taken < m->samples && s->reason[0] == '\0') {
      snprintf(s->reason, sizeof s->reason, "%zu of %zu control samples failed: see errors",
               m->samples - s->control.taken, m->samples);
    }
  }
  finish_metric(m);
  return true;
}

static struct tb_summary per_call(const struct tb_scope_samples *s) {
  return tb_summarize(s->per_call_ns, s->taken);
}

static double spread(const struct tb_summary *s) {
  return s->p50 > 0.0 ? (s->max - s->min) / s->p50 : 0.0;
}

/* Whether figure a lies above figure b beyond both one's noise. */
static bool above(const struct tb_summary *a, const struct tb_summary *b) {
  if (a->count == 0 || b->count == 0 || !(b->p50 > 0.0)) {
    return false;
  }
  double tolerance = fmax(TB_SCOPE_TOLERANCE, fmax(spread(a), spread(b)));
  return a->p50 > b->p50 * (1.0 + tolerance);
}

static void flag(struct tb_device_result *d, const char *fmt, double a, double b) {
  char text[512];
  snprintf(text, sizeof text, fmt, a, b);
  tb_device_result_add_flag(d, text);
}

/* The scopes must nest: kernel time (probe) <= host-gap-free control <=
 * eager control, each within its noise, and every throughput control sample
 * within the host's time around it (method §4). */
static struct tb_summary kernel_per_call(const struct tb_scope_samples *probe) {
  return tb_summarize(probe->kernel_per_call_ns, probe->taken);
}

/* The probe's kernel time of a batch mode against that mode's control. Above
 * it: the events on the timed stream missed work the kernels did. Below it, in
 * a graph: the GPU idled between the graph's kernels; not an error of the
 * timing, but the graph figure then holds idle time whose size can change from
 * one process to the next (method §2.3). Eager control always holds launch
 * gaps, so only graphs are flagged for them. */
static void check_kernels_against_control(struct tb_device_result *d, enum tb_batch_mode mode) {
  const struct tb_mode_samples *s = &d->throughput.modes[mode];
  struct tb_summary kernel = kernel_per_call(&s->probe), control = per_call(&s->control);
  char text[512];
  if (above(&kernel, &control)) {
    snprintf(text, sizeof text,
             "scope order: the probe's kernel time (%.4g ns/call) exceeds %s control (%.4g "
             "ns/call) of the same batch mode: work escaped the timed stream",
             kernel.p50, tb_batch_mode_name(mode), control.p50);
    tb_device_result_add_flag(d, text);
  } else if (mode == TB_BATCH_GRAPH && above(&control, &kernel)) {
    flag(d,
         "graph gaps: graph replays take %.4g ns/call, their kernels %.4g ns/call: the GPU "
         "idled between the graph's kernels",
         control.p50, kernel.p50);
  }
}

/* The GPU time of a control sample lies within the host's time around it
 * (taken before the start event's record and after the stop event's
 * synchronisation), whatever the batch mode: a sample above it by more than
 * the events' resolution and the clocks' rates means the GPU's and the
 * host's clocks disagree. */
static void check_control_within_host(struct tb_device_result *d, enum tb_batch_mode mode) {
  const struct tb_scope_samples *s = &d->throughput.modes[mode].control;
  size_t outside = 0, worst = 0;
  double worst_excess = 0.0;
  for (size_t i = 0; i < s->taken; ++i) {
    double excess = s->elapsed_ns[i] - s->host_elapsed_ns[i];
    double allowed = TB_EVENT_RESOLUTION_NS + TB_CLOCK_RATE_TOLERANCE * s->elapsed_ns[i];
    if (excess > allowed && (outside++ == 0 || excess > worst_excess)) {
      worst = i;
      worst_excess = excess;
    }
  }
  if (outside > 0) {
    char text[512];
    snprintf(text, sizeof text,
             "scope order: GPU control of a batch exceeds the host's time around the same "
             "batch in %zu of %zu %s samples (%.4g against %.4g ns): the GPU's and the host's "
             "clocks disagree",
             outside, s->taken, tb_batch_mode_name(mode), s->elapsed_ns[worst],
             s->host_elapsed_ns[worst]);
    tb_device_result_add_flag(d, text);
  }
}

/* Eager control and the host phase both time a launch-bound batch at the
 * host's launch rate, but seconds apart and in different company: the host's
 * speed changes over seconds, and what precedes each device sample (a probe
 * session, a graph replay, the clock reads) slows the next batch's first
 * calls (docs/method.md §2.3, tests/gpu/eager_scope_order.c). The host's own
 * time around the eager batches shows which figure moved. */
static void check_host_drift(struct tb_device_result *d, const struct tb_host_phase *host) {
  const struct tb_metric_result *thr = &d->throughput;
  const struct tb_scope_samples *eager = &thr->modes[TB_BATCH_EAGER].control;
  struct tb_summary gpu = per_call(eager);
  if (!above(&gpu, &host->throughput.summary)) {
    return;
  }
  double *around = malloc((eager->taken ? eager->taken : 1) * sizeof *around);
  if (around == NULL) {
    return;
  }
  size_t known = 0;
  for (size_t i = 0; i < eager->taken; ++i) {
    if (isfinite(eager->host_elapsed_ns[i])) {
      around[known++] = eager->host_elapsed_ns[i] / thr->calls_per_sample;
    }
  }
  char text[512];
  snprintf(text, sizeof text,
           "host drift: eager GPU control (%.4g ns/call) exceeds the host phase's end-to-end "
           "time (%.4g ns/call); the host took %.4g ns/call around the same eager batches, so "
           "it issued the calls slower in the device phase than in the host phase",
           gpu.p50, host->throughput.summary.p50, known ? tb_median(around, known) : NAN);
  free(around);
  tb_device_result_add_flag(d, text);
}

static void check_scopes(struct tb_device_result *d, const struct tb_host_phase *host) {
  const struct tb_metric_result *thr = &d->throughput;
  struct tb_summary eager = per_call(&thr->modes[TB_BATCH_EAGER].control);
  struct tb_summary graph = per_call(&thr->modes[TB_BATCH_GRAPH].control);
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    check_control_within_host(d, (enum tb_batch_mode)mode);
  }
  check_host_drift(d, host);
  if (above(&graph, &eager)) {
    flag(d, "scope order: graph control (%.4g ns/call) exceeds eager control (%.4g ns/call)",
         graph.p50, eager.p50);
  }
  check_kernels_against_control(d, TB_BATCH_EAGER);
  check_kernels_against_control(d, TB_BATCH_GRAPH);
}

static bool perturbed(const struct tb_paired_ratios *r) {
  return r->pairs > 0 &&
         (r->summary.p50 < TB_PERTURBATION_LOW || r->summary.p50 > TB_PERTURBATION_HIGH);
}

/* The hazard flags of docs/method.md §4 that this phase can see. */
static void check_hazards(struct tb_device_result *d, const struct tb_host_phase *host) {
  const struct tb_metric_result *thr = &d->throughput;
  const struct tb_mode_samples *eager = &thr->modes[TB_BATCH_EAGER];
  double control_p50 = tb_median(eager->control.per_call_ns, eager->control.taken);
  double kernel_p50 = tb_median(eager->probe.kernel_per_call_ns, eager->probe.taken);
  if (control_p50 >= 0.8 * host->throughput.summary.p50 && kernel_p50 < 0.5 * control_p50) {
    tb_device_result_add_flag(d, "host-bound: GPU control time is close to host E2E time while "
                                 "kernels take far less; the GPU waited on the host");
  }
  if (perturbed(&eager->probe_over_control)) {
    tb_device_result_add_flag(d, "probe perturbation: median probe/control outside [0.95, 1.05]");
  }
  if (perturbed(&thr->modes[TB_BATCH_GRAPH].probe_over_control)) {
    tb_device_result_add_flag(d, "probe perturbation (graph): median probe/control of graph "
                                 "replays outside [0.95, 1.05]");
  }
  uint64_t side = 0;
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    const struct tb_scope_samples *probe = &thr->modes[mode].probe;
    for (size_t i = 0; i < probe->taken; ++i) {
      side += probe->side_stream_kernels[i];
    }
  }
  if (side > 0) {
    tb_device_result_add_flag(d, "side-stream work: the probe saw kernels on streams other than "
                                 "the timed one");
  }
  unsigned sm0 = d->before.sm_clock_mhz, sm1 = d->after.sm_clock_mhz;
  if (sm0 > 0 && sm1 > 0 && (sm1 < sm0 * 9 / 10 || sm1 > sm0 * 11 / 10)) {
    tb_device_result_add_flag(d, "clock change: SM clock moved by more than 10% during the case");
  }
  if ((d->before.clocks_event_reasons | d->after.clocks_event_reasons) & TB_CLOCK_THROTTLE_MASK) {
    tb_device_result_add_flag(d, "throttling: a power, slowdown or thermal clocks event reason "
                                 "was set");
  }
  check_scopes(d, host);
}

/* Warm samples (eager control, results dropped) until two successive clock
 * reads agree: the reference of every sample's clock check (method §2.7). */
static void wait_for_steady_clock(const struct phase *ph, unsigned reps,
                                  struct tb_clock_warmup *w) {
  struct tb_gpu_snapshot previous, now;
  gpu_snapshot(&previous);
  if (!previous.valid) {
    snprintf(w->why_unchecked, sizeof w->why_unchecked, "no NVML clock read: %.200s",
             previous.reason);
    return;
  }
  int64_t start = tb_monotonic_ns();
  w->checked = true;
  w->reads = 1;
  for (;;) {
    struct tb_timing_result r;
    char error[1200];
    sample_once(ph, (struct step){TB_BATCH_EAGER, false}, reps, &r, error, sizeof error);
    gpu_snapshot(&now);
    w->reads++;
    w->steady = tb_clock_steady(&previous, &now);
    if (w->steady || w->reads >= TB_CLOCK_STEADY_MAX_READS || !now.valid) {
      break;
    }
    previous = now;
  }
  w->sm_clock_mhz = now.sm_clock_mhz;
  w->waited_ms = (double)(tb_monotonic_ns() - start) / 1e6;
  if (!w->steady) {
    char text[300];
    snprintf(text, sizeof text,
             "clock not steady after warm-up: %u reads, the last %u MHz (reference of the "
             "per-sample checks)",
             w->reads, now.sm_clock_mhz);
    tb_device_result_add_flag(ph->out, text);
  }
}

/* A hazard when throttled samples had to be kept: the discard budget ran out. */
static void check_kept_throttled(struct tb_device_result *d, const struct tb_metric_result *m,
                                 const char *metric) {
  size_t kept = 0;
  for (size_t i = 0; m->clock.checked && i < m->samples; ++i) {
    kept += m->clock.kept_throttled[i];
  }
  if (kept > 0) {
    char text[300];
    snprintf(text, sizeof text,
             "throttling (%s): %zu samples discarded, the budget of %zu spent; %zu samples kept "
             "although taken under throttling or a clock change",
             metric, m->clock.discarded_count, m->clock.discard_budget, kept);
    tb_device_result_add_flag(d, text);
  }
}

bool tb_measure_device_phase(struct tb_provider *p, const struct tb_measure_options *opt,
                             const struct tb_host_phase *host, struct tb_device_result *out) {
  memset(out, 0, sizeof *out);
  unsigned reps = tb_device_reps(host->throughput.summary.p50, opt->sample_ms);
  double batch_ns = host->throughput.summary.p50 * reps;
  struct phase ph = {p, TB_HOLD_TIMEOUT_MIN_NS, out};
  if (isfinite(batch_ns) && batch_ns * 20.0 > (double)ph.hold_timeout_ns) {
    ph.hold_timeout_ns = (uint64_t)(batch_ns * 20.0); /* room to issue the batch */
  }
  gpu_snapshot(&out->before);
  /* One discarded probe pass: CUPTI instruments modules as they load. */
  bool probe_usable = false;
  if (opt->probe) {
    struct tb_timing_result warm;
    char error[1200];
    probe_usable = timed_sample(&ph, (struct step){TB_BATCH_EAGER, true}, reps, &warm, error,
                                sizeof error) == TB_TIMING_OK;
    if (!probe_usable) {
      tb_device_result_add_error(out, error);
    }
  }
  if (opt->clock_checks_off) {
    snprintf(out->clock_warmup.why_unchecked, sizeof out->clock_warmup.why_unchecked,
             "disabled (--clock-checks off)");
  } else {
    wait_for_steady_clock(&ph, reps, &out->clock_warmup);
  }
  out->probe_state = probe_usable ? "measured"
                     : opt->probe ? "unavailable"
                                  : "disabled (--probe off)";
  /* throughput under the run's rule (the noise rule judged on its eager
   * control); latency takes as many samples as throughput did, as on the host */
  struct tb_stopping_rule rule = opt->stopping, fixed = {.samples = opt->samples};
  unsigned most = rule.by_noise ? rule.max_samples : opt->samples;
  if (!rule.by_noise) {
    rule = fixed;
  }
  if (!measure_metric(&ph, &out->throughput, reps, most, &rule, true, probe_usable,
                      opt->batch_modes)) {
    return false;
  }
  fixed.samples = (unsigned)out->throughput.samples;
  if (!measure_metric(&ph, &out->latency, 1, fixed.samples, &fixed, false, probe_usable, 0)) {
    return false;
  }
  gpu_snapshot(&out->after);
  out->control_complete =
      out->throughput.modes[TB_BATCH_EAGER].control.taken == out->throughput.samples &&
      out->latency.modes[TB_BATCH_EAGER].control.taken == out->latency.samples;
  check_hazards(out, host);
  check_kept_throttled(out, &out->throughput, "throughput");
  check_kept_throttled(out, &out->latency, "latency");
  return true;
}
