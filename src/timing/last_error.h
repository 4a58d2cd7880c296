/* The text tb_timing_last_error() returns, one per process: set by the
 * session (session.c), the probe's collection (probe_collect.c) and the GPU
 * state snapshot (gpu_state.c). Internal: not part of the public ABI. */
#ifndef TB_TIMING_LAST_ERROR_H
#define TB_TIMING_LAST_ERROR_H

#include <stdarg.h>

/* Formats the last error; returns code. */
int tb_timing_vfail(int code, const char *fmt, va_list args);
/* Sets the last error to message; returns code. */
int tb_timing_fail_text(int code, const char *message);
/* Empties it (the call succeeded). */
void tb_timing_clear_error(void);

#endif
