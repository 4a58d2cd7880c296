/* The timing session state machine behind include/tilebench/timing.h. */
#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tilebench/timing.h"
#include "timing/api.h"
#include "timing/hold.h"
#include "timing/last_error.h"
#include "timing/probe_state.h"

static_assert(sizeof(struct tb_timing_result) == 160, "ABI 2 layout of tb_timing_result");
static_assert(sizeof(struct tb_timing_kernel) == 32, "ABI 2 layout of tb_timing_kernel");

/* The CUPTI release whose record layout (CUpti_ActivityKernel10) we read. */
#define TB_CUPTI_FIRST 130001 /* 13.0 Update 1: fixes a disable deadlock and a flush crash */
#define TB_CUPTI_NEXT_MINOR 130100
#define TB_CALIBRATION_READS 16

enum session_state { IDLE, CONTROL, PROBE };

/* Everything a session holds; one at a time per process. */
struct session {
  enum session_state state;
  const struct tb_timing_api *api;
  CUstream stream;
  CUcontext context;
  CUevent start, stop;
  uint64_t declared;
  int held; /* a held control session */
  uint64_t begin_host_ns;
  /* probe only */
  struct tb_probe_state probe;
  CUpti_SubscriberHandle subscriber;
  int subscribed, callbacks_enabled, activity_enabled;
  uint32_t timed_stream_id;
  double offset_begin_ns, width_begin_ns;
};

static struct session S;
static struct tb_hold hold; /* kept across sessions: loaded once per context */
static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int detach_requested, detached;

static uint64_t host_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  tb_timing_vfail(code, fmt, args);
  va_end(args);
  return code;
}

static int succeed(void) {
  tb_timing_clear_error();
  return TB_TIMING_OK;
}

static const char *cuda_text(CUresult rc) {
  const char *text = NULL;
  if (S.api == NULL || S.api->cuGetErrorString(rc, &text) != CUDA_SUCCESS || text == NULL) {
    return "unknown CUDA error";
  }
  return text;
}

static const char *cupti_text(CUptiResult rc) {
  const char *text = NULL;
  if (S.api == NULL || S.api->cuptiGetResultString == NULL ||
      S.api->cuptiGetResultString(rc, &text) != CUPTI_SUCCESS || text == NULL) {
    return "unknown CUPTI error";
  }
  return text;
}

/* ---- launch callbacks ------------------------------------------------- */

static const CUpti_CallbackId runtime_launches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};

static const CUpti_CallbackId driver_launches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Runs on application and CUPTI threads: atomics only, no allocation. */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data) {
  const CUpti_CallbackData *info = data;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent) {
    /* CUPTI's documented way to detach: cuptiFinalize at an API exit site,
     * here of a cuCtxGetCurrent the library itself calls at the end. */
    if (detach_requested && info->callbackSite == CUPTI_API_EXIT && !detached) {
      S.api->cuptiFinalize();
      detached = 1;
    }
    return;
  }
  tb_probe_on_launch(domain, cbid, info->callbackSite, info->correlationId);
}

static CUptiResult set_launch_callbacks(uint32_t enable) {
  CUptiResult rc = CUPTI_SUCCESS;
  for (size_t i = 0; i < COUNT_OF(runtime_launches) && rc == CUPTI_SUCCESS; ++i) {
    rc = S.api->cuptiEnableCallback(enable, S.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    runtime_launches[i]);
  }
  for (size_t i = 0; i < COUNT_OF(driver_launches) && rc == CUPTI_SUCCESS; ++i) {
    rc = S.api->cuptiEnableCallback(enable, S.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                    driver_launches[i]);
  }
  return rc;
}

/* ---- restore: one idempotent path for end and for every failure ------- */

static void destroy_events(void) {
  if (S.start) {
    S.api->cuEventDestroy(S.start);
  }
  if (S.stop) {
    S.api->cuEventDestroy(S.stop);
  }
  S.start = S.stop = NULL;
}

/* Stops collection and hands every buffer back (so none is used after it
 * is freed); reads the drop count while CUPTI is still attached. */
