/* The device phase of docs/method.md §2.3: GPU control (CUDA events) and probe
 * (CUPTI kernel records) with the same repetition count (at most 64,
 * independent of the host batch), for throughput (a batch) and latency (one
 * call). The throughput batch is timed in every batch mode that applies
 * (eager launches, one CUDA-graph replay, launches queued behind a held
 * stream); all scopes of a sample are taken in an order that reverses sample
 * by sample. The typed samples, paired ratios, cross-checks between scopes
 * and hazard flags go to results/device_result.h. */
#ifndef TB_MEASURE_DEVICE_PHASE_H
#define TB_MEASURE_DEVICE_PHASE_H

#include <stdbool.h>

#include "measure/host_phase.h"
#include "providers/provider.h"
#include "results/device_result.h"

#define TB_DEVICE_MAX_REPS 64

/* Repetitions of a throughput sample: about sample_ms of GPU work by the
 * host estimate, 1..TB_DEVICE_MAX_REPS. */
unsigned tb_device_reps(double host_per_call_ns, double sample_ms);

/* Measures the provider's stream into *out (free it with
 * tb_device_result_free); never fails the campaign: problems are recorded
 * in out->errors and leave out->control_complete false. False only when
 * memory ran out. */
bool tb_measure_device_phase(struct tb_provider *p, const struct tb_measure_options *opt,
                             const struct tb_host_phase *host, struct tb_device_result *out);

#endif
