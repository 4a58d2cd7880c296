/* The device phase against the fake driver/CUPTI table and a fake GPU
 * provider: every batch mode's samples, their order and pairing, a mode
 * that cannot run recorded with its reason, the scope cross-checks, and the
 * "device" record written from the typed result. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "fake_cuda.h"
#include "measure/defences.h"
#include "measure/device_phase.h"
#include "results/device_json.h"
#include "test_support.h"

#define STREAM ((uintptr_t)7)
#define SIDE_STREAM ((uintptr_t)9)

/* A provider whose every call is one fake kernel on STREAM (or, to test the
 * defence launches_on_stream, on SIDE_STREAM, or no kernel at all). */
enum where { ON_STREAM, ON_SIDE_STREAM, NO_KERNEL };

struct fake_gpu {
  unsigned long captured; /* calls in the graph, 0: none */
  int fail_capture;
  int graphs_live;
  enum where where;
};

static enum tb_status gpu_launch(struct tb_provider *p, unsigned long calls, struct tb_error *err) {
  struct fake_gpu *g = p->state;
  for (unsigned long i = 0; i < calls && g->where != NO_KERNEL; ++i) {
    fake_launch(g->where == ON_STREAM ? STREAM : SIDE_STREAM, FAKE_DRIVER);
  }
  return TB_OK;
}
static bool gpu_has_device(const struct tb_provider *p) {
  return true;
}
static enum tb_status gpu_sync(struct tb_provider *p, struct tb_error *err) {
  return TB_OK;
}
static void *gpu_stream(const struct tb_provider *p) {
  return (void *)STREAM;
}
static unsigned gpu_launches_per_call(const struct tb_provider *p) {
  return 1;
}
static enum tb_status gpu_capture(struct tb_provider *p, unsigned long calls,
                                  struct tb_error *err) {
  struct fake_gpu *g = p->state;
  if (g->fail_capture) {
    return tb_fail(err, TB_ERR_RUN,
                   "cuStreamEndCapture: operation not permitted when stream "
                   "is capturing (fake)");
  }
  g->captured = calls;
  g->graphs_live = 1;
  return TB_OK;
}
static enum tb_status gpu_replay(struct tb_provider *p, struct tb_error *err) {
  struct fake_gpu *g = p->state;
  fake_graph_launch(STREAM, (int)g->captured);
  return TB_OK;
}
static void gpu_release_graph(struct tb_provider *p) {
  ((struct fake_gpu *)p->state)->graphs_live = 0;
}

static struct tb_provider_ops gpu_ops = {
    .has_device = gpu_has_device,
    .launch = gpu_launch,
    .synchronize = gpu_sync,
    .device_stream = gpu_stream,
    .launches_per_call = gpu_launches_per_call,
    .capture_graph = gpu_capture,
    .replay_graph = gpu_replay,
    .release_graph = gpu_release_graph,
};

static const unsigned ALL_MODES = (1u << TB_BATCH_GRAPH) | (1u << TB_BATCH_HELD);

/* A host phase of `per_call_ns` per call. */
static struct tb_host_phase host_of(double per_call_ns) {
  struct tb_host_phase h = {0};
  h.throughput.summary = (struct tb_summary){per_call_ns, per_call_ns, per_call_ns, 1};
  return h;
}

static struct tb_device_result measure_probe(struct tb_provider *p, unsigned modes, double host_ns,
                                             unsigned samples, bool probe) {
  struct tb_measure_options opt = {
      0.0, 0.01, samples, probe, modes, 1, {0}, 1.0, {0, "", 0, 0, 0, 0}, false};
  struct tb_host_phase host = host_of(host_ns);
  struct tb_device_result d;
  assert_true(tb_measure_device_phase(p, &opt, &host, &d));
  return d;
}

static struct tb_device_result measure(struct tb_provider *p, unsigned modes, double host_ns,
                                       unsigned samples) {
  return measure_probe(p, modes, host_ns, samples, true);
}

/* The defence launches_on_stream of a provider measured as `g` says,
 * its outcome returned and its detail in `detail`. */
