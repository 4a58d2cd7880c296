#include "fake_cuda.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fake_cuda F;
static struct tb_timing_api table;

#define MAX_PENDING 4096
static CUpti_ActivityKernel10 pending[MAX_PENDING];
static int pending_count;
static uint64_t gpu_ns;
static uint32_t next_correlation;
static CUpti_CallbackFunc callback;
static CUpti_BuffersCallbackRequestFunc request_buffer;
static CUpti_BuffersCallbackCompleteFunc complete_buffer;
static unsigned char enabled[2][1024]; /* [driver=0 / runtime=1][cbid] */

struct fake_event {
  uint64_t t;
};

static int failing(const char *name) {
  return F.fail_at != NULL && strcmp(F.fail_at, name) == 0;
}

static uint64_t host_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cupti_clock(void) {
  return host_clock() + 5000000000ULL;
}

/* The fake GPU works in real time: each kernel occupies it for the 1000 ns
 * (and a graph's gaps) the events see, from when it is idle, and
 * synchronisation waits until then, so a session's host time holds its GPU
 * time as on a real GPU. */
static uint64_t busy_until; /* host clock */

static void occupy_gpu(uint64_t ns) {
  uint64_t now = host_clock();
  busy_until = (busy_until > now ? busy_until : now) + ns;
}

/* ---- driver ---- */
static CUresult f_cuInit(unsigned int flags) {
  return CUDA_SUCCESS;
}
static void fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                 uint32_t correlation);
static unsigned context_generation; /* each fake_install is a new context */
static CUresult f_cuCtxGetCurrent(CUcontext *ctx) {
  *ctx = F.have_context ? (CUcontext)(uintptr_t)(0xC0 + context_generation) : NULL;
  fire(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, CUPTI_API_EXIT, 0);
  return CUDA_SUCCESS;
}
static CUresult f_cuCtxGetDevice(CUdevice *dev) {
  *dev = 0;
  return CUDA_SUCCESS;
}
static uint64_t last_kernel_end; /* CUPTI clock */
static void run_hold(void);

/* Like the real thing, synchronisation returns once the "GPU" is done. */
static void wait_for_gpu(void) {
  while (cupti_clock() < last_kernel_end || host_clock() < busy_until) {
  }
}

static CUresult f_cuCtxSynchronize(void) {
  if (failing("cuCtxSynchronize")) {
    return CUDA_ERROR_LAUNCH_FAILED;
  }
  run_hold();
  wait_for_gpu();
  return CUDA_SUCCESS;
}
static CUresult f_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status) {
  *status = F.capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
static CUresult f_cuEventCreate(CUevent *e, unsigned int flags) {
  if (failing("cuEventCreate")) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *e = (CUevent)calloc(1, sizeof(struct fake_event));
  F.events_live++;
  return CUDA_SUCCESS;
}
static CUresult f_cuEventDestroy(CUevent e) {
  free(e);
  F.events_live--;
  return CUDA_SUCCESS;
}
static CUresult f_cuEventRecord(CUevent e, CUstream s) {
  if (failing("cuEventRecord")) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  gpu_ns += F.event_skew_ns;
  ((struct fake_event *)e)->t = gpu_ns;
  return CUDA_SUCCESS;
}
static CUresult f_cuEventSynchronize(CUevent e) {
  run_hold();
  wait_for_gpu();
  return CUDA_SUCCESS;
}
static CUresult f_cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  *ms = (float)((double)(((struct fake_event *)b)->t - ((struct fake_event *)a)->t) / 1e6);
  return CUDA_SUCCESS;
}
/* The hold kernel: the fake GPU "runs" it when an event behind it is waited
 * for, ending by the release flag or, unreleased or stuck, by the time-out. */
static volatile uint32_t *hold_words;
static CUresult f_cuModuleLoadData(CUmodule *m, const void *image) {
  if (failing("cuModuleLoadData")) {
    return CUDA_ERROR_INVALID_PTX;
  }
  *m = (CUmodule)(uintptr_t)0x3D;
  F.modules_loaded++;
  return CUDA_SUCCESS;
}
static CUresult f_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  *f = strcmp(name, "tb_timing_hold") == 0 ? (CUfunction)(uintptr_t)0x4F : NULL;
  return *f ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