static void stop_collection(size_t *dropped) {
  if (S.activity_enabled) {
    S.api->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    S.activity_enabled = 0;
  }
  if (S.callbacks_enabled) {
    set_launch_callbacks(0);
    S.callbacks_enabled = 0;
  }
  if (S.subscribed) {
    S.api->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    size_t n = 0;
    if (S.api->cuptiActivityGetNumDroppedRecords(NULL, 0, &n) == CUPTI_SUCCESS && dropped) {
      *dropped = n;
    }
  }
}

/* Detaches CUPTI so later sessions, and PyTorch's profiler, start clean.
 * cuptiFinalize, not only cuptiUnsubscribe: on the H200 (CUDA 13.0) a CUPTI
 * that recorded kernels and was not finalized made every later launch ~25 %
 * slower (tests/gpu/cupti_lifecycle_memory.c, twice), which would bias the
 * control samples that alternate with probe samples; finalize restores it
 * (evidence/2026-11-29-h200-timing-finalize).
 * The price, CUPTI 13.0's own: each finalize and re-initialise keeps ~0.6 MB
 * of device memory (tests/gpu/cupti_lifecycle_memory.c, without this
 * library). */
static void detach_cupti(void) {
  if (!S.subscribed) {
    return;
  }
  detach_requested = 1;
  detached = 0;
  S.api->cuptiEnableCallback(1, S.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                             CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent);
  CUcontext ignored = NULL;
  S.api->cuCtxGetCurrent(&ignored);
  if (!detached) { /* the callback did not run: detach directly */
    S.api->cuptiUnsubscribe(S.subscriber);
    S.api->cuptiFinalize();
  }
  detach_requested = 0;
  S.subscribed = 0;
  S.subscriber = NULL;
}

static void restore(void) {
  tb_hold_release(&hold); /* first: a held stream would stall everything after it */
  if (S.state == PROBE || S.subscribed) {
    stop_collection(NULL);
    detach_cupti();
    tb_probe_bind(NULL);
    tb_probe_state_free(&S.probe);
  }
  destroy_events();
  S.state = IDLE;
  S.declared = 0;
  S.held = 0;
}

/* ---- shared begin steps ------------------------------------------------ */

static int check_ready(void *stream) {
  if (S.state != IDLE) {
    return fail(TB_TIMING_E_BUSY, "a %s session is already open; end it first (nested begin)",
                S.state == CONTROL ? "control" : "probe");
  }
  const char *why = NULL;
  S.api = tb_timing_api_driver(&why);
  if (S.api == NULL) {
    return fail(TB_TIMING_E_NO_GPU, "%s", why ? why : "no CUDA driver");
  }
  CUcontext ctx = NULL;
  if (S.api->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == NULL) {
    return fail(TB_TIMING_E_NO_CONTEXT, "no CUDA context is current on this thread; make one "
                                        "current (the library never creates one)");
  }
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult rc = S.api->cuStreamIsCapturing((CUstream)stream, &capture);
  if (rc != CUDA_SUCCESS) {
    return fail(TB_TIMING_E_CUDA, "cuStreamIsCapturing failed: %s", cuda_text(rc));
  }
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    return fail(TB_TIMING_E_CAPTURING, "the stream is being captured into a graph; an event "
                                       "record would become a graph node");
  }
  S.stream = (CUstream)stream;
  S.context = ctx;
  return TB_TIMING_OK;
}

/* Creates the events and records the start: the last step of every begin. */
static int start_events(void) {
  CUresult rc = S.api->cuEventCreate(&S.start, CU_EVENT_DEFAULT);
  if (rc == CUDA_SUCCESS) {
    rc = S.api->cuEventCreate(&S.stop, CU_EVENT_DEFAULT);
  }
  if (rc != CUDA_SUCCESS) {
    return fail(TB_TIMING_E_CUDA, "cuEventCreate failed: %s", cuda_text(rc));
  }
  S.begin_host_ns = host_ns();
  rc = S.api->cuEventRecord(S.start, S.stream);
  if (rc != CUDA_SUCCESS) {
    return fail(TB_TIMING_E_CUDA, "cuEventRecord (start) failed: %s", cuda_text(rc));
  }
  return TB_TIMING_OK;
}

/* Records the stop event and returns the GPU time between the events; a
 * held stream is released once the stop event is queued behind the calls. */