static enum tb_defence_outcome on_stream_outcome(struct fake_gpu *g, bool probe,
                                                 struct tb_device_result *d, char *detail) {
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = g};
  *d = measure_probe(&p, ALL_MODES, 2000.0, 3, probe);
  struct tb_case_result r = {.device = d};
  tb_defend_launches_on_stream(&p, &r);
  strcpy(detail, r.defences[TB_DEFENCE_ON_STREAM].detail);
  return r.defences[TB_DEFENCE_ON_STREAM].outcome;
}

static bool has_flag(const struct tb_device_result *d, const char *text) {
  for (size_t i = 0; i < d->flag_count; ++i) {
    if (strstr(d->flags[i], text) != NULL) {
      return true;
    }
  }
  return false;
}

static int setup(void **state) {
  fake_install();
  return 0;
}

/* Eager, graph and held are each measured in every sample, in an order
 * reversed sample by sample, and paired within the sample. */
static void every_mode_is_measured_and_paired(void **state) {
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_device_result d = measure(&p, ALL_MODES, 2000.0, 4);
  const struct tb_metric_result *thr = &d.throughput;
  assert_true(d.control_complete);
  assert_string_equal(d.probe_state, "measured");
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    assert_true(thr->modes[mode].attempted);
    assert_int_equal(thr->modes[mode].control.taken, 4);
    assert_string_equal(thr->modes[mode].reason, "");
    assert_int_equal(thr->modes[mode].over_eager_control.pairs, 4);
  }
  assert_int_equal(thr->modes[TB_BATCH_GRAPH].probe.taken, 4);
  assert_int_equal(thr->modes[TB_BATCH_GRAPH].probe.launches[0], 1); /* one graph launch */
  assert_int_equal(thr->modes[TB_BATCH_GRAPH].probe.kernels[0], thr->calls_per_sample);
  assert_int_equal(thr->modes[TB_BATCH_HELD].probe.taken, 0); /* the probe is not held */
  assert_int_equal(F.holds_launched, 12); /* graph control, graph probe, held control */
  assert_string_equal(thr->order[0], "control,probe,graph.control,graph.probe,held.control");
  assert_string_equal(thr->order[1], "held.control,graph.probe,graph.control,probe,control");
  assert_true(thr->has_gap_free);
  assert_int_equal(thr->gap_free_mode, TB_BATCH_GRAPH);
  assert_int_equal(g.graphs_live, 0); /* released after the metric */
  /* the fake GPU runs 1000 ns a kernel whichever way it was launched */
  assert_true(fabs(thr->modes[TB_BATCH_GRAPH].over_eager_control.summary.p50 - 1.0) < 1e-6);
  /* latency is one eager call: no batch modes */
  assert_false(d.latency.modes[TB_BATCH_GRAPH].attempted);
  assert_int_equal(d.latency.modes[TB_BATCH_EAGER].control.taken, 4);
  assert_int_equal(d.flag_count, 0);

  json_t *j = tb_device_result_to_json(&d);
  json_t *t = json_object_get(j, "throughput");
  assert_string_equal(json_string_value(json_array_get(json_object_get(t, "order"), 1)),
                      "probe,control");
  json_t *graph = json_object_get(json_object_get(t, "batch_modes"), "graph");
  assert_int_equal(
      json_array_size(json_object_get(json_object_get(graph, "control"), "per_call_ns")), 4);
  assert_null(json_object_get(graph, "unavailable"));
  assert_string_equal(json_string_value(json_object_get(json_object_get(t, "gap_free"), "mode")),
                      "graph");
  assert_null(json_object_get(json_object_get(j, "latency"), "batch_modes"));
  json_decref(j);
  tb_device_result_free(&d);
}

/* A graph that cannot be captured, and a provider without graphs: the
 * mode is recorded as unavailable with the reason, never dropped. */
