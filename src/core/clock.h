/* Host clocks. Host E2E timings use CLOCK_MONOTONIC (docs/method.md §1). */
#ifndef TB_CORE_CLOCK_H
#define TB_CORE_CLOCK_H

#include <stddef.h>
#include <stdint.h>

int64_t tb_monotonic_ns(void);

/* UTC wall-clock time as ISO 8601 ("2026-11-29T07:15:14Z") into buf. */
void tb_utc_timestamp(char *buf, size_t size);

#endif
