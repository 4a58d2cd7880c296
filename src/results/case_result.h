/* What one case x provider produced: raw samples, validation, validity. The
 * typed record results/ serialises (case_json.c); measure/ fills it. */
#ifndef TB_RESULTS_CASE_RESULT_H
#define TB_RESULTS_CASE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cases/case.h"
#include <jansson.h>

#include "oracle/validate.h"
#include "planner/exec_plan.h"
#include "provenance/cpu_frequency.h"
#include "providers/provider_details.h"
#include "results/device_result.h"
#include "stats/stats.h"
#include "stats/stopping.h"

/* The host phase's samples (measure/host_phase.h takes them). */
struct tb_phase_samples {
  unsigned long calls_per_sample;
  size_t count;
  int64_t *elapsed_ns; /* raw: wall time of each sample (batch or single call) */
  /* a worker's samples: the harness's own clock around each request (the
   * worker's figure lies within it), else NULL */
  int64_t *harness_ns;
  double *per_call_ns;       /* elapsed_ns / calls_per_sample */
  struct tb_summary summary; /* of per_call_ns */
};

struct tb_host_phase {
  unsigned long warmup_calls;
  double warmup_ns;
  struct tb_phase_samples throughput;
  struct tb_phase_samples latency;
  /* the rule the throughput samples stopped by and what it did; latency
   * takes as many samples as throughput did */
  struct tb_stopping_rule rule;
  struct tb_stopping_outcome stopping;
  /* cpufreq read after the warm-up and after the last sample (method §2.7) */
  struct tb_cpu_frequency cpu_before, cpu_after;
  /* a decoy was written over the outputs before every throughput sample */
  bool decoy_before_batches;
};

void tb_host_phase_free(struct tb_host_phase *phase);

/* The defences of docs/method.md §8, checked on every case after the
 * timings: what a kernel could do to pass validation without computing
 * every call's output from its inputs alone. */
enum tb_defence {
  TB_DEFENCE_INPUTS_UNCHANGED, /* the inputs hash the same after the calls as before */
  TB_DEFENCE_GUARD_ZONES,      /* no call wrote outside its buffers */
  TB_DEFENCE_EVERY_CALL,       /* several calls validated, the output poisoned before each */
  TB_DEFENCE_FRESH_INPUTS,     /* one more call on inputs of another seed is right too */
  TB_DEFENCE_ON_STREAM, /* GPU: the probe saw the calls' kernels, all on the provider's stream */
  TB_DEFENCE_TIMED_OUTPUTS, /* the outputs the timed calls left, every buffer set, are right */
  TB_DEFENCE_PLAUSIBLE,     /* no timed figure beyond the copy ceiling (or gemm's peak) */
  TB_DEFENCE_COUNT
};

enum tb_defence_outcome { TB_DEFENCE_NOT_RUN = 0, TB_DEFENCE_PASSED, TB_DEFENCE_FAILED };

struct tb_defence_record {
  enum tb_defence_outcome outcome;
  char detail[400]; /* what was checked, what failed, or why it did not run */
};

/* What timed_outputs compared (docs/method.md §8): the buffer sets whose
 * outputs the timed calls left, and the first that failed. */
struct tb_timed_outputs_facts {
  unsigned sets;    /* buffer sets the calls rotate over */
  unsigned checked; /* of them, reached by a timed call and compared */
  bool decoy;       /* a decoy was written over the outputs before every timed batch */
  bool failed;      /* `validation` is of set `failed_set` */
  unsigned failed_set;
  struct tb_validation validation; /* the first set that failed, else the last compared */
};

/* One timed figure the plausibility gate judged: a scope's p50 per call. */
struct tb_plausible_figure {
  const char *scope; /* "host", "eager", "graph", "held" */
  double per_call_p50_ns;
  double gbps;   /* minimal bytes / p50 */
  double gflops; /* gemm: 2mnk / p50; NaN otherwise */
};

/* The host copy one CPU-backend ceiling is taken from: `bytes` copied
 * `calls` times a sample, each sample's wall time; its rate is the best
 * sample's (read + written bytes over time). */
#define TB_HOST_COPY_SAMPLES 5
struct tb_host_copy {
  double footprint_bytes; /* source + destination */
  size_t bytes;           /* copied per call */
  unsigned long calls;
  size_t samples;
  int64_t elapsed_ns[TB_HOST_COPY_SAMPLES];
  double gbps;
};

/* What plausible compared (docs/method.md §8): the figures, the ceiling
 * and its source, the margin; for gemm the FLOP rate and the peak. */
#define TB_PLAUSIBLE_MAX_FIGURES 4
struct tb_plausible_facts {
  size_t figure_count;
  struct tb_plausible_figure figures[TB_PLAUSIBLE_MAX_FIGURES];
  const char *ceiling_source; /* "device_copy", "host_copy", or NULL: none */
  double ceiling_gbps;        /* the bound before the margin; NaN when none */
  double margin;
  const char *margin_basis; /* which margin applies and why */
  /* host_copy: one thread's copy at the case's footprint and at its share
   * per CPU, times the CPUs */
  unsigned cpus;
  struct tb_host_copy copies[2];
  size_t copy_count;
  double peak_gflops; /* gemm on a GPU whose peak is known, else NaN */
  double flop_margin;
  /* a worker's host samples were checked against the harness's clock */
  bool worker_clock;
  char peak_basis[160]; /* how the peak was computed, or why there is none */
};

/* "inputs_unchanged", "guard_zones", "every_call", "fresh_inputs",
 * "launches_on_stream", "timed_outputs", "plausible"; the results' keys. */
const char *tb_defence_name(enum tb_defence d);
/* "passed", "failed", "not_run". */
const char *tb_defence_outcome_name(enum tb_defence_outcome o);

struct tb_case_result {
  struct tb_case c;
  char id[160];
  const char *backend;
  /* The provider's plan step: what ran (TB_PLAN_NONE where the provider
   * does not plan, or the plan step failed). */
  struct tb_exec_plan plan;
  const char *output_allocation;
  double minimal_bytes;

  bool host_measured;
  struct tb_host_phase host;

  /* Device phase (GPU providers): what it measured (owned), or NULL with the
   * reason (the CPU backend has no device clock). */
  bool device_measured;
  struct tb_device_result *device;
  const char *device_unavailable_reason;

  /* compilation, kernels, buffers (owned texts); TB_DETAILS_NONE: none */
  struct tb_provider_details provider_details;
  char *source; /* generated source to archive (owned), or NULL */
  char source_sha256[65];

  bool validated;
  /* the first validated call that failed, else the last (every call passed) */
  struct tb_validation validation;
  bool defences_ran; /* the validation calls ran: `defences` holds their outcomes */
  struct tb_defence_record defences[TB_DEFENCE_COUNT];
  struct tb_timed_outputs_facts timed_outputs; /* when that defence ran */
  struct tb_plausible_facts plausible;         /* when that defence ran */

  /* valid = output correct and every required measurement present
   * (docs/method.md §2.4); it says nothing about how quiet the machine was. */
  bool valid;
  char error[1024]; /* empty unless something failed */
};

void tb_case_result_free(struct tb_case_result *r);

#endif
