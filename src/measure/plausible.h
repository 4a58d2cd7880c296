/* The defence `plausible` (docs/method.md §8): a timed figure no correct
 * kernel can reach is flagged. Effective bandwidth is the case's minimal
 * bytes (each input read once, the output written once) over a scope's p50
 * per call; it must not exceed TB_PLAUSIBLE_MARGIN times the ceiling of
 * where the case computes: the run's device copy ceiling on a GPU, and on
 * the CPU one thread's copy of the case's own footprint (and of its share
 * per CPU) times the CPUs, measured beside the case. gemm on a GPU whose
 * peak is known must also stay under TB_PLAUSIBLE_FLOP_MARGIN times it. */
#ifndef TB_MEASURE_PLAUSIBLE_H
#define TB_MEASURE_PLAUSIBLE_H

#include <stdbool.h>
#include <stddef.h>

#include "measure/host_phase.h"
#include "results/case_result.h"

/* A correct kernel stays under the ceiling by a wide berth (method.md §8
 * says why 4): a loop of two loads and a store counts 1.5 times a copy's
 * rate, and a share of the footprint per CPU sits in a faster cache level. */
#define TB_PLAUSIBLE_MARGIN 4.0
/* On a GPU whose buffer sets total at least 4x L2 (state "cold"), a case's
 * bytes come from device memory: a read-only kernel reaches about 1.12x the
 * copy ceiling on the H200, so twice the ceiling is still out of reach (the
 * wide margin stays for warm sets, which L2 serves faster than memory). */
#define TB_PLAUSIBLE_COLD_DEVICE_MARGIN 2.0
/* The peak is computed from the highest SM clock the device reports. */
#define TB_PLAUSIBLE_FLOP_MARGIN 1.05
/* A worker's host throughput samples (median) may lie this far below the
 * harness's clock around its requests: four times over, plus 5 ms. The
 * request's own cost (the pipe, the worker waking) is tens of microseconds
 * on a quiet machine and milliseconds on a loaded one, where 2 x + 1 ms
 * failed honest 1 ms samples; a clock slowed tenfold still misses the bound
 * by more than twice. */
#define TB_WORKER_CLOCK_FACTOR 4.0
#define TB_WORKER_CLOCK_SLACK_NS 5e6
/* Each host copy sample lasts about this long. */
#define TB_HOST_COPY_SAMPLE_NS 200000.0

/* Whether the case's provider computes on a GPU (backend cuda or torch-cuda):
 * its figures are judged against the device's ceiling. */
bool tb_case_on_gpu(const struct tb_case_result *r);

/* The CPU ceiling's measurement, for a case that computes on the host: one
 * thread copying half of `footprint_bytes` into the other half, and the
 * same for the footprint's share per CPU; fills f->copies and f->cpus. */
void tb_measure_host_copies(double footprint_bytes, struct tb_plausible_facts *f);

/* gemm's peak FLOP rate (GFLOP/s) on a device of compute capability
 * major.minor with `sms` SMs at `clock_khz`: FP32 FMA on the CUDA cores
 * (`tensor` false: the simt realization) or TF32 on the tensor cores,
 * dense (tensor and tensor-3xtf32, whose three products a term make it a
 * third of that at most); NaN when the
 * architecture's rate is not known. `basis` says how it was computed, or
 * why there is none. */
double tb_gemm_peak_gflops(int cc_major, int cc_minor, int sms, int clock_khz, bool tensor,
                           char *basis, size_t size);

/* Fills r->plausible and r->defences[TB_DEFENCE_PLAUSIBLE] from the
 * record's timed figures (host throughput, every device throughput
 * control scope), the host copies (CPU) or opt->plausibility (GPU); first,
 * for a worker that times its own host samples, those samples against the
 * harness's clock around each request: none may exceed it, and the
 * throughput's median may not fall below the harness's median by more than
 * TB_WORKER_CLOCK_FACTOR times plus TB_WORKER_CLOCK_SLACK_NS. */
void tb_defend_plausible(const struct tb_measure_options *opt, struct tb_case_result *r);

#endif