static CUresult f_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, CUstream s,
                                 void **params, void **extra) {
  if (failing("cuLaunchKernel")) {
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  }
  hold_words = (volatile uint32_t *)(uintptr_t) * (CUdeviceptr *)params[0];
  F.holds_launched++;
  /* as on a GPU: under CUPTI the hold is a direct driver launch with a record */
  fake_launch((uintptr_t)s, FAKE_DRIVER);
  return CUDA_SUCCESS;
}
static CUresult f_cuMemHostAlloc(void **p, size_t size, unsigned int flags) {
  if (failing("cuMemHostAlloc")) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *p = calloc(1, size); /* kept, like the library's: one per process */
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult f_cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags) {
  *d = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}
int fake_hold_pending_unreleased(void) {
  return hold_words != NULL && hold_words[0] == 0;
}
static void run_hold(void) {
  if (hold_words != NULL) {
    if (hold_words[0] == 0 || F.hold_stuck) {
      hold_words[1] = 1; /* released by its time-out */
    }
    hold_words = NULL;
  }
}
static CUresult f_cuDeviceGetUuid(CUuuid *u, CUdevice d) {
  memset(u, 0, sizeof *u);
  return CUDA_SUCCESS;
}
static CUresult f_cuGetErrorString(CUresult rc, const char **s) {
  *s = "fake CUDA error";
  return CUDA_SUCCESS;
}

