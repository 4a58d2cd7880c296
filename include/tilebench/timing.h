/* libtilebench_timing: GPU timing that never reports a number it did not
 * measure. One process-wide session at a time:
 *
 *   IDLE --begin_control------> CONTROL --end--> IDLE
 *   IDLE --begin_control_held-> CONTROL --end--> IDLE   (the stream held)
 *   IDLE --begin_probe--------> PROBE   --end--> IDLE
 *   IDLE --begin_probe_held---> PROBE   --end--> IDLE   (the stream held)
 *
 * CONTROL: CUDA events recorded on the caller's stream around the work. No
 *   per-kernel hooks, no CUPTI: the uninstrumented GPU time of the interval.
 *   Held: a one-thread kernel first holds the stream on a host-mapped flag,
 *   so the calls the caller then issues queue up behind it; end releases
 *   the flag, and the calls run back to back with no host launch gap in the
 *   timing (a blocking kernel, as nvbench calls it). A work's time can also
 *   be taken free of launch gaps by timing one cuGraphLaunch of a graph
 *   holding the calls (captured before begin; a graph launch declares the
 *   calls the graph holds).
 * PROBE: the same events, plus CUPTI activity records of every kernel the
 *   process launches in the interval (concurrent-kernel kind) and launch
 *   counting through CUPTI callbacks on the runtime and driver launch APIs.
 *   Instrumented: a diagnostic, never the performance figure.
 *
 * Every call returns TB_TIMING_OK (0) or a negative error code; on error the
 * session is closed, everything begin enabled is disabled and detached, no
 * timing is returned, and tb_timing_last_error() says why. The library needs
 * a CUDA context current on the calling thread; it never creates one.
 * Libraries (libcuda.so.1, libcupti.so.13, libnvidia-ml.so.1) are loaded at
 * run time; without a driver every begin returns TB_TIMING_E_NO_GPU.
 *
 * From Python: ctypes.CDLL("libtilebench_timing.so"); declare the argument
 * and result types below; pass torch.cuda.current_stream().cuda_stream as
 * the stream. Check tb_timing_abi_version() == TB_TIMING_ABI_VERSION first.
 *
 * The ABI version changes whenever a struct layout or a signature changes. */
#ifndef TILEBENCH_TIMING_H
#define TILEBENCH_TIMING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TB_TIMING_EXPORTS)
#define TB_TIMING_API __attribute__((visibility("default")))
#else
#define TB_TIMING_API
#endif

/* ABI 2: tb_timing_result's `launches` is two fields, declared_calls and
 * counted_launches (ABI 1 reported declared calls under control and counted
 * launches under the probe in one field); tb_timing_declare_calls replaces
 * tb_timing_declare_launches; held control sessions. */
#define TB_TIMING_ABI_VERSION 2

enum tb_timing_code {
  TB_TIMING_OK = 0,
  TB_TIMING_E_ARGUMENT = -1,   /* NULL result, wrong struct_size, capacity 0 */
  TB_TIMING_E_BUSY = -2,       /* begin while a session is open (nested begin) */
  TB_TIMING_E_NOT_ACTIVE = -3, /* end or declare without begin */
  TB_TIMING_E_NO_GPU = -4,     /* no driver, or it found no device */
  TB_TIMING_E_NO_CONTEXT = -5, /* no CUDA context current on this thread */
  TB_TIMING_E_CAPTURING = -6,  /* the stream is being captured into a graph */
  TB_TIMING_E_CUDA = -7,       /* a CUDA driver call failed */
  TB_TIMING_E_EMPTY = -8, /* control: no launch declared or no elapsed time; probe: no kernel */
  TB_TIMING_E_CUPTI_MISSING = -9,  /* libcupti.so.13 could not be loaded */
  TB_TIMING_E_CUPTI_VERSION = -10, /* its API version does not match the record layout */
  TB_TIMING_E_CUPTI_BUSY =
      -11,                    /* another CUPTI client is subscribed (its name is in the message) */
  TB_TIMING_E_CUPTI = -12,    /* a CUPTI call failed */
  TB_TIMING_E_CAPACITY = -13, /* more kernels or launches than the probe's capacity */
  TB_TIMING_E_DROPPED = -14,  /* CUPTI dropped records or had no buffer for them */
  TB_TIMING_E_MISMATCH = -15, /* kernels do not correspond one-to-one to counted launches */
  TB_TIMING_E_TIMESTAMPS = -16, /* a kernel record without timing, or end before start */
  TB_TIMING_E_HOLD_TIMEOUT =
      -17, /* held control: the hold's time-out released the stream before end (a host
              synchronisation inside the session, or calls slower to issue than the time-out) */
};