static void a_mode_that_cannot_run_says_why(void **state) {
  struct fake_gpu g = {.fail_capture = 1};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_device_result d = measure(&p, ALL_MODES, 2000.0, 3);
  const struct tb_mode_samples *graph = &d.throughput.modes[TB_BATCH_GRAPH];
  assert_true(graph->attempted);
  assert_int_equal(graph->control.taken, 0);
  assert_non_null(strstr(graph->reason, "graph capture failed: cuStreamEndCapture"));
  assert_int_equal(d.throughput.gap_free_mode, TB_BATCH_HELD);
  json_t *j = tb_device_result_to_json(&d);
  json_t *modes = json_object_get(json_object_get(j, "throughput"), "batch_modes");
  assert_non_null(
      strstr(json_string_value(json_object_get(json_object_get(modes, "graph"), "unavailable")),
             "capture failed"));
  json_decref(j);
  tb_device_result_free(&d);

  struct tb_provider_ops no_graphs = gpu_ops;
  no_graphs.capture_graph = NULL;
  p.ops = &no_graphs;
  d = measure(&p, 1u << TB_BATCH_GRAPH, 2000.0, 3);
  assert_string_equal(d.throughput.modes[TB_BATCH_GRAPH].reason,
                      "the provider cannot be captured into a graph");
  assert_false(d.throughput.modes[TB_BATCH_HELD].attempted); /* not asked for */
  assert_int_equal(d.throughput.gap_free_mode, TB_BATCH_EAGER);
  tb_device_result_free(&d);
}

/* A hold its time-out released fails each held sample closed (graph
 * replays are held too), with the library's message; eager is unaffected. */
static void a_stuck_hold_fails_its_samples(void **state) {
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  F.hold_stuck = 1;
  struct tb_device_result d = measure(&p, ALL_MODES, 2000.0, 3);
  const struct tb_mode_samples *held = &d.throughput.modes[TB_BATCH_HELD];
  assert_int_equal(held->control.taken, 0);
  assert_non_null(strstr(held->reason, "3 of 3 control samples failed"));
  assert_true(d.error_count >= 3);
  assert_non_null(strstr(d.errors[0], "graph control TB_TIMING_E_HOLD_TIMEOUT"));
  assert_true(d.control_complete);
  assert_int_equal(d.throughput.modes[TB_BATCH_GRAPH].control.taken, 0);
  assert_int_equal(d.throughput.modes[TB_BATCH_GRAPH].probe.taken, 0);
  assert_int_equal(d.throughput.modes[TB_BATCH_EAGER].control.taken, 3);
  tb_device_result_free(&d);
}

/* The noise rule on the device phase (docs/method.md §2.6): judged on the
 * eager control after each whole sample, so every scope of every sample
 * taken is there, in its alternating order, and every pair is complete. */
