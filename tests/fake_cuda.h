/* A fake CUDA driver + CUPTI + NVML behind the timing library's function
 * table: launches, kernel records, activity buffers and faults on demand. */
#ifndef TB_TEST_FAKE_CUDA_H
#define TB_TEST_FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "timing/api.h"

enum fake_launch_kind {
  FAKE_RUNTIME,        /* cudaLaunchKernel with a nested cuLaunchKernel */
  FAKE_DRIVER,         /* cuLaunchKernel alone */
  FAKE_UNHOOKED,       /* a kernel from an API the probe does not hook */
  FAKE_NO_KERNEL,      /* a counted launch whose kernel record never arrives */
  FAKE_BAD_TIMESTAMPS, /* a kernel record with start = end = 0 */
};

struct fake_cuda {
  int have_context, capturing;
  const char *fail_at; /* name of the fake call that fails */
  uint32_t cupti_version;
  int foreign_subscriber;
  int kernel_carries_driver_id; /* runtime launches: kernel has the nested driver id */
  int records_per_buffer;       /* 0: all pending records in one buffer */
  size_t drops_to_report;
  /* observed state */
  int events_live, subscribed, activity_enabled, finalize_calls, unsubscribe_calls;
  int enabled_callbacks;
  /* held sessions: the hold kernel's launches, and a hold the fake GPU
   * releases by its time-out although the host released it (a stuck flag) */
  int holds_launched, hold_stuck, modules_loaded;
  unsigned graph_gap_ns; /* idle GPU time after each kernel of a graph launch */
  /* GPU time each event record adds that the host never waits for: the
   * GPU's clock running ahead of the host's */
  unsigned event_skew_ns;
  /* NVML (fake_install_nvml): read k returns sm_clock_mhz[k] and
   * clocks_event_reasons[k], the last entry repeating past the script's end */
  unsigned sm_clock_mhz[64];
  unsigned long long clocks_event_reasons[64];
  size_t clock_script_length;
  int nvml_reads; /* SM clock reads so far */
};

extern struct fake_cuda F;

/* Resets F and installs the fake table (CUPTI present, version 13.0 U1). */
void fake_install(void);
/* Adds NVML to the installed table: the SM clock and reasons follow F's
 * script (with none, 1980 MHz and no reason). */
void fake_install_nvml(void);
/* Makes libcupti.so.13 "missing" from the installed table. */
void fake_remove_cupti(void);
/* Launches on a stream (CUPTI stream id = the handle's value). */
void fake_launch(uintptr_t stream, enum fake_launch_kind kind);
/* Whether a hold kernel was launched and is neither released nor run. */
int fake_hold_pending_unreleased(void);
/* A graph launch through the runtime producing `kernels` kernels. */
void fake_graph_launch(uintptr_t stream, int kernels);

#endif