enum tb_timing_scope { TB_TIMING_SCOPE_CONTROL = 1, TB_TIMING_SCOPE_PROBE = 2 };

/* One kernel seen by the probe. Times are host CLOCK_MONOTONIC nanoseconds
 * (converted from CUPTI's clock by the begin calibration). */
struct tb_timing_kernel {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t stream_id;      /* CUPTI stream id */
  uint32_t correlation_id; /* of the launch API call */
  uint32_t device_id;
  uint32_t graph_id; /* 0 when not launched from a graph */
};

/* Filled by tb_timing_end. Layout (x86-64, ABI 2): 8-byte aligned fields in
 * this order, 160 bytes (checked at compile time). The caller sets struct_size = sizeof(struct
 * tb_timing_result) and, for per-kernel records, kernels/kernels_capacity. */
struct tb_timing_result {
  uint32_t struct_size;             /* in: sizeof(struct tb_timing_result) */
  uint32_t scope;                   /* out: enum tb_timing_scope */
  struct tb_timing_kernel *kernels; /* in: optional array for per-kernel records */
  uint64_t kernels_capacity;        /* in: its length; out: unchanged */
  uint64_t kernels_written;         /* out: records copied into kernels */

  double gpu_elapsed_ns;          /* out: event time on the stream between begin and end */
  uint64_t declared_calls;        /* out: the calls declared with tb_timing_declare_calls (both
                                     scopes; control requires at least one, the probe none) */
  uint64_t counted_launches;      /* out: probe: launch API calls CUPTI counted (one per
                                     cuGraphLaunch); control: 0, it counts nothing */
  uint64_t kernels_seen;          /* out: probe: kernel records (0 for control) */
  double kernel_sum_ns;           /* out: probe: sum of kernel durations */
  double kernel_span_ns;          /* out: probe: last end - first start */
  uint64_t streams_seen;          /* out: probe: distinct streams with kernels */
  uint64_t side_stream_kernels;   /* out: probe: kernels on streams other than the timed one */
  uint32_t timed_stream_id;       /* out: probe: CUPTI id of the timed stream */
  uint32_t held;                  /* out: 1 when the session held the stream (a *_held begin) */
  double clock_offset_begin_ns;   /* out: probe: CUPTI clock - CLOCK_MONOTONIC at begin */
  double clock_offset_end_ns;     /* out: probe: the same at end */
  double clock_drift_ns;          /* out: probe: end - begin offset */
  double calibration_width_ns;    /* out: probe: narrowest host bracket around a CUPTI read */
  uint64_t kernels_before_launch; /* out: probe: kernels starting before their launch call (clock
                                     check) */
  uint64_t begin_host_ns;         /* out: CLOCK_MONOTONIC at begin */
  uint64_t end_host_ns;           /* out: CLOCK_MONOTONIC after the final synchronisation */
};

/* A result ready for tb_timing_end: zeroed, struct_size set, and the
 * caller's kernel array (NULL, 0 for none). Header-only: no ABI change. */
static inline struct tb_timing_result tb_timing_result_for(struct tb_timing_kernel *kernels,
                                                           uint64_t capacity) {
  struct tb_timing_result r = {0};
  r.struct_size = sizeof r;
  r.kernels = kernels;
  r.kernels_capacity = capacity;
  return r;
}

/* NVML snapshot of the device of the current context (read-only; never
 * changes a setting). valid = 0 when NVML is unavailable (reason in
 * tb_timing_last_error, which is otherwise untouched). */
