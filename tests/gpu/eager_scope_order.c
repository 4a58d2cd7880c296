/* Why an eager batch's GPU control can run slower per call than the host's
 * end-to-end time of the same calls (issue 18, "scope order"). Both scopes
 * of a launch-bound batch measure how fast the host issues launches, so
 * this times one short kernel (an add of 17 x 257 floats, launch-bound like
 * native add 17x257) with a host timestamp around every launch, under each
 * condition the device phase differs in from the host phase:
 *   host R       launches + stream synchronize, host clock (the host phase)
 *   events R     the same launches inside a control session (CUDA events)
 *   events after X  the same, right after what precedes a device-phase
 *                sample: a probe session (CUPTI attached, then finalized),
 *                a held graph replay, two NVML reads (the clock guard)
 * Conditions take turns sample by sample (a rotating order), so drift
 * over the run falls on all alike. Writes JSON to argv[1]; prints a table.
 * Run by scripts/gpu.sh (stage scope-order). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "backends/cuda/driver.h"
#include "backends/cuda/graph.h"
#include "backends/cuda/nvrtc.h"
#include "core/clock.h"
#include "stats/stats.h"
#include "tilebench/timing.h"

enum { CALLS = 64, HOST_LARGE_CALLS = 1024, SAMPLES = 41, ELEMENTS = 17 * 257, BLOCK = 128 };

static const char *source = "extern \"C\" __global__ void add(const float *a, const float *b, "
                            "float *out, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i < n) out[i] = a[i] + b[i];\n"
                            "}\n";

static const struct tb_cuda *cu;
static CUstream stream;
static CUfunction k_add;
static void *add_args[4];

static struct tb_cuda_graph graph; /* CALLS adds, for the held replay */

enum condition {
  HOST,
  HOST_LARGE,
  EVENTS,
  EVENTS_LARGE,
  EVENTS_AFTER_PROBE,
  EVENTS_AFTER_GRAPH,
  EVENTS_AFTER_NVML,
  HOST_AFTER_PROBE,
  CONDITIONS
};
static const char *names[CONDITIONS] = {
    "host 64",           "host 1024",          "events 64",
    "events 1024",       "events after probe", "events after graph",
    "events after nvml", "host after probe",
};

/* One batch's figures, ns a call. */
struct batch {
  double gpu;          /* events: elapsed / calls; NaN for host batches */
  double host;         /* first launch to the batch's end (sync or end) */
  double issue;        /* first launch's start to the last launch's return */
  double launch_p50;   /* median time between two launches' starts */
  double head_gap;     /* the same over the batch's first 8 launches */
  double first_launch; /* the first launch's own host time, ns (not per call) */
};

static void add_launch(void) {
  if (cu->cuLaunchKernel(k_add, (ELEMENTS + BLOCK - 1) / BLOCK, 1, 1, BLOCK, 1, 1, 0, stream,
                         add_args, NULL) != CUDA_SUCCESS) {
    fprintf(stderr, "launch failed\n");
    exit(1);
  }
}

/* calls launches with a timestamp before each and after the last. */
static void issue_calls(unsigned calls, int64_t *stamps) {
  for (unsigned k = 0; k < calls; ++k) {
    stamps[k] = tb_monotonic_ns();
    add_launch();
  }
  stamps[calls] = tb_monotonic_ns();
}

