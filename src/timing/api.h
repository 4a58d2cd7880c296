/* The CUDA driver, CUPTI and NVML entry points the timing library uses, as
 * one table. Production fills it with dlsym from the real libraries; tests
 * install a fake table to drive every state-machine path (injected failures
 * at each step of begin, drops, overflow, foreign subscribers) without a GPU.
 * Internal: not part of the public ABI. */
#ifndef TB_TIMING_API_H
#define TB_TIMING_API_H

#include <cuda.h>
#include <cupti.h>
#include <stdint.h>

/* NVML is declared here (its header is not part of the CUDA toolkit
 * packages we build against); only stable, documented signatures. */
typedef int tb_nvml_return;
typedef struct tb_nvml_device *tb_nvml_device;
#define TB_NVML_SUCCESS 0
#define TB_NVML_CLOCK_SM 1
#define TB_NVML_CLOCK_MEM 2
#define TB_NVML_TEMPERATURE_GPU 0

struct tb_timing_api {
  /* driver */
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxGetDevice)(CUdevice *);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
  CUresult (*cuEventCreate)(CUevent *, unsigned int);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  /* held control sessions: the hold kernel and its host-mapped flag */
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuMemHostAlloc)(void **, size_t, unsigned int);
  CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned int);
  /* CUPTI (NULL until the probe first loads it) */
  CUptiResult (*cuptiGetVersion)(uint32_t *);
  CUptiResult (*cuptiSubscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                   CUpti_SubscriberParams *);
  CUptiResult (*cuptiUnsubscribe)(CUpti_SubscriberHandle);
  CUptiResult (*cuptiEnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                     CUpti_CallbackId);
  CUptiResult (*cuptiActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                                CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*cuptiActivityEnable)(CUpti_ActivityKind);
  CUptiResult (*cuptiActivityDisable)(CUpti_ActivityKind);
  CUptiResult (*cuptiActivityFlushAll)(uint32_t);
  CUptiResult (*cuptiActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
  CUptiResult (*cuptiActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
  CUptiResult (*cuptiGetTimestamp)(uint64_t *);
  CUptiResult (*cuptiGetStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t *);
  CUptiResult (*cuptiFinalize)(void);
  CUptiResult (*cuptiGetResultString)(CUptiResult, const char **);
  /* NVML (NULL when unavailable) */
  tb_nvml_return (*nvmlInit_v2)(void);
  tb_nvml_return (*nvmlDeviceGetHandleByUUID)(const char *, tb_nvml_device *);
  tb_nvml_return (*nvmlDeviceGetClockInfo)(tb_nvml_device, int, unsigned int *);
  tb_nvml_return (*nvmlDeviceGetMaxClockInfo)(tb_nvml_device, int, unsigned int *);
  tb_nvml_return (*nvmlDeviceGetCurrentClocksEventReasons)(tb_nvml_device, unsigned long long *);
  tb_nvml_return (*nvmlDeviceGetTemperature)(tb_nvml_device, int, unsigned int *);
  tb_nvml_return (*nvmlDeviceGetPowerUsage)(tb_nvml_device, unsigned int *);
};

/* The active table: loads the driver on first use. Returns NULL (reason in
 * *why) when no driver is there. */
const struct tb_timing_api *tb_timing_api_driver(const char **why);
/* Loads CUPTI into the active table on first use; NULL with *why on failure. */
const struct tb_timing_api *tb_timing_api_cupti(const char **why);
/* Loads NVML on first use; NULL with *why on failure. */
const struct tb_timing_api *tb_timing_api_nvml(const char **why);

/* Tests: replace the whole table (NULL restores the real libraries). */
void tb_timing_install_api(const struct tb_timing_api *fake);

#endif
