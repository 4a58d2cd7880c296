/* What the device phase measured (docs/method.md §2.3), as typed samples:
 * measure/device_phase.c fills it, results/device_json.c writes it as the
 * record's "device" object. Each metric (throughput: a batch of calls;
 * latency: one call) is timed in every batch mode that applies: eager
 * launches, one replay of a CUDA graph holding the calls, and eager launches
 * queued behind a held stream; each mode has a control and, where it
 * applies, a probe, taken in an order that alternates sample by sample. */
#ifndef TB_RESULTS_DEVICE_RESULT_H
#define TB_RESULTS_DEVICE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cases/case_params.h"
#include "stats/stats.h"
#include "stats/stopping.h"

/* Raw samples of one scope (control or probe) of one mode and metric. */
struct tb_scope_samples {
  bool is_probe;
  size_t taken;
  double *elapsed_ns;  /* GPU time of the sample */
  double *per_call_ns; /* elapsed / calls per sample */
  /* control only: the host's time around the sample, from just before the
   * start event's record to after the stop event's synchronisation; the GPU
   * time between the events lies within it */
  double *host_elapsed_ns;
  /* probe only */
  double *kernel_sum_ns, *kernel_per_call_ns, *clock_drift_ns;
  uint64_t *kernels, *launches, *side_stream_kernels, *kernels_before_launch;
};

/* Ratios paired sample by sample (NaN where one side of a pair is missing). */
struct tb_paired_ratios {
  double *values; /* one per sample */
  size_t count;   /* samples */
  size_t pairs;   /* finite values */
  struct tb_summary summary;
};

/* One batch mode of one metric. */
struct tb_mode_samples {
  bool attempted;    /* the mode applies to this metric and provider */
  char reason[1100]; /* why a mode that applies has no control samples, or "" */
  struct tb_scope_samples control, probe;
  struct tb_paired_ratios probe_over_control;
  struct tb_paired_ratios over_eager_control; /* this mode's control / eager control */
};

/* A sample taken and thrown away: the GPU's clocks were not those of the
 * case (docs/method.md §2.7), read before and after it. */
struct tb_discarded_sample {
  size_t sample; /* the index it would have had */
  char reason[200];
  unsigned sm_clock_before_mhz, sm_clock_after_mhz;
  uint64_t clocks_event_reasons; /* both reads OR-ed */
};

/* The per-sample clock check of one metric: NVML read before and after every
 * sample, judged against the clock the warm-up settled on. */
struct tb_clock_checks {
  bool checked; /* every sample read; false: why_unchecked says why not */
  char why_unchecked[256];
  unsigned reference_sm_clock_mhz;
  /* the rule (measure/clock_guard.h), recorded for the audit */
  double tolerance;
  uint64_t reason_mask;
  unsigned recovery_ms;
  /* per kept sample */
  unsigned *sm_clock_before_mhz, *sm_clock_after_mhz;
  uint64_t *clocks_event_reasons;
  bool *kept_throttled; /* judged throttled but kept: the discard budget was spent */
  struct tb_discarded_sample *discarded;
  size_t discarded_count, discard_budget;
};

struct tb_metric_result {
  unsigned calls_per_sample;
  size_t samples; /* taken: under the noise rule, fewer than the arrays hold */
  /* throughput: the rule its samples stopped by, judged on the eager
   * control after each whole sample, and what it did (docs/method.md §2.6) */
  struct tb_stopping_rule rule;
  struct tb_stopping_outcome stopping;
  char **order; /* per sample: the scopes in the order taken, "control,probe" for eager */
  struct tb_mode_samples modes[TB_BATCH_MODE_COUNT];
  /* The lowest-overhead control that measured every sample (graph, then
   * held, then eager): the figure rankings use. */
  enum tb_batch_mode gap_free_mode;
  bool has_gap_free;
  struct tb_clock_checks clock;
};

struct tb_gpu_snapshot {
  bool valid;
  char reason[256];
  unsigned sm_clock_mhz, memory_clock_mhz, max_sm_clock_mhz, temperature_c, power_mw;
  uint64_t clocks_event_reasons;
};

/* The warm-up's wait for a steady SM clock before the first sample. */
struct tb_clock_warmup {
  bool checked, steady;
  unsigned reads, sm_clock_mhz; /* the last read: every sample's reference */
  double waited_ms;
  char why_unchecked[256];
};

struct tb_device_result {
  const char *probe_state; /* "measured", "unavailable", "disabled (--probe off)" */
  struct tb_clock_warmup clock_warmup;
  struct tb_metric_result throughput, latency;
  bool control_complete; /* every eager control sample of both metrics measured */
  struct tb_gpu_snapshot before, after;
  /* Probe samples (the discarded warm-up pass included) that ended with
   * TB_TIMING_E_EMPTY: the calls put no kernel on the GPU. The defence
   * launches_on_stream needs the count; the errors only say it in words. */
  size_t probe_samples_without_kernels;
  char **flags; /* hazard flags (docs/method.md §4), NULL-terminated */
  size_t flag_count;
  char **errors; /* every failed sample's message */
  size_t error_count;
};

/* Appends a copy of text (false when memory ran out). */
bool tb_device_result_add_flag(struct tb_device_result *d, const char *text);
bool tb_device_result_add_error(struct tb_device_result *d, const char *text);

/* Allocates the sample arrays of a metric for `samples` samples. */
bool tb_metric_result_init(struct tb_metric_result *m, unsigned calls_per_sample, size_t samples);

void tb_device_result_free(struct tb_device_result *d);

#endif