static int stop_events(double *elapsed_ns) {
  CUresult rc = S.api->cuEventRecord(S.stop, S.stream);
  tb_hold_release(&hold);
  if (rc == CUDA_SUCCESS) {
    rc = S.api->cuEventSynchronize(S.stop);
  }
  float ms = 0.0f;
  if (rc == CUDA_SUCCESS) {
    rc = S.api->cuEventElapsedTime(&ms, S.start, S.stop);
  }
  if (rc != CUDA_SUCCESS) {
    return fail(TB_TIMING_E_CUDA, "timing the stop event failed: %s", cuda_text(rc));
  }
  *elapsed_ns = (double)ms * 1e6;
  return TB_TIMING_OK;
}

/* ---- public API ---------------------------------------------------------- */

int tb_timing_abi_version(void) {
  return TB_TIMING_ABI_VERSION;
}

uint32_t tb_timing_result_struct_size(void) {
  return (uint32_t)sizeof(struct tb_timing_result);
}

uint32_t tb_timing_gpu_state_struct_size(void) {
  return (uint32_t)sizeof(struct tb_timing_gpu_state);
}

/* Every begin: refuses a bad argument (its text, or NULL), checks the
 * stream and the library are ready, opens the session in `state` with
 * open(size, timeout_ns) (a probe's capacity, a hold's time-out; 0 where
 * unused) and restores everything if that fails. */
static int begin_session(void *cuda_stream, const char *bad_argument, enum session_state state,
                         int (*open)(uint64_t, uint64_t), uint64_t size, uint64_t timeout_ns) {
  pthread_mutex_lock(&session_lock);
  int rc = bad_argument != NULL ? fail(TB_TIMING_E_ARGUMENT, "%s", bad_argument)
                                : check_ready(cuda_stream);
  if (rc == TB_TIMING_OK) {
    S.state = state;
    rc = open(size, timeout_ns);
    if (rc != TB_TIMING_OK) {
      restore();
    }
  }
  pthread_mutex_unlock(&session_lock);
  return rc == TB_TIMING_OK ? succeed() : rc;
}

static int open_control(uint64_t unused, uint64_t no_hold) {
  (void)unused, (void)no_hold;
  return start_events();
}

int tb_timing_begin_control(void *cuda_stream) {
  return begin_session(cuda_stream, NULL, CONTROL, open_control, 0, 0);
}

/* Loads the hold kernel for the current context (before a probe subscribes,
 * so CUPTI never sees the library's own module load). */
static int prepare_hold(void) {
  const char *step = "";
  CUresult rc = tb_hold_prepare(&hold, S.api, S.context, &step);
  return rc == CUDA_SUCCESS ? TB_TIMING_OK
                            : fail(TB_TIMING_E_CUDA, "%s failed: %s", step, cuda_text(rc));
}

/* Holds the stream (the hold prepared), then records the start event behind
 * the hold. */
static int hold_then_start(uint64_t timeout_ns) {
  CUresult rc = tb_hold_launch(&hold, S.api, S.stream, timeout_ns);
  if (rc != CUDA_SUCCESS) {
    return fail(TB_TIMING_E_CUDA, "cuLaunchKernel (the hold kernel) failed: %s", cuda_text(rc));
  }
  S.held = 1;
  return start_events();
}

static int open_held(uint64_t unused, uint64_t timeout_ns) {
  (void)unused;
  int rc = prepare_hold();
  return rc == TB_TIMING_OK ? hold_then_start(timeout_ns) : rc;
}

static const char *bad_timeout(uint64_t timeout_ns) {
  return timeout_ns == 0 ? "a hold needs a time-out above 0 ns" : NULL;
}

int tb_timing_begin_control_held(void *cuda_stream, uint64_t timeout_ns) {
  return begin_session(cuda_stream, bad_timeout(timeout_ns), CONTROL, open_held, 0, timeout_ns);
}

/* Offset of CUPTI's clock from CLOCK_MONOTONIC: the narrowest of several
 * host brackets around one CUPTI read, taken at its midpoint. */
