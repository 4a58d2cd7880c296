/* Work split over the machine's cores, for the host-side float64 work that
 * grows with the case (the oracle, validation): seconds on one core at
 * 268M elements, several times a case. */
#ifndef TB_CORE_PARALLEL_H
#define TB_CORE_PARALLEL_H

#include <stddef.h>

#define TB_PARALLEL_MAX_PARTS 64

/* Runs part(ctx, k, lo, hi) for k = 0..parts-1 over contiguous ranges that
 * cover [0, n) in order, one thread a part, and returns `parts`: as many as
 * the cores (at most TB_PARALLEL_MAX_PARTS and n), or 1 when `work` (about
 * one floating-point step a unit) is under ten million and a thread would
 * not pay for its start. A part whose thread cannot start runs on the
 * caller's. Each part is computed whole by one thread, so a result merged
 * part by part in order is the same whatever the number of parts. */
size_t tb_parallel_ranges(size_t n, double work,
                          void (*part)(void *ctx, size_t k, size_t lo, size_t hi), void *ctx);

#endif
