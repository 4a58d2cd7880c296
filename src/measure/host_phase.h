/* The host phase of docs/method.md §2.2: warm-up, then throughput samples (a batch
 * of R calls calibrated to last about sample_ms; time / R) and latency samples
 * (one call + synchronisation), CLOCK_MONOTONIC around launch and final sync,
 * no hooks installed. */
#ifndef TB_MEASURE_HOST_PHASE_H
#define TB_MEASURE_HOST_PHASE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "providers/provider.h"
#include "results/case_result.h"
#include "stats/stats.h"
#include "stats/stopping.h"

struct tb_measure_options {
  double warmup_ms;
  double sample_ms;
  unsigned samples; /* the fixed count; the device phase's count of samples */
  bool probe;       /* run the instrumented probe in the device phase */
  /* the batch modes the device phase times throughput in (bit 1 << mode);
   * eager is always timed */
  unsigned batch_modes;
  /* the run's input seed: the fresh-inputs defence generates its second
   * inputs from seed ^ 1 (docs/method.md §8) */
  unsigned long long seed;
  /* when the host phase's throughput samples stop (docs/method.md §2.6);
   * by_noise false (zeroed): exactly `samples`, whatever stopping.samples says */
  struct tb_stopping_rule stopping;
  /* validation's tolerance: docs/tolerances.md times this (--tolerance-scale,
   * >= 1; 0, zeroed, means 1) for every provider */
  double tolerance_scale;
  /* what the defence plausible judges timed figures against (method.md §8) */
  struct tb_plausibility_facts {
    double copy_ceiling_gbps;       /* the run's device copy ceiling (CUDA backend); 0: none */
    char copy_ceiling_missing[160]; /* why there is none on the CUDA backend */
    /* device 0 (CUDA backend), for gemm's peak; zeros when unknown */
    int cc_major, cc_minor, multiprocessors, max_sm_clock_khz;
  } plausibility;
  /* --clock-checks off: no per-sample clock reads (docs/method.md §2.7) */
  bool clock_checks_off;
};

/* Largest --tolerance-scale. */
#define TB_MAX_TOLERANCE_SCALE 1e6

/* Largest batch: bounds a calibration fooled by a near-zero first timing. */
#define TB_MAX_BATCH_CALLS 10000000UL

/* Fills *out (results/case_result.h: the record's host samples); free it
 * with tb_host_phase_free. With `decoy` (decoy_count elements) and a
 * provider that has decoy_output, the decoy is written over the outputs
 * before every throughput sample, outside its timing (the defence
 * timed_outputs then validates what the batches left). */
enum tb_status tb_measure_host_phase(struct tb_provider *p, const struct tb_measure_options *opt,
                                     const float *decoy, size_t decoy_count,
                                     struct tb_host_phase *out, struct tb_error *err);

/* Batch size for a per-call estimate: about sample_ms long, 1..TB_MAX_BATCH_CALLS. */
unsigned long tb_calibrate_batch(double per_call_ns, double sample_ms);

#endif
