/* NVML snapshot of the current context's device: clocks, throttle (clocks
 * event) reasons, temperature, power. Read-only: never changes a setting. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tilebench/timing.h"
#include "timing/api.h"
#include "timing/last_error.h"

/* NVML enumerates in PCI order, CUDA in its own: match by UUID. */
static int nvml_device(const struct tb_timing_api *api, tb_nvml_device *dev) {
  CUdevice cu;
  CUuuid id;
  if (api->cuCtxGetDevice(&cu) != CUDA_SUCCESS || api->cuDeviceGetUuid(&id, cu) != CUDA_SUCCESS) {
    return 0;
  }
  const unsigned char *b = (const unsigned char *)id.bytes;
  char text[64];
  snprintf(text, sizeof text,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
           b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
           b[15]);
  return api->nvmlDeviceGetHandleByUUID(text, dev) == TB_NVML_SUCCESS;
}

int tb_timing_gpu_state(struct tb_timing_gpu_state *out) {
  if (out == NULL || out->struct_size != sizeof *out) {
    return tb_timing_fail_text(TB_TIMING_E_ARGUMENT,
                               "gpu_state needs struct_size = sizeof(struct tb_timing_gpu_state)");
  }
  memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  out->host_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
  const char *why = NULL;
  const struct tb_timing_api *api = tb_timing_api_driver(&why);
  if (api == NULL) {
    return tb_timing_fail_text(TB_TIMING_E_NO_GPU, why ? why : "no CUDA driver");
  }
  CUcontext ctx = NULL;
  if (api->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == NULL) {
    return tb_timing_fail_text(TB_TIMING_E_NO_CONTEXT, "no CUDA context is current");
  }
  tb_nvml_device dev = NULL;
  if (tb_timing_api_nvml(&why) == NULL || !nvml_device(api, &dev)) {
    /* valid = 0: NVML is optional; the snapshot says so and why */
    tb_timing_fail_text(TB_TIMING_OK, why ? why : "the GPU has no NVML handle");
    return TB_TIMING_OK;
  }
  unsigned long long reasons = 0;
  unsigned int v = 0;
  out->valid = 1;
  out->valid &= api->nvmlDeviceGetClockInfo(dev, TB_NVML_CLOCK_SM, &v) == TB_NVML_SUCCESS;
  out->sm_clock_mhz = v;
  out->valid &= api->nvmlDeviceGetClockInfo(dev, TB_NVML_CLOCK_MEM, &v) == TB_NVML_SUCCESS;
  out->memory_clock_mhz = v;
  out->valid &= api->nvmlDeviceGetMaxClockInfo(dev, TB_NVML_CLOCK_SM, &v) == TB_NVML_SUCCESS;
  out->max_sm_clock_mhz = v;
  out->valid &= api->nvmlDeviceGetCurrentClocksEventReasons(dev, &reasons) == TB_NVML_SUCCESS;
  out->clocks_event_reasons = reasons;
  if (api->nvmlDeviceGetTemperature(dev, TB_NVML_TEMPERATURE_GPU, &v) == TB_NVML_SUCCESS) {
    out->temperature_c = v;
  }
  if (api->nvmlDeviceGetPowerUsage(dev, &v) == TB_NVML_SUCCESS) {
    out->power_mw = v;
  }
  return TB_TIMING_OK;
}
