/* Run-time loading of the real libraries into the function table. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "core/dlfind.h"
#include "timing/api.h"

static struct tb_timing_api real;
static const struct tb_timing_api *installed; /* a test's fake, or NULL */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int driver_state, cupti_state, nvml_state; /* 0 untried, 1 loaded, -1 failed */
static const char *driver_why, *cupti_why, *nvml_why;
static char cupti_path[512];

#define BIND(handle, field, symbol) ((*(void **)&real.field = dlsym(handle, symbol)) != NULL)

static int load_driver(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    driver_why = "no CUDA driver: libcuda.so.1 could not be loaded";
    return -1;
  }
  int ok =
      BIND(h, cuInit, "cuInit") && BIND(h, cuCtxGetCurrent, "cuCtxGetCurrent") &&
      BIND(h, cuCtxGetDevice, "cuCtxGetDevice") && BIND(h, cuCtxSynchronize, "cuCtxSynchronize") &&
      BIND(h, cuStreamIsCapturing, "cuStreamIsCapturing") &&
      BIND(h, cuEventCreate, "cuEventCreate") && BIND(h, cuEventDestroy, "cuEventDestroy_v2") &&
      BIND(h, cuEventRecord, "cuEventRecord") &&
      BIND(h, cuEventSynchronize, "cuEventSynchronize") &&
      BIND(h, cuEventElapsedTime, "cuEventElapsedTime_v2") &&
      BIND(h, cuDeviceGetUuid, "cuDeviceGetUuid_v2") &&
      BIND(h, cuGetErrorString, "cuGetErrorString") &&
      BIND(h, cuModuleLoadData, "cuModuleLoadData") &&
      BIND(h, cuModuleGetFunction, "cuModuleGetFunction") &&
      BIND(h, cuLaunchKernel, "cuLaunchKernel") && BIND(h, cuMemHostAlloc, "cuMemHostAlloc") &&
      BIND(h, cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
  if (!ok) {
    driver_why = "libcuda.so.1 lacks an entry point the timing library needs";
    return -1;
  }
  if (real.cuInit(0) != CUDA_SUCCESS) {
    driver_why = "the CUDA driver did not initialise (no GPU?)";
    return -1;
  }
  return 1;
}

static int load_cupti(void) {
  /* By soname first: a process that already holds CUPTI (PyTorch's copy)
   * reuses it; then the CUDA toolkit's directories. */
  void *h = tb_dlopen_cuda_library("libcupti.so.13", cupti_path, sizeof cupti_path);
  if (h == NULL) {
    cupti_why = "libcupti.so.13 could not be loaded (add the CUDA 13 CUPTI library to the "
                "loader path)";
    return -1;
  }
  int ok = BIND(h, cuptiGetVersion, "cuptiGetVersion") &&
           BIND(h, cuptiSubscribe_v2, "cuptiSubscribe_v2") &&
           BIND(h, cuptiUnsubscribe, "cuptiUnsubscribe") &&
           BIND(h, cuptiEnableCallback, "cuptiEnableCallback") &&
           BIND(h, cuptiActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks") &&
           BIND(h, cuptiActivityEnable, "cuptiActivityEnable") &&
           BIND(h, cuptiActivityDisable, "cuptiActivityDisable") &&
           BIND(h, cuptiActivityFlushAll, "cuptiActivityFlushAll") &&
           BIND(h, cuptiActivityGetNextRecord, "cuptiActivityGetNextRecord") &&
           BIND(h, cuptiActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords") &&
           BIND(h, cuptiGetTimestamp, "cuptiGetTimestamp") &&
           BIND(h, cuptiGetStreamIdEx, "cuptiGetStreamIdEx") &&
           BIND(h, cuptiFinalize, "cuptiFinalize") &&
           BIND(h, cuptiGetResultString, "cuptiGetResultString");
  if (!ok) {
    cupti_why = "libcupti.so.13 lacks an entry point the probe needs (CUPTI older than 13.0?)";
    return -1;
  }
  return 1;
}

static int load_nvml(void) {
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    nvml_why = "libnvidia-ml.so.1 could not be loaded";
    return -1;
  }
  int ok = BIND(h, nvmlInit_v2, "nvmlInit_v2") &&
           BIND(h, nvmlDeviceGetHandleByUUID, "nvmlDeviceGetHandleByUUID") &&
           BIND(h, nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo") &&
           BIND(h, nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo") &&
           BIND(h, nvmlDeviceGetTemperature, "nvmlDeviceGetTemperature") &&
           BIND(h, nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
  /* Newer name first; drivers before r535 only have the "throttle" spelling. */
  if (ok &&
      !BIND(h, nvmlDeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons")) {
    ok = BIND(h, nvmlDeviceGetCurrentClocksEventReasons,
              "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  if (!ok || real.nvmlInit_v2() != TB_NVML_SUCCESS) {
    nvml_why = "NVML did not initialise";
    return -1;
  }
  return 1;
}

static const struct tb_timing_api *load(int *state, int (*loader)(void), const char *const *why_src,
                                        const char **why) {
  if (installed != NULL) {
    return installed;
  }
  pthread_mutex_lock(&load_lock);
  if (*state == 0) {
    *state = loader();
  }
  int ok = *state > 0;
  pthread_mutex_unlock(&load_lock);
  if (!ok && why != NULL) {
    *why = *why_src;
  }
  return ok ? &real : NULL;
}

const struct tb_timing_api *tb_timing_api_driver(const char **why) {
  return load(&driver_state, load_driver, &driver_why, why);
}

const struct tb_timing_api *tb_timing_api_cupti(const char **why) {
  if (installed != NULL) {
    if (installed->cuptiGetVersion == NULL && why != NULL) {
      *why = "libcupti.so.13 could not be loaded";
    }
    return installed->cuptiGetVersion ? installed : NULL;
  }
  if (tb_timing_api_driver(why) == NULL) {
    return NULL;
  }
  return load(&cupti_state, load_cupti, &cupti_why, why);
}

const struct tb_timing_api *tb_timing_api_nvml(const char **why) {
  if (installed != NULL) {
    if (installed->nvmlInit_v2 == NULL && why != NULL) {
      *why = "NVML not available";
    }
    return installed->nvmlInit_v2 ? installed : NULL;
  }
  return load(&nvml_state, load_nvml, &nvml_why, why);
}

void tb_timing_install_api(const struct tb_timing_api *fake) {
  installed = fake;
}