static void the_noise_rule_stops_whole_samples(void **state) {
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_measure_options opt = {
      0.0, 0.01, 20, true, ALL_MODES, 1, {0}, 1.0, {0, "", 0, 0, 0, 0}, false};
  opt.stopping = (struct tb_stopping_rule){
      .by_noise = true, .max_noise = 0.01, .min_samples = 4, .max_samples = 20, .timeout_s = 60};
  struct tb_host_phase host = host_of(2000.0);
  struct tb_device_result d;
  assert_true(tb_measure_device_phase(&p, &opt, &host, &d));
  const struct tb_metric_result *thr = &d.throughput;
  /* the fake GPU's kernels all take 1000 ns: noise 0 once min_samples are in */
  assert_int_equal(thr->samples, 4);
  assert_int_equal(thr->stopping.reason, TB_STOP_CONVERGED);
  assert_double_equal(thr->stopping.noise, 0.0, 0.0);
  assert_true(d.control_complete);
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    assert_int_equal(thr->modes[mode].control.taken, 4);
    assert_int_equal(thr->modes[mode].over_eager_control.count, 4);
    assert_int_equal(thr->modes[mode].over_eager_control.pairs, 4);
  }
  assert_int_equal(thr->modes[TB_BATCH_EAGER].probe_over_control.pairs, 4);
  assert_string_equal(thr->order[3], "held.control,graph.probe,graph.control,probe,control");
  assert_int_equal(d.latency.samples, 4); /* latency follows the throughput's count */
  assert_int_equal(d.latency.modes[TB_BATCH_EAGER].control.taken, 4);
  json_t *j = tb_device_result_to_json(&d);
  json_t *t = json_object_get(j, "throughput");
  json_t *stop = json_object_get(t, "stopping");
  assert_string_equal(json_string_value(json_object_get(stop, "reason")), "converged");
  assert_int_equal(json_integer_value(json_object_get(stop, "samples_taken")), 4);
  assert_int_equal(json_array_size(json_object_get(t, "scope_order")), 4);
  assert_int_equal(json_array_size(json_object_get(t, "probe_over_control")), 4);
  assert_null(json_object_get(json_object_get(j, "latency"), "stopping"));
  json_decref(j);
  tb_device_result_free(&d);

  /* a timeout before min_samples: one whole sample, no flag (its noise is 0) */
  opt.stopping.timeout_s = 1e-9;
  assert_true(tb_measure_device_phase(&p, &opt, &host, &d));
  assert_int_equal(d.throughput.samples, 1);
  assert_int_equal(d.throughput.stopping.reason, TB_STOP_TIMEOUT);
  assert_false(tb_stopping_not_converged(&d.throughput.rule, &d.throughput.stopping));
  assert_int_equal(d.throughput.modes[TB_BATCH_HELD].control.taken, 1);
  assert_true(d.control_complete);
  tb_device_result_free(&d);
}

/* An eager control slower per call than the host phase (here the host
 * phase says 100 ns a call, the fake GPU takes 1000) is host drift, flagged
 * with both figures and the host's own time around the eager batches; the
 * GPU time of each sample lies within the host's time around it. */
static void host_drift_is_flagged(void **state) {
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_device_result d = measure(&p, ALL_MODES, 100.0, 3);
  assert_true(has_flag(&d, "host drift: eager GPU control (1000 ns/call) exceeds the host "
                           "phase's end-to-end time (100 ns/call); the host took "));
  assert_false(has_flag(&d, "clocks disagree"));
  assert_false(has_flag(&d, "escaped"));
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    const struct tb_scope_samples *c = &d.throughput.modes[mode].control;
    assert_int_equal(c->taken, 3);
    for (size_t i = 0; i < c->taken; ++i) {
      assert_true(c->host_elapsed_ns[i] >= c->elapsed_ns[i]);
    }
  }
  json_t *j = tb_device_result_to_json(&d);
  json_t *eager = json_object_get(json_object_get(j, "throughput"), "control");
  assert_int_equal(json_array_size(json_object_get(eager, "host_elapsed_ns")), 3);
  assert_null(json_object_get(json_object_get(json_object_get(j, "throughput"), "probe"),
                              "host_elapsed_ns"));
  json_decref(j);
  tb_device_result_free(&d);
}

/* A GPU interval longer than the host's time around it cannot happen with
 * agreeing clocks: flagged per batch mode with the count and the worst
 * sample; within the events' resolution it is not. */
static void gpu_time_beyond_the_host_is_flagged(void **state) {
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  F.event_skew_ns = 5000000; /* each event 5 ms ahead: every sample ~5 ms beyond the host */
  struct tb_device_result d = measure(&p, 1u << TB_BATCH_GRAPH, 2000.0, 3);
  assert_true(has_flag(&d, "scope order: GPU control of a batch exceeds the host's time around "
                           "the same batch in 3 of 3 eager samples"));
  assert_true(has_flag(&d, "in 3 of 3 graph samples"));
  assert_true(has_flag(&d, "the GPU's and the host's clocks disagree"));
  tb_device_result_free(&d);
  F.event_skew_ns = 200; /* within the events' resolution */
  d = measure(&p, 1u << TB_BATCH_GRAPH, 2000.0, 3);
  assert_false(has_flag(&d, "clocks disagree"));
  tb_device_result_free(&d);
  F.event_skew_ns = 0;
}