static struct batch timed_batch(bool events, unsigned calls) {
  static int64_t stamps[HOST_LARGE_CALLS + 1];
  static double gaps[HOST_LARGE_CALLS];
  struct batch b = {NAN, NAN, NAN, NAN, NAN, NAN};
  if (events && tb_timing_begin_control(stream) != TB_TIMING_OK) {
    return b;
  }
  issue_calls(calls, stamps);
  if (events) {
    tb_timing_declare_calls(calls);
    struct tb_timing_result r = tb_timing_result_for(NULL, 0);
    if (tb_timing_end(&r) != TB_TIMING_OK) {
      return b;
    }
    b.gpu = r.gpu_elapsed_ns / calls;
  } else if (cu->cuStreamSynchronize(stream) != CUDA_SUCCESS) {
    return b;
  }
  int64_t end = tb_monotonic_ns();
  for (unsigned k = 0; k + 1 < calls; ++k) {
    gaps[k] = (double)(stamps[k + 1] - stamps[k]);
  }
  b.host = (double)(end - stamps[0]) / calls;
  b.issue = (double)(stamps[calls] - stamps[0]) / calls;
  b.head_gap = tb_median(gaps, 8);
  b.launch_p50 = tb_median(gaps, calls - 1);
  b.first_launch = (double)(stamps[1] - stamps[0]);
  return b;
}

/* What precedes a device-phase sample, outside the measured batch. */
static void probe_session(void) {
  if (tb_timing_begin_probe(stream, CALLS + 16) == TB_TIMING_OK) {
    for (unsigned k = 0; k < CALLS; ++k) {
      add_launch();
    }
    tb_timing_declare_calls(CALLS);
    struct tb_timing_result r = tb_timing_result_for(NULL, 0);
    tb_timing_end(&r);
  }
}

static void held_graph_replay(void) {
  if (tb_timing_begin_control_held(stream, 1000000000ull) == TB_TIMING_OK) {
    struct tb_error err = {0};
    tb_cuda_graph_launch(cu, &graph, stream, &err);
    tb_timing_declare_calls(CALLS);
    struct tb_timing_result r = tb_timing_result_for(NULL, 0);
    tb_timing_end(&r);
  }
}

static void nvml_reads(void) {
  for (int k = 0; k < 2; ++k) {
    struct tb_timing_gpu_state g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    tb_timing_gpu_state(&g);
  }
}

static struct batch run_condition(enum condition c) {
  switch (c) {
  case HOST: return timed_batch(false, CALLS);
  case HOST_LARGE: return timed_batch(false, HOST_LARGE_CALLS);
  case EVENTS: return timed_batch(true, CALLS);
  case EVENTS_LARGE: return timed_batch(true, HOST_LARGE_CALLS);
  case EVENTS_AFTER_PROBE: probe_session(); return timed_batch(true, CALLS);
  case EVENTS_AFTER_GRAPH: held_graph_replay(); return timed_batch(true, CALLS);
  case EVENTS_AFTER_NVML: nvml_reads(); return timed_batch(true, CALLS);
  case HOST_AFTER_PROBE: probe_session(); return timed_batch(false, CALLS);
  default: return timed_batch(false, CALLS);
  }
}

/* tb_cuda_issue: the adds a graph holds. */
static enum tb_status issue_adds(void *unused, unsigned long calls, struct tb_error *err) {
  (void)unused, (void)err;
  for (unsigned long k = 0; k < calls; ++k) {
    add_launch();
  }
  return TB_OK;
}

static int setup(void) {
  static CUdeviceptr a, b, out;
  static int n = ELEMENTS;
  CUdevice dev;
  CUcontext ctx;
  if ((cu = tb_cuda()) == NULL || tb_cuda_enter_device0(cu, &dev, &ctx) != CUDA_SUCCESS) {
    printf("no GPU\n");
    return 0;
  }
  int major = 0, minor = 0;
  cu->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cu->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
  struct tb_compiled compiled;
  struct tb_error err = {0};
  CUmodule module;
  if (tb_nvrtc_compile(source, arch, &compiled, &err) != TB_OK ||
      cu->cuModuleLoadData(&module, compiled.cubin) != CUDA_SUCCESS ||
      cu->cuModuleGetFunction(&k_add, module, "add") != CUDA_SUCCESS) {
    printf("kernel not built: %s\n", err.message);
    return 0;
  }
  tb_compiled_free(&compiled);
  cu->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  cu->cuMemAlloc(&a, ELEMENTS * 4);
  cu->cuMemAlloc(&b, ELEMENTS * 4);
  cu->cuMemAlloc(&out, ELEMENTS * 4);
  add_args[0] = &a, add_args[1] = &b, add_args[2] = &out, add_args[3] = &n;
  if (tb_cuda_graph_capture(cu, stream, issue_adds, NULL, CALLS, &graph, &err) != TB_OK) {
    printf("no graph: %s\n", err.message);
    return 0;
  }
  return 1;
}

