/* The hold of a held control session (include/tilebench/timing.h): a
 * one-thread kernel that spins on a host-mapped flag until the host releases
 * it or its time-out passes, so the calls issued behind it queue up and then
 * run without host launch gaps. Internal to the timing library. */
#ifndef TB_TIMING_HOLD_H
#define TB_TIMING_HOLD_H

#include <cuda.h>
#include <stdint.h>

#include "timing/api.h"

/* The hold kernel's module for one context and its two host-mapped words:
 * [0] the release flag the host sets, [1] set by the kernel when its
 * time-out released the stream. The module is loaded once per context, the
 * words (portable) once per process; both are kept. */
struct tb_hold {
  CUcontext context;
  CUmodule module;
  CUfunction kernel;
  volatile uint32_t *words;
  CUdeviceptr device_words;
  int armed; /* launched and not yet released */
};

/* Loads the kernel (driver JIT of embedded PTX) and maps the words for
 * `context` unless already done. On failure returns the CUDA result and sets
 * *step to the call that failed. */
CUresult tb_hold_prepare(struct tb_hold *h, const struct tb_timing_api *api, CUcontext context,
                         const char **step);

/* Launches the hold on `stream`: the stream waits until tb_hold_release or
 * until timeout_ns of GPU time have passed. */
CUresult tb_hold_launch(struct tb_hold *h, const struct tb_timing_api *api, CUstream stream,
                        uint64_t timeout_ns);

/* Releases an armed hold (idempotent). */
void tb_hold_release(struct tb_hold *h);

/* After the stream has passed the hold: whether the time-out released it. */
int tb_hold_timed_out(const struct tb_hold *h);

#endif
