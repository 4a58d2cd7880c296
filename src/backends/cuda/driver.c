#include "backends/cuda/driver.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

#ifdef TB_HAVE_CUDA_HEADERS

static struct tb_cuda api;
static int api_state; /* 0 untried, 1 ready, -1 failed */
static struct tb_error api_error;

#define BIND(field, symbol) ((*(void **)&api.field = dlsym(handle, symbol)) != NULL)

static int bind_all(void *handle) {
  return BIND(cuInit, "cuInit") && BIND(cuDriverGetVersion, "cuDriverGetVersion") &&
         BIND(cuDeviceGetCount, "cuDeviceGetCount") && BIND(cuDeviceGet, "cuDeviceGet") &&
         BIND(cuDeviceGetName, "cuDeviceGetName") &&
         BIND(cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
         BIND(cuDeviceTotalMem, "cuDeviceTotalMem_v2") &&
         BIND(cuGetErrorString, "cuGetErrorString") &&
         BIND(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
         BIND(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") &&
         BIND(cuCtxSetCurrent, "cuCtxSetCurrent") && BIND(cuCtxSynchronize, "cuCtxSynchronize") &&
         BIND(cuStreamCreate, "cuStreamCreate") && BIND(cuStreamDestroy, "cuStreamDestroy_v2") &&
         BIND(cuStreamSynchronize, "cuStreamSynchronize") && BIND(cuMemAlloc, "cuMemAlloc_v2") &&
         BIND(cuMemFree, "cuMemFree_v2") && BIND(cuMemGetInfo, "cuMemGetInfo_v2") &&
         BIND(cuMemcpyHtoD, "cuMemcpyHtoD_v2") && BIND(cuMemcpyDtoH, "cuMemcpyDtoH_v2") &&
         BIND(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") &&
         BIND(cuMemsetD32Async, "cuMemsetD32Async") && BIND(cuModuleLoadData, "cuModuleLoadData") &&
         BIND(cuModuleUnload, "cuModuleUnload") &&
         BIND(cuModuleGetFunction, "cuModuleGetFunction") &&
         BIND(cuFuncGetAttribute, "cuFuncGetAttribute") &&
         BIND(cuFuncSetAttribute, "cuFuncSetAttribute") && BIND(cuLaunchKernel, "cuLaunchKernel") &&
         BIND(cuStreamBeginCapture, "cuStreamBeginCapture_v2") &&
         BIND(cuStreamEndCapture, "cuStreamEndCapture") &&
         BIND(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags") &&
         BIND(cuGraphLaunch, "cuGraphLaunch") && BIND(cuGraphExecDestroy, "cuGraphExecDestroy") &&
         BIND(cuGraphDestroy, "cuGraphDestroy");
}

static const char *result_text(CUresult rc) {
  const char *text = NULL;
  if (api.cuGetErrorString == NULL || api.cuGetErrorString(rc, &text) != CUDA_SUCCESS || !text) {
    return "unknown CUDA error";
  }
  return text;
}

CUresult tb_cuda_enter_device0(const struct tb_cuda *cu, CUdevice *dev, CUcontext *ctx) {
  CUresult rc = cu->cuDeviceGet(dev, 0);
  if (rc == CUDA_SUCCESS) {
    rc = cu->cuDevicePrimaryCtxRetain(ctx, *dev);
  }
  return rc == CUDA_SUCCESS ? cu->cuCtxSetCurrent(*ctx) : rc;
}

enum tb_status tb_cuda_fail(struct tb_error *err, const char *call, CUresult rc) {
  return tb_fail(err, TB_ERR_RUN, "%s failed: %s", call, result_text(rc));
}

static enum tb_status load_driver(struct tb_error *err) {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "no CUDA driver found (libcuda.so.1: %s)", dlerror());
  }
  if (!bind_all(handle)) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "libcuda.so.1 lacks a required entry point: %s",
                   dlerror());
  }
  CUresult rc = api.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "the CUDA driver did not initialise: %s",
                   result_text(rc));
  }
  int count = 0;
  rc = api.cuDeviceGetCount(&count);
  if (rc != CUDA_SUCCESS || count == 0) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "the CUDA driver found no GPU");
  }
  return TB_OK;
}

enum tb_status tb_cuda_driver_open(struct tb_error *err) {
  if (api_state == 0) {
    api_state = load_driver(&api_error) == TB_OK ? 1 : -1;
  }
  if (api_state < 0) {
    return tb_fail(err, api_error.status, "%s", api_error.message);
  }
  return TB_OK;
}

const struct tb_cuda *tb_cuda(void) {
  struct tb_error ignored = {0};
  return tb_cuda_driver_open(&ignored) == TB_OK ? &api : NULL;
}

static json_t *describe_device(int ordinal) {
  CUdevice dev;
  char name[256] = "?";
  int major = 0, minor = 0, sms = 0, l2 = 0, clock_khz = 0;
  size_t mem = 0;
  if (api.cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS) {
    return json_pack("{s:i, s:s}", "ordinal", ordinal, "error", "cuDeviceGet failed");
  }
  api.cuDeviceGetName(name, sizeof name, dev);
  api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  api.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  api.cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  api.cuDeviceTotalMem(&mem, dev);
  char capability[16];
  snprintf(capability, sizeof capability, "%d.%d", major, minor);
  return json_pack("{s:i, s:s, s:s, s:i, s:i, s:I, s:i}", "ordinal", ordinal, "name", name,
                   "compute_capability", capability, "multiprocessors", sms, "l2_bytes", l2,
                   "memory_bytes", (json_int_t)mem, "max_sm_clock_khz", clock_khz);
}

json_t *tb_cuda_describe(void) {
  struct tb_error err = {0};
  if (tb_cuda_driver_open(&err) != TB_OK) {
    return json_pack("{s:b, s:s}", "available", 0, "reason", err.message);
  }
  int version = 0, count = 0;
  api.cuDriverGetVersion(&version);
  api.cuDeviceGetCount(&count);
  json_t *devices = json_array();
  for (int i = 0; i < count; ++i) {
    json_array_append_new(devices, describe_device(i));
  }
  char text[32];
  snprintf(text, sizeof text, "%d.%d", version / 1000, (version % 1000) / 10);
  return json_pack("{s:b, s:s, s:o}", "available", 1, "driver_cuda_version", text, "devices",
                   devices);
}

#else /* built without CUDA headers */

enum tb_status tb_cuda_driver_open(struct tb_error *err) {
  return tb_fail(err, TB_ERR_UNAVAILABLE,
                 "this tilebench was built without CUDA headers, so it cannot use a GPU");
}

json_t *tb_cuda_describe(void) {
  return json_pack("{s:b, s:s}", "available", 0, "reason",
                   "this tilebench was built without CUDA headers");
}

#endif