struct tb_timing_gpu_state {
  uint32_t struct_size; /* in: sizeof(struct tb_timing_gpu_state) */
  uint32_t valid;
  uint32_t sm_clock_mhz;
  uint32_t memory_clock_mhz;
  uint32_t max_sm_clock_mhz;
  uint32_t temperature_c;
  uint64_t clocks_event_reasons; /* nvmlClocksEventReasons bits (0x1 idle, 0x4 power cap, ...) */
  uint32_t power_mw;
  uint32_t reserved0;
  uint64_t host_ns; /* CLOCK_MONOTONIC of the snapshot */
};

TB_TIMING_API int tb_timing_abi_version(void);

/* sizeof the structs as this library was built: a binding that declares the
 * layouts itself (ctypes) checks its own sizes against these before any call.
 * (Since ABI 1.) */
TB_TIMING_API uint32_t tb_timing_result_struct_size(void);
TB_TIMING_API uint32_t tb_timing_gpu_state_struct_size(void);

/* Opens a control session on `cuda_stream` (a CUstream / cudaStream_t; NULL
 * is the legacy default stream) and records the start event. */
TB_TIMING_API int tb_timing_begin_control(void *cuda_stream);

/* Opens a control session whose stream is held until end: launches a
 * one-thread kernel on `cuda_stream` that spins on a host-mapped flag (at
 * most `timeout_ns`), then records the start event behind it. Calls issued
 * before end queue behind the hold; end records the stop event, releases
 * the flag and synchronises, so the interval holds the calls back to back.
 * Nothing inside the session may wait for the stream (a synchronising copy,
 * cudaDeviceSynchronize): the hold would stop it until the time-out, and end
 * then fails with TB_TIMING_E_HOLD_TIMEOUT, as it does whenever the time-out
 * released the stream first. Queue at most about a thousand launches (the
 * driver's queue is finite). timeout_ns 0 is refused. */
TB_TIMING_API int tb_timing_begin_control_held(void *cuda_stream, uint64_t timeout_ns);

/* Opens a probe session: subscribes to CUPTI, calibrates clocks, enables
 * launch callbacks and kernel records for at most `capacity` kernels, then
 * records the start event. Run one discarded warm-up pass first: CUPTI
 * instruments modules when they load. */
TB_TIMING_API int tb_timing_begin_probe(void *cuda_stream, unsigned capacity);

/* A probe session whose stream is held until end, as begin_control_held
 * holds it (same rules and time-out failure): CUPTI's own work at the first
 * launches after it starts recording (hundreds of microseconds a session on
 * the H200) and the launch callbacks' host cost then fall outside the
 * events, which hold only the GPU's work. The hold kernel is the library's:
 * it is neither a counted launch nor a kernel of the result. Use it beside a
 * held control of the same calls, so probe/control compares like with like. */
TB_TIMING_API int tb_timing_begin_probe_held(void *cuda_stream, unsigned capacity,
                                             uint64_t timeout_ns);

/* Declares how many calls the open session times (adds up; reported as
 * declared_calls). Control requires at least one; the probe records it
 * beside the launches it counts itself. */
TB_TIMING_API int tb_timing_declare_calls(uint64_t count);

/* Records the stop event, synchronises, fills *out, and closes the session;
 * on any failure it closes the session too and fills nothing but scope. */
TB_TIMING_API int tb_timing_end(struct tb_timing_result *out);

/* Closes an open session without a result (for error paths of callers). */
TB_TIMING_API int tb_timing_abort(void);

TB_TIMING_API int tb_timing_gpu_state(struct tb_timing_gpu_state *out);

/* Why the last call failed; "" after a success. Thread-local storage is not
 * used: read it right after the failing call. */
TB_TIMING_API const char *tb_timing_last_error(void);

/* The symbolic name of a code ("TB_TIMING_E_BUSY"). */
TB_TIMING_API const char *tb_timing_code_name(int code);

#ifdef __cplusplus
}
#endif

#endif