static int calibrate(double *offset_ns, double *width_ns) {
  double best_width = INFINITY, best_offset = 0.0;
  for (int i = 0; i < TB_CALIBRATION_READS; ++i) {
    uint64_t before = host_ns(), cupti = 0;
    CUptiResult rc = S.api->cuptiGetTimestamp(&cupti);
    uint64_t after = host_ns();
    if (rc != CUPTI_SUCCESS) {
      return fail(TB_TIMING_E_CUPTI, "cuptiGetTimestamp failed: %s", cupti_text(rc));
    }
    double width = (double)(after - before);
    if (width < best_width) {
      best_width = width;
      best_offset = (double)cupti - ((double)before + (double)after) / 2.0;
    }
  }
  *offset_ns = best_offset;
  *width_ns = best_width;
  return TB_TIMING_OK;
}

static int subscribe(void) {
  char holder[256] = "";
  CUpti_SubscriberParams params;
  memset(&params, 0, sizeof params);
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "tilebench";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof holder;
  CUptiResult rc = S.api->cuptiSubscribe_v2(&S.subscriber, on_callback, NULL, &params);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return fail(TB_TIMING_E_CUPTI_BUSY,
                "another CUPTI client is attached (%s); CUDA 13.0 allows one per process, so "
                "the probe refuses rather than disturb it",
                holder[0] ? holder : "name not given");
  }
  if (rc != CUPTI_SUCCESS) {
    return fail(TB_TIMING_E_CUPTI, "cuptiSubscribe_v2 failed: %s", cupti_text(rc));
  }
  S.subscribed = 1;
  return TB_TIMING_OK;
}

/* Steps 1-9 of begin_probe; the caller restores on failure. */
/* Every step of a probe's begin but the start event: CUPTI subscribed, the
 * clocks calibrated, launch callbacks and kernel records on. */
