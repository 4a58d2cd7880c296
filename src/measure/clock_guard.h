/* Per-sample clock checks of the device phase (docs/method.md §2.7): the SM
 * clock and NVML's clocks event reasons read before and after every sample,
 * judged against the clock the warm-up settled on; a sample taken under
 * throttling or across a clock change is discarded and taken again after a
 * recovery delay, up to a budget. Pure judgement and bookkeeping: the reads
 * themselves are the device phase's. */
#ifndef TB_MEASURE_CLOCK_GUARD_H
#define TB_MEASURE_CLOCK_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "results/device_result.h"

/* A read further than this fraction from the reference SM clock, or two
 * reads of one sample this far apart, mean the sample ran at other clocks. */
#define TB_CLOCK_TOLERANCE 0.05
/* Clocks event reasons that mean lost clocks: software power cap (0x4),
 * hardware slowdown (0x8), software thermal (0x20), hardware thermal (0x40),
 * power brake (0x80). Idle (0x1) and application clocks (0x2) are not. */
#define TB_CLOCK_THROTTLE_MASK (0x4ull | 0x8ull | 0x20ull | 0x40ull | 0x80ull)
/* Pause before a discarded sample is taken again, for the clocks to recover. */
#define TB_CLOCK_RECOVERY_MS 50
/* Warm-up: two successive reads this close, with no throttle reason, are a
 * steady clock; at most this many reads (a warm sample before each). */
#define TB_CLOCK_STEADY_TOLERANCE 0.01
#define TB_CLOCK_STEADY_MAX_READS 20

/* Whether a sample read before and after is throttled against the reference
 * clock; the reason goes to why (always written, "" when not). */
bool tb_clock_sample_throttled(unsigned reference_mhz, const struct tb_gpu_snapshot *before,
                               const struct tb_gpu_snapshot *after, char *why, size_t size);

/* Whether the warm-up's read `now` after `previous` shows a steady clock. */
bool tb_clock_steady(const struct tb_gpu_snapshot *previous, const struct tb_gpu_snapshot *now);

/* Records kept sample i's reads (throttled: kept although judged throttled). */
void tb_clock_keep(struct tb_clock_checks *c, size_t i, const struct tb_gpu_snapshot *before,
                   const struct tb_gpu_snapshot *after, bool throttled);

/* Records that the sample that would have been i was discarded; false (and
 * nothing recorded) when the budget is spent and it must be kept. */
bool tb_clock_discard(struct tb_clock_checks *c, size_t i, const struct tb_gpu_snapshot *before,
                      const struct tb_gpu_snapshot *after, const char *why);

#endif