/* ---- CUPTI ---- */
static CUptiResult f_cuptiGetVersion(uint32_t *v) {
  *v = F.cupti_version;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiSubscribe_v2(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud,
                                       CUpti_SubscriberParams *p) {
  if (failing("cuptiSubscribe_v2")) {
    return CUPTI_ERROR_NOT_INITIALIZED;
  }
  if (F.foreign_subscriber || F.subscribed) {
    if (p && p->oldSubscriberName && p->oldSubscriberSize > 0) {
      strncpy(p->oldSubscriberName, "CUPTI for Nsight Systems", p->oldSubscriberSize - 1);
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  *h = (CUpti_SubscriberHandle)(uintptr_t)0x5B;
  callback = cb;
  F.subscribed = 1;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiUnsubscribe(CUpti_SubscriberHandle h) {
  F.unsubscribe_calls++;
  F.subscribed = 0;
  callback = NULL;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle h,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (enable && failing("cuptiEnableCallback")) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  int d = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (enabled[d][cbid] != (unsigned char)enable) {
    F.enabled_callbacks += enable ? 1 : -1;
  }
  enabled[d][cbid] = (unsigned char)enable;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc rq,
                                                    CUpti_BuffersCallbackCompleteFunc done) {
  if (failing("cuptiActivityRegisterCallbacks")) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  request_buffer = rq;
  complete_buffer = done;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (failing("cuptiActivityEnable")) {
    return CUPTI_ERROR_NOT_COMPATIBLE;
  }
  F.activity_enabled = 1;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiActivityDisable(CUpti_ActivityKind kind) {
  F.activity_enabled = 0;
  return CUPTI_SUCCESS;
}
/* Hands pending records to the library through its buffer callbacks. */
static CUptiResult f_cuptiActivityFlushAll(uint32_t flags) {
  int per = F.records_per_buffer > 0 ? F.records_per_buffer : MAX_PENDING;
  int i = 0;
  while (i < pending_count && request_buffer != NULL) {
    uint8_t *buf = NULL;
    size_t size = 0, max_records = 0;
    request_buffer(&buf, &size, &max_records);
    int n = pending_count - i < per ? pending_count - i : per;
    if (buf == NULL) {
      F.drops_to_report += (size_t)n; /* CUPTI counts what it could not store */
      i += n;
      continue;
    }
    size_t valid = 0;
    for (int k = 0; k < n && valid + sizeof pending[0] <= size; ++k, ++i) {
      memcpy(buf + valid, &pending[i], sizeof pending[0]);
      valid += sizeof pending[0];
    }
    complete_buffer(NULL, 0, buf, size, valid);
  }
  pending_count = 0;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                                CUpti_Activity **rec) {
  uint8_t *next = *rec == NULL ? buffer : (uint8_t *)*rec + sizeof(CUpti_ActivityKernel10);
  if (next + sizeof(CUpti_ActivityKernel10) > buffer + valid) {
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  *rec = (CUpti_Activity *)next;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n) {
  *n = F.drops_to_report;
  F.drops_to_report = 0;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiGetTimestamp(uint64_t *t) {
  if (failing("cuptiGetTimestamp")) {
    return CUPTI_ERROR_UNKNOWN;
  }
  *t = cupti_clock();
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiGetStreamIdEx(CUcontext c, CUstream s, uint8_t per_thread, uint32_t *id) {
  if (failing("cuptiGetStreamIdEx")) {
    return CUPTI_ERROR_INVALID_STREAM;
  }
  *id = (uint32_t)(uintptr_t)s;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiFinalize(void) {
  F.finalize_calls++;
  F.subscribed = 0;
  F.activity_enabled = 0;
  callback = NULL;
  request_buffer = NULL;
  complete_buffer = NULL;
  memset(enabled, 0, sizeof enabled);
  F.enabled_callbacks = 0;
  return CUPTI_SUCCESS;
}
static CUptiResult f_cuptiGetResultString(CUptiResult rc, const char **s) {
  *s = "fake CUPTI error";
  return CUPTI_SUCCESS;
}

static void fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                 uint32_t correlation) {
  int d = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (callback == NULL || !enabled[d][cbid]) {
    return;
  }
  CUpti_CallbackData data;
  memset(&data, 0, sizeof data);
  data.callbackSite = site;
  data.correlationId = correlation;
  callback(NULL, domain, cbid, &data);
}

static void add_kernel(uintptr_t stream, uint32_t correlation, int bad_timestamps) {
  gpu_ns += 1000;
  occupy_gpu(1000);
  if (!F.activity_enabled || pending_count >= MAX_PENDING) {
    return;
  }
  CUpti_ActivityKernel10 *k = &pending[pending_count++];
  memset(k, 0, sizeof *k);
  k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  uint64_t now = cupti_clock();
  /* a kernel's record spans the 1000 ns the events see it take: no idle GPU between kernels
   * unless a test asks for it (graph_gap_ns) */
  k->start = bad_timestamps ? 0 : now + 100;
  k->end = bad_timestamps ? 0 : now + 1100;
  last_kernel_end = now + 1100;
  k->streamId = (uint32_t)stream;
  k->correlationId = correlation;
}

void fake_launch(uintptr_t stream, enum fake_launch_kind kind) {
  uint32_t outer = ++next_correlation;
  if (kind == FAKE_UNHOOKED) {
    add_kernel(stream, outer, 0);
    return;
  }
  if (kind == FAKE_DRIVER) {
    fire(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER,
         outer);
    fire(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, outer);
    add_kernel(stream, outer, 0);
    return;
  }
  fire(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
       CUPTI_API_ENTER, outer);
  uint32_t nested = ++next_correlation;
  fire(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, nested);
  fire(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, nested);
  fire(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT,
       outer);
  if (kind != FAKE_NO_KERNEL) {
    add_kernel(stream, F.kernel_carries_driver_id ? nested : outer, kind == FAKE_BAD_TIMESTAMPS);
  }
}

void fake_graph_launch(uintptr_t stream, int kernels) {
  uint32_t id = ++next_correlation;
  fire(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
       CUPTI_API_ENTER, id);
  fire(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_EXIT,
       id);
  for (int k = 0; k < kernels; ++k) {
    add_kernel(stream, id, 0); /* all kernels of a graph launch share its id */
    gpu_ns += F.graph_gap_ns;
    occupy_gpu(F.graph_gap_ns);
  }
}

void fake_install(void) {
  memset(&F, 0, sizeof F);
  hold_words = NULL;
  context_generation++;
  F.have_context = 1;
  F.cupti_version = 130001;
  pending_count = 0;
  gpu_ns = 0;
  busy_until = 0;
  callback = NULL;
  request_buffer = NULL;
  complete_buffer = NULL;
  memset(enabled, 0, sizeof enabled);
  table = (struct tb_timing_api){
      .cuInit = f_cuInit,
      .cuCtxGetCurrent = f_cuCtxGetCurrent,
      .cuCtxGetDevice = f_cuCtxGetDevice,
      .cuCtxSynchronize = f_cuCtxSynchronize,
      .cuStreamIsCapturing = f_cuStreamIsCapturing,
      .cuEventCreate = f_cuEventCreate,
      .cuEventDestroy = f_cuEventDestroy,
      .cuEventRecord = f_cuEventRecord,
      .cuEventSynchronize = f_cuEventSynchronize,
      .cuEventElapsedTime = f_cuEventElapsedTime,
      .cuDeviceGetUuid = f_cuDeviceGetUuid,
      .cuGetErrorString = f_cuGetErrorString,
      .cuModuleLoadData = f_cuModuleLoadData,
      .cuModuleGetFunction = f_cuModuleGetFunction,
      .cuLaunchKernel = f_cuLaunchKernel,
      .cuMemHostAlloc = f_cuMemHostAlloc,
      .cuMemHostGetDevicePointer = f_cuMemHostGetDevicePointer,
      .cuptiGetVersion = f_cuptiGetVersion,
      .cuptiSubscribe_v2 = f_cuptiSubscribe_v2,
      .cuptiUnsubscribe = f_cuptiUnsubscribe,
      .cuptiEnableCallback = f_cuptiEnableCallback,
      .cuptiActivityRegisterCallbacks = f_cuptiActivityRegisterCallbacks,
      .cuptiActivityEnable = f_cuptiActivityEnable,
      .cuptiActivityDisable = f_cuptiActivityDisable,
      .cuptiActivityFlushAll = f_cuptiActivityFlushAll,
      .cuptiActivityGetNextRecord = f_cuptiActivityGetNextRecord,
      .cuptiActivityGetNumDroppedRecords = f_cuptiActivityGetNumDroppedRecords,
      .cuptiGetTimestamp = f_cuptiGetTimestamp,
      .cuptiGetStreamIdEx = f_cuptiGetStreamIdEx,
      .cuptiFinalize = f_cuptiFinalize,
      .cuptiGetResultString = f_cuptiGetResultString,
  };
  tb_timing_install_api(&table);
}

/* NVML: one fake device, its readings scripted by F. */
static size_t script_index(int read) {
  size_t last = F.clock_script_length ? F.clock_script_length - 1 : 0;
  return (size_t)read < last ? (size_t)read : last;
}
static tb_nvml_return f_nvmlInit(void) {
  return TB_NVML_SUCCESS;
}
static tb_nvml_return f_nvmlDeviceGetHandleByUUID(const char *uuid, tb_nvml_device *dev) {
  *dev = (tb_nvml_device)(uintptr_t)1;
  return TB_NVML_SUCCESS;
}
static tb_nvml_return f_nvmlDeviceGetClockInfo(tb_nvml_device dev, int which, unsigned *mhz) {
  if (which != TB_NVML_CLOCK_SM) {
    *mhz = 3201;
    return TB_NVML_SUCCESS;
  }
  *mhz = F.clock_script_length ? F.sm_clock_mhz[script_index(F.nvml_reads)] : 1980;
  F.nvml_reads++;
  return TB_NVML_SUCCESS;
}
static tb_nvml_return f_nvmlDeviceGetMaxClockInfo(tb_nvml_device dev, int which, unsigned *mhz) {
  *mhz = 1980;
  return TB_NVML_SUCCESS;
}
/* Read after the SM clock in a snapshot: the reasons of the same read. */
static tb_nvml_return f_nvmlDeviceGetCurrentClocksEventReasons(tb_nvml_device dev,
                                                               unsigned long long *reasons) {
  *reasons = F.clock_script_length
                 ? F.clocks_event_reasons[script_index(F.nvml_reads > 0 ? F.nvml_reads - 1 : 0)]
                 : 0;
  return TB_NVML_SUCCESS;
}
static tb_nvml_return f_nvmlDeviceGetTemperature(tb_nvml_device dev, int which, unsigned *c) {
  *c = 40;
  return TB_NVML_SUCCESS;
}
static tb_nvml_return f_nvmlDeviceGetPowerUsage(tb_nvml_device dev, unsigned *mw) {
  *mw = 120000;
  return TB_NVML_SUCCESS;
}

void fake_install_nvml(void) {
  table.nvmlInit_v2 = f_nvmlInit;
  table.nvmlDeviceGetHandleByUUID = f_nvmlDeviceGetHandleByUUID;
  table.nvmlDeviceGetClockInfo = f_nvmlDeviceGetClockInfo;
  table.nvmlDeviceGetMaxClockInfo = f_nvmlDeviceGetMaxClockInfo;
  table.nvmlDeviceGetCurrentClocksEventReasons = f_nvmlDeviceGetCurrentClocksEventReasons;
  table.nvmlDeviceGetTemperature = f_nvmlDeviceGetTemperature;
  table.nvmlDeviceGetPowerUsage = f_nvmlDeviceGetPowerUsage;
}

void fake_remove_cupti(void) {
  table.cuptiGetVersion = NULL;
}