/* Graph replays whose kernels leave the GPU idle between them are flagged with
 * both figures; gapless replays (every other test here) are not. */
static void graph_gaps_are_flagged(void **state) {
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  F.graph_gap_ns = 300; /* 1000 ns a kernel, 300 idle after each */
  struct tb_device_result d = measure(&p, ALL_MODES, 2000.0, 3);
  assert_true(has_flag(&d, "graph gaps: graph replays take 1300 ns/call, their kernels 1000 "
                           "ns/call: the GPU idled between the graph's kernels"));
  /* the fake's eager launches leave no gap, so the graph is also above eager control */
  assert_true(has_flag(&d, "graph control (1300 ns/call) exceeds eager control (1000 ns/call)"));
  assert_int_equal(d.flag_count, 2);
  assert_false(has_flag(&d, "escaped"));
  tb_device_result_free(&d);
  F.graph_gap_ns = 20; /* 2 %: within the scopes' tolerance */
  d = measure(&p, ALL_MODES, 2000.0, 3);
  assert_false(has_flag(&d, "graph gaps"));
  tb_device_result_free(&d);
}

/* Kernels all on the provider's stream pass, with what was counted: eager
 * and graph probes of the batch, the eager probe of one call, 3 samples. */
static void kernels_on_the_stream_pass(void **state) {
  struct fake_gpu g = {.where = ON_STREAM};
  struct tb_device_result d;
  char detail[400];
  assert_int_equal(on_stream_outcome(&g, true, &d, detail), TB_DEFENCE_PASSED);
  assert_non_null(strstr(detail, "in 9 probe sample(s), every one on the provider's stream"));
  assert_int_equal(d.probe_samples_without_kernels, 0);
  tb_device_result_free(&d);
}

/* Every kernel on another stream: the probe records them as side-stream
 * kernels and the defence fails, counting them. */
static void kernels_on_a_side_stream_fail(void **state) {
  struct fake_gpu g = {.where = ON_SIDE_STREAM};
  struct tb_device_result d;
  char detail[400];
  assert_int_equal(on_stream_outcome(&g, true, &d, detail), TB_DEFENCE_FAILED);
  const struct tb_scope_samples *probe = &d.throughput.modes[TB_BATCH_EAGER].probe;
  assert_int_equal(probe->taken, 3);
  assert_int_equal(probe->side_stream_kernels[0], probe->kernels[0]);
  assert_non_null(strstr(detail, "ran on a stream other than the provider's"));
  tb_device_result_free(&d);
}

/* Calls that launch no kernel: the library's TB_TIMING_E_EMPTY on the
 * probe's warm-up pass is counted (the probe is then unavailable, so that
 * pass is the only one) and fails the defence as "no kernel", not merely a
 * device error. */
static void calls_without_kernels_fail(void **state) {
  struct fake_gpu g = {.where = NO_KERNEL};
  struct tb_device_result d;
  char detail[400];
  assert_int_equal(on_stream_outcome(&g, true, &d, detail), TB_DEFENCE_FAILED);
  assert_string_equal(d.probe_state, "unavailable");
  assert_int_equal(d.probe_samples_without_kernels, 1);
  assert_non_null(strstr(d.errors[0], "TB_TIMING_E_EMPTY"));
  assert_non_null(strstr(detail, "1 probe sample(s) saw no kernel"));
  json_t *j = tb_device_result_to_json(&d);
  assert_int_equal(json_integer_value(json_object_get(j, "probe_samples_without_kernels")), 1);
  json_decref(j);
  tb_device_result_free(&d);
}

/* With the probe off nothing was counted: not run, with the reason, even
 * for a provider that would fail it. */
static void without_the_probe_it_does_not_run(void **state) {
  struct fake_gpu g = {.where = ON_SIDE_STREAM};
  struct tb_device_result d;
  char detail[400];
  assert_int_equal(on_stream_outcome(&g, false, &d, detail), TB_DEFENCE_NOT_RUN);
  assert_non_null(strstr(detail, "no probe sample (probe disabled (--probe off))"));
  tb_device_result_free(&d);
}