static int open_collection(uint64_t capacity) {
  const char *why = NULL;
  if (tb_timing_api_cupti(&why) == NULL) {
    return fail(TB_TIMING_E_CUPTI_MISSING, "%s", why ? why : "CUPTI is not available");
  }
  uint32_t version = 0;
  CUptiResult crc = S.api->cuptiGetVersion(&version);
  if (crc != CUPTI_SUCCESS || version < TB_CUPTI_FIRST || version >= TB_CUPTI_NEXT_MINOR) {
    return fail(TB_TIMING_E_CUPTI_VERSION,
                "CUPTI API version %u does not match the kernel record layout this library "
                "reads (CUpti_ActivityKernel10 of CUPTI 13.0, versions %d to %d)",
                version, TB_CUPTI_FIRST, TB_CUPTI_NEXT_MINOR - 1);
  }
  /* Kernels still in flight from before begin would arrive without a
   * counted launch: finish them first (outside any timing). */
  CUresult rc = S.api->cuCtxSynchronize();
  if (rc != CUDA_SUCCESS) {
    return fail(TB_TIMING_E_CUDA, "cuCtxSynchronize failed: %s", cuda_text(rc));
  }
  int status = subscribe();
  if (status != TB_TIMING_OK || (status = calibrate(&S.offset_begin_ns, &S.width_begin_ns)) != 0) {
    return status;
  }
  if (!tb_probe_state_init(&S.probe, (unsigned)capacity)) {
    return fail(TB_TIMING_E_CUPTI, "out of memory for %u probe records", (unsigned)capacity);
  }
  tb_probe_bind(&S.probe);
  if ((crc = S.api->cuptiActivityRegisterCallbacks(tb_probe_buffer_requested,
                                                   tb_probe_buffer_completed)) != CUPTI_SUCCESS) {
    return fail(TB_TIMING_E_CUPTI, "cuptiActivityRegisterCallbacks failed: %s", cupti_text(crc));
  }
  S.callbacks_enabled = 1;
  if ((crc = set_launch_callbacks(1)) != CUPTI_SUCCESS) {
    return fail(TB_TIMING_E_CUPTI, "enabling launch callbacks failed: %s", cupti_text(crc));
  }
  size_t stale = 0;
  S.api->cuptiActivityGetNumDroppedRecords(NULL, 0, &stale); /* read and reset */
  if ((crc = S.api->cuptiGetStreamIdEx(S.context, S.stream, 0, &S.timed_stream_id)) !=
      CUPTI_SUCCESS) {
    return fail(TB_TIMING_E_CUPTI, "cuptiGetStreamIdEx failed: %s", cupti_text(crc));
  }
  if ((crc = S.api->cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS) {
    return fail(TB_TIMING_E_CUPTI, "enabling kernel records failed: %s", cupti_text(crc));
  }
  S.activity_enabled = 1;
  return TB_TIMING_OK;
}

static int open_probe(uint64_t capacity, uint64_t no_hold) {
  (void)no_hold;
  int rc = open_collection(capacity);
  return rc == TB_TIMING_OK ? start_events() : rc;
}

/* The hold is launched with collection on, so CUPTI's own work at the first
 * launch after enabling (hundreds of microseconds on the H200) happens while
 * the stream is held, outside the events; its launch and record are the
 * library's, left out of the counts (probe_state.h). */
static int open_probe_held(uint64_t capacity, uint64_t timeout_ns) {
  int rc = prepare_hold();
  if (rc == TB_TIMING_OK) {
    rc = open_collection(capacity);
  }
  if (rc == TB_TIMING_OK) {
    tb_probe_expect_hold(&S.probe);
    rc = hold_then_start(timeout_ns);
  }
  return rc;
}

static const char *bad_capacity(unsigned capacity) {
  return capacity == 0 ? "probe capacity must be at least 1" : NULL;
}

int tb_timing_begin_probe(void *cuda_stream, unsigned capacity) {
  return begin_session(cuda_stream, bad_capacity(capacity), PROBE, open_probe, capacity, 0);
}

int tb_timing_begin_probe_held(void *cuda_stream, unsigned capacity, uint64_t timeout_ns) {
  const char *bad = bad_capacity(capacity);
  return begin_session(cuda_stream, bad ? bad : bad_timeout(timeout_ns), PROBE, open_probe_held,
                       capacity, timeout_ns);
}

int tb_timing_declare_calls(uint64_t count) {
  pthread_mutex_lock(&session_lock);
  int rc = TB_TIMING_OK;
  if (S.state == IDLE) {
    rc = fail(TB_TIMING_E_NOT_ACTIVE, "declare_calls without an open session");
  } else {
    S.declared += count;
  }
  pthread_mutex_unlock(&session_lock);
  return rc == TB_TIMING_OK ? succeed() : rc;
}

static int hold_timeout_failure(void) {
  return fail(TB_TIMING_E_HOLD_TIMEOUT,
              "the hold's time-out released the stream before end: something inside the "
              "session waited for the stream (a synchronising call), or the calls took longer "
              "to issue than the time-out; the interval may hold host gaps, so no timing");
}

static int end_control(struct tb_timing_result *out) {
  double elapsed = 0.0;
  int rc = stop_events(&elapsed);
  if (rc != TB_TIMING_OK) {
    return rc;
  }
  out->end_host_ns = host_ns();
  if (S.held && tb_hold_timed_out(&hold)) {
    return hold_timeout_failure();
  }
  if (S.declared == 0) {
    return fail(TB_TIMING_E_EMPTY, "control session ended with no call declared "
                                   "(tb_timing_declare_calls): an empty batch is not a timing");
  }
  if (!(elapsed > 0.0)) {
    return fail(TB_TIMING_E_EMPTY, "control session measured no elapsed GPU time");
  }
  out->gpu_elapsed_ns = elapsed;
  out->declared_calls = S.declared;
  out->held = (uint32_t)S.held;
  out->begin_host_ns = S.begin_host_ns;
  return TB_TIMING_OK;
}

static int end_probe(struct tb_timing_result *out) {
  double elapsed = 0.0;
  int rc = stop_events(&elapsed);
  if (rc != TB_TIMING_OK) {
    return rc;
  }
  CUresult crc = S.api->cuCtxSynchronize(); /* side-stream kernels finish too */
  out->end_host_ns = host_ns();
  if (crc != CUDA_SUCCESS) {
    return fail(TB_TIMING_E_CUDA, "cuCtxSynchronize failed: %s", cuda_text(crc));
  }
  if (S.held && tb_hold_timed_out(&hold)) {
    return hold_timeout_failure(); /* restore stops collection */
  }
  double offset_end = 0.0, width_end = 0.0;
  rc = calibrate(&offset_end, &width_end);
  size_t dropped = 0;
  stop_collection(&dropped);
  if (rc != TB_TIMING_OK) {
    return rc;
  }
  if (atomic_load(&S.probe.buffer_starved) || dropped > 0) {
    return fail(TB_TIMING_E_DROPPED, "CUPTI dropped %zu record(s)%s; no timing is reported",
                dropped,
                atomic_load(&S.probe.buffer_starved) ? " (no buffer was left for it)" : "");
  }
  if (atomic_load(&S.probe.incomplete_record)) {
    return fail(TB_TIMING_E_DROPPED, "an activity buffer held an incomplete record");
  }
  out->gpu_elapsed_ns = elapsed;
  out->begin_host_ns = S.begin_host_ns;
  out->clock_offset_begin_ns = S.offset_begin_ns;
  out->clock_offset_end_ns = offset_end;
  out->clock_drift_ns = offset_end - S.offset_begin_ns;
  out->calibration_width_ns = fmax(S.width_begin_ns, width_end);
  out->declared_calls = S.declared;
  out->held = (uint32_t)S.held;
  return tb_probe_collect(&S.probe, S.timed_stream_id, S.offset_begin_ns, out);
}

int tb_timing_end(struct tb_timing_result *out) {
  pthread_mutex_lock(&session_lock);
  int rc;
  if (S.state == IDLE) {
    rc = fail(TB_TIMING_E_NOT_ACTIVE, "end without begin: no session is open");
  } else if (out == NULL || out->struct_size != sizeof *out) {
    rc = fail(TB_TIMING_E_ARGUMENT,
              "result must be a struct tb_timing_result with struct_size "
              "= %zu (ABI %d)",
              sizeof *out, TB_TIMING_ABI_VERSION);
    restore();
  } else {
    struct tb_timing_kernel *kernels = out->kernels;
    uint64_t capacity = out->kernels_capacity;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->kernels = kernels;
    out->kernels_capacity = capacity;
    out->scope = S.state == CONTROL ? TB_TIMING_SCOPE_CONTROL : TB_TIMING_SCOPE_PROBE;
    rc = S.state == CONTROL ? end_control(out) : end_probe(out);
    restore();
    if (rc != TB_TIMING_OK) { /* no timing on failure: only the scope stays */
      uint32_t scope = out->scope;
      memset(out, 0, sizeof *out);
      out->struct_size = sizeof *out;
      out->scope = scope;
      out->kernels = kernels;
      out->kernels_capacity = capacity;
    }
  }
  pthread_mutex_unlock(&session_lock);
  return rc == TB_TIMING_OK ? succeed() : rc;
}

int tb_timing_abort(void) {
  pthread_mutex_lock(&session_lock);
  int rc = S.state == IDLE ? fail(TB_TIMING_E_NOT_ACTIVE, "abort without an open session")
                           : TB_TIMING_OK;
  if (S.state != IDLE) {
    restore();
  }
  pthread_mutex_unlock(&session_lock);
  return rc == TB_TIMING_OK ? succeed() : rc;
}

const char *tb_timing_code_name(int code) {
  static const char *const names[] = {
      "TB_TIMING_OK",
      "TB_TIMING_E_ARGUMENT",
      "TB_TIMING_E_BUSY",
      "TB_TIMING_E_NOT_ACTIVE",
      "TB_TIMING_E_NO_GPU",
      "TB_TIMING_E_NO_CONTEXT",
      "TB_TIMING_E_CAPTURING",
      "TB_TIMING_E_CUDA",
      "TB_TIMING_E_EMPTY",
      "TB_TIMING_E_CUPTI_MISSING",
      "TB_TIMING_E_CUPTI_VERSION",
      "TB_TIMING_E_CUPTI_BUSY",
      "TB_TIMING_E_CUPTI",
      "TB_TIMING_E_CAPACITY",
      "TB_TIMING_E_DROPPED",
      "TB_TIMING_E_MISMATCH",
      "TB_TIMING_E_TIMESTAMPS",
      "TB_TIMING_E_HOLD_TIMEOUT",
  };
  return code <= 0 && -code < (int)COUNT_OF(names) ? names[-code] : "unknown";
}
