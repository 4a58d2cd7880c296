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
  int64_t *elapsed_ns;       /* raw: wall time of each sample (batch or single call) */
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
  TB_DEFENCE_COUNT
};

enum tb_defence_outcome { TB_DEFENCE_NOT_RUN = 0, TB_DEFENCE_PASSED, TB_DEFENCE_FAILED };

struct tb_defence_record {
  enum tb_defence_outcome outcome;
  char detail[400]; /* what was checked, what failed, or why it did not run */
};

/* "inputs_unchanged", "guard_zones", "every_call", "fresh_inputs",
 * "launches_on_stream"; the
 * results' keys. */
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

  /* valid = output correct and every required measurement present
   * (docs/method.md §2.4); it says nothing about how quiet the machine was. */
  bool valid;
  char error[1024]; /* empty unless something failed */
};

void tb_case_result_free(struct tb_case_result *r);

#endif
