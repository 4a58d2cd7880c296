/* The device phase of docs/method.md §2.3: GPU control (CUDA events) and probe
 * (CUPTI kernel records) with the same repetition count (at most 64,
 * independent of the host batch), their order alternating sample by sample,
 * for throughput (a batch) and latency (one call). Raw samples, paired
 * probe/control ratios and the hazard flags go to the results. */
#ifndef TB_MEASURE_DEVICE_PHASE_H
#define TB_MEASURE_DEVICE_PHASE_H

#include <jansson.h>
#include <stdbool.h>

#include "measure/host_phase.h"
#include "providers/provider.h"

#define TB_DEVICE_MAX_REPS 64

struct tb_device_phase {
  json_t *json;                     /* the results' "device" object (owned) */
  bool control_complete;            /* every control sample of both metrics measured */
  double control_throughput_p50_ns; /* per call */
  double control_latency_p50_ns;
};

/* Repetitions of a throughput sample: about sample_ms of GPU work by the
 * host estimate, 1..TB_DEVICE_MAX_REPS. */
unsigned tb_device_reps(double host_per_call_ns, double sample_ms);

/* Measures the provider's stream; never fails the campaign: problems are
 * recorded in json ("errors") and leave control_complete false. */
void tb_measure_device_phase(struct tb_provider *p, const struct tb_measure_options *opt,
                             const struct tb_host_phase *host, struct tb_device_phase *out);
void tb_device_phase_free(struct tb_device_phase *phase);

#endif