static double median_of(const struct batch *b, size_t count, size_t offset) {
  double v[SAMPLES];
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    double x = *(const double *)((const char *)&b[i] + offset);
    if (!isnan(x)) {
      v[n++] = x;
    }
  }
  return n ? tb_median(v, n) : NAN;
}

#define MEDIAN(b, field) median_of(b, SAMPLES, offsetof(struct batch, field))

/* A figure, or null for one not measured (jansson has no NaN). */
static json_t *figure(double v) {
  return isnan(v) ? json_null() : json_real(v);
}

static json_t *condition_json(const struct batch *b) {
  json_t *o = json_object(), *gpu = json_array(), *host = json_array();
  for (size_t i = 0; i < SAMPLES; ++i) {
    json_array_append_new(gpu, figure(b[i].gpu));
    json_array_append_new(host, figure(b[i].host));
  }
  json_object_set_new(o, "gpu_per_call_ns", gpu);
  json_object_set_new(o, "host_per_call_ns", host);
  json_object_set_new(o, "gpu_p50_ns", figure(MEDIAN(b, gpu)));
  json_object_set_new(o, "host_p50_ns", figure(MEDIAN(b, host)));
  json_object_set_new(o, "issue_p50_ns", figure(MEDIAN(b, issue)));
  json_object_set_new(o, "launch_gap_p50_ns", figure(MEDIAN(b, launch_p50)));
  json_object_set_new(o, "head_gap_p50_ns", figure(MEDIAN(b, head_gap)));
  json_object_set_new(o, "first_launch_p50_ns", figure(MEDIAN(b, first_launch)));
  return o;
}

/* Writes the facts to path through a temporary file renamed into place, so
 * a failed or interrupted write leaves no file that looks complete. */
static bool write_whole(const json_t *facts, const char *path) {
  char partial[4096];
  snprintf(partial, sizeof partial, "%s.partial", path);
  if (json_dump_file(facts, partial, JSON_INDENT(1) | JSON_SORT_KEYS) != 0 ||
      rename(partial, path) != 0) {
    fprintf(stderr, "eager_scope_order: cannot write %s\n", path);
    remove(partial);
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  static struct batch results[CONDITIONS][SAMPLES];
  if (argc > 2) {
    fprintf(stderr, "usage: eager_scope_order [OUT.json]\n");
    return 2;
  }
  if (!setup()) {
    return 1;
  }
  for (int c = 0; c < CONDITIONS; ++c) { /* warm every path once */
    run_condition((enum condition)c);
  }
  for (size_t i = 0; i < SAMPLES; ++i) {
    for (int k = 0; k < CONDITIONS; ++k) {
      enum condition c = (enum condition)((k + i) % CONDITIONS);
      results[c][i] = run_condition(c);
    }
  }
  json_t *facts = json_object();
  printf("%-20s %8s %8s %8s %8s %8s %12s   (ns a call, medians of %d samples)\n", "condition",
         "gpu", "host", "issue", "gap p50", "head gap", "first launch", SAMPLES);
  for (int c = 0; c < CONDITIONS; ++c) {
    const struct batch *b = results[c];
    printf("%-20s %8.0f %8.0f %8.0f %8.0f %8.0f %12.0f\n", names[c], MEDIAN(b, gpu),
           MEDIAN(b, host), MEDIAN(b, issue), MEDIAN(b, launch_p50), MEDIAN(b, head_gap),
           MEDIAN(b, first_launch));
    json_object_set_new(facts, names[c], condition_json(b));
  }
  return argc > 1 && !write_whole(facts, argv[1]) ? 1 : 0;
}