/* The NVML script: reads 0..n-1 return clocks[k] with reasons[k] (the last
 * repeating). Read 0 is the case's "before" snapshot, reads 1 and 2 the
 * warm-up's, then two a sample (before, after). */
static void script_clocks(const unsigned *clocks, const unsigned long long *reasons, size_t n) {
  fake_install_nvml();
  for (size_t k = 0; k < n; ++k) {
    F.sm_clock_mhz[k] = clocks[k];
    F.clocks_event_reasons[k] = reasons ? reasons[k] : 0;
  }
  F.clock_script_length = n;
}

static size_t kept_throttled(const struct tb_clock_checks *c, size_t samples) {
  size_t n = 0;
  for (size_t i = 0; i < samples; ++i) {
    n += c->kept_throttled[i];
  }
  return n;
}

/* A steady clock: every sample kept, its reads recorded, nothing flagged. */
static void steady_clocks_keep_every_sample(void **state) {
  fake_install_nvml();
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_device_result d = measure(&p, ALL_MODES, 2000.0, 3);
  assert_true(d.clock_warmup.checked);
  assert_true(d.clock_warmup.steady);
  assert_int_equal(d.clock_warmup.reads, 2);
  assert_int_equal(d.clock_warmup.sm_clock_mhz, 1980);
  const struct tb_clock_checks *c = &d.throughput.clock;
  assert_true(c->checked);
  assert_int_equal(c->reference_sm_clock_mhz, 1980);
  assert_int_equal(c->discarded_count, 0);
  assert_int_equal(c->sm_clock_after_mhz[2], 1980);
  assert_int_equal(d.flag_count, 0);
  json_t *j = tb_device_result_to_json(&d);
  json_t *checks = json_object_get(json_object_get(j, "throughput"), "clock_checks");
  assert_true(json_is_true(json_object_get(checks, "checked")));
  assert_int_equal(json_array_size(json_object_get(checks, "sm_clock_before_mhz")), 3);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(checks, "rule"), "discard_budget")), 3);
  assert_true(json_is_true(json_object_get(json_object_get(j, "clock_warmup"), "steady")));
  json_decref(j);
  tb_device_result_free(&d);
}

/* A clock drop after sample 0, then a throttle reason on its retake: both
 * attempts discarded with their reasons, sample 0 taken a third time, every
 * scope and pair of the kept samples whole. */
static void a_throttled_sample_is_discarded_and_taken_again(void **state) {
  static const unsigned clocks[] = {1980, 1980, 1980, 1980, 1500, 1980, 1980, 1980};
  static const unsigned long long reasons[] = {0, 0, 0, 0, 0, 0, 0x4, 0};
  script_clocks(clocks, reasons, 8);
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_device_result d = measure(&p, ALL_MODES, 2000.0, 3);
  const struct tb_clock_checks *c = &d.throughput.clock;
  assert_int_equal(c->discarded_count, 2);
  assert_int_equal(c->discarded[0].sample, 0);
  assert_int_equal(c->discarded[0].sm_clock_after_mhz, 1500);
  assert_non_null(strstr(c->discarded[0].reason, "SM clock"));
  assert_non_null(strstr(c->discarded[1].reason, "throttle reason 0x4"));
  assert_int_equal(d.throughput.samples, 3);
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    assert_int_equal(d.throughput.modes[mode].control.taken, 3);
    assert_int_equal(d.throughput.modes[mode].over_eager_control.pairs, 3);
  }
  assert_int_equal(d.throughput.modes[TB_BATCH_EAGER].probe_over_control.pairs, 3);
  assert_int_equal(kept_throttled(c, 3), 0);
  assert_int_equal(d.latency.clock.discarded_count, 0);
  assert_int_equal(d.flag_count, 0);
  tb_device_result_free(&d);
}

/* A clock that never comes back: the budget (one discard a sample) spent,
 * the rest kept and marked, and the case flagged. */
static void a_spent_budget_keeps_samples_and_flags(void **state) {
  static const unsigned clocks[] = {1980, 1980, 1980, 1500};
  script_clocks(clocks, NULL, 4);
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_device_result d = measure(&p, 1u << TB_BATCH_GRAPH, 2000.0, 3);
  const struct tb_clock_checks *c = &d.throughput.clock;
  assert_int_equal(c->discarded_count, 3);
  assert_int_equal(kept_throttled(c, 3), 3);
  assert_int_equal(d.throughput.modes[TB_BATCH_EAGER].control.taken, 3);
  assert_true(has_flag(&d, "throttling (throughput): 3 samples discarded, the budget of 3 spent"));
  assert_true(has_flag(&d, "throttling (latency)"));
  tb_device_result_free(&d);
}

/* A clock that keeps moving in the warm-up: at most 20 reads, then flagged. */
static void an_unsteady_warmup_is_flagged(void **state) {
  unsigned clocks[24];
  for (size_t k = 0; k < 24; ++k) {
    clocks[k] = k % 2 ? 1700 : 1980;
  }
  script_clocks(clocks, NULL, 24);
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_device_result d = measure(&p, 0, 2000.0, 2);
  assert_false(d.clock_warmup.steady);
  assert_int_equal(d.clock_warmup.reads, 20);
  assert_true(has_flag(&d, "clock not steady after warm-up: 20 reads"));
  tb_device_result_free(&d);
}

/* --clock-checks off: NVML there, nothing read or judged, and the record says so. */
static void clock_checks_can_be_turned_off(void **state) {
  fake_install_nvml();
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_measure_options opt = {0.0, 0.01, 2, true, 0, 1, {0}, 1.0, {0, "", 0, 0, 0, 0}, true};
  struct tb_host_phase host = host_of(2000.0);
  struct tb_device_result d;
  assert_true(tb_measure_device_phase(&p, &opt, &host, &d));
  assert_false(d.throughput.clock.checked);
  assert_string_equal(d.clock_warmup.why_unchecked, "disabled (--clock-checks off)");
  assert_int_equal(F.nvml_reads, 2); /* the case's before and after snapshots only */
  tb_device_result_free(&d);
}

/* Without NVML nothing is judged, and the record says why. */
static void without_nvml_the_clock_is_not_checked(void **state) {
  struct fake_gpu g = {0};
  struct tb_provider p = {.ops = &gpu_ops, .name = "fake", .state = &g};
  struct tb_device_result d = measure(&p, 0, 2000.0, 2);
  assert_false(d.throughput.clock.checked);
  assert_non_null(strstr(d.throughput.clock.why_unchecked, "no NVML clock read"));
  tb_device_result_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(every_mode_is_measured_and_paired, setup),
      cmocka_unit_test_setup(a_mode_that_cannot_run_says_why, setup),
      cmocka_unit_test_setup(a_stuck_hold_fails_its_samples, setup),
      cmocka_unit_test_setup(host_drift_is_flagged, setup),
      cmocka_unit_test_setup(gpu_time_beyond_the_host_is_flagged, setup),
      cmocka_unit_test_setup(graph_gaps_are_flagged, setup),
      cmocka_unit_test_setup(kernels_on_the_stream_pass, setup),
      cmocka_unit_test_setup(kernels_on_a_side_stream_fail, setup),
      cmocka_unit_test_setup(calls_without_kernels_fail, setup),
      cmocka_unit_test_setup(without_the_probe_it_does_not_run, setup),
      cmocka_unit_test_setup(the_noise_rule_stops_whole_samples, setup),
      cmocka_unit_test_setup(steady_clocks_keep_every_sample, setup),
      cmocka_unit_test_setup(a_throttled_sample_is_discarded_and_taken_again, setup),
      cmocka_unit_test_setup(a_spent_budget_keeps_samples_and_flags, setup),
      cmocka_unit_test_setup(an_unsteady_warmup_is_flagged, setup),
      cmocka_unit_test_setup(without_nvml_the_clock_is_not_checked, setup),
      cmocka_unit_test_setup(clock_checks_can_be_turned_off, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
