#include "backends/cuda/driver.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
         BIND(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel") &&
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
  /* optional: a driver without it still runs, its GPUs just carry no UUID */
  if (!BIND(cuDeviceGetUuid, "cuDeviceGetUuid_v2")) {
    (void)BIND(cuDeviceGetUuid, "cuDeviceGetUuid");
  }
  (void)BIND(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
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

void tb_cuda_driver_install(const struct tb_cuda *table) {
  api = *table;
  api_state = 1;
}

/* nvidia-smi's form of a device UUID: "GPU-" and 16 bytes in 8-4-4-4-12 hex. */
static void uuid_text(const CUuuid *u, char *out, size_t size) {
  const unsigned char *b = (const unsigned char *)u->bytes;
  snprintf(out, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
           b[14], b[15]);
}

static void read_gpu(int ordinal, struct tb_gpu_facts *g) {
  CUdevice dev;
  g->ordinal = ordinal;
  snprintf(g->name, sizeof g->name, "?");
  g->ok = api.cuDeviceGet(&dev, ordinal) == CUDA_SUCCESS;
  if (!g->ok) {
    return;
  }
  api.cuDeviceGetName(g->name, sizeof g->name, dev);
  api.cuDeviceGetAttribute(&g->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  api.cuDeviceGetAttribute(&g->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  api.cuDeviceGetAttribute(&g->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  api.cuDeviceGetAttribute(&g->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  api.cuDeviceGetAttribute(&g->max_sm_clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  api.cuDeviceTotalMem(&g->memory_bytes, dev);
  CUuuid uuid;
  if (api.cuDeviceGetUuid != NULL && api.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
    uuid_text(&uuid, g->uuid, sizeof g->uuid);
  }
}

void tb_cuda_inventory_read(struct tb_gpu_inventory *out) {
  memset(out, 0, sizeof *out);
  struct tb_error err = {0};
  if (tb_cuda_driver_open(&err) != TB_OK) {
    snprintf(out->reason, sizeof out->reason, "%s", err.message);
    return;
  }
  out->available = true;
  int version = 0, count = 0;
  api.cuDriverGetVersion(&version);
  api.cuDeviceGetCount(&count);
  snprintf(out->driver_cuda_version, sizeof out->driver_cuda_version, "%d.%d", version / 1000,
           (version % 1000) / 10);
  out->count = count < TB_MAX_GPUS ? count : TB_MAX_GPUS;
  for (int i = 0; i < out->count; ++i) {
    read_gpu(i, &out->devices[i]);
  }
}

#else /* built without CUDA headers */

enum tb_status tb_cuda_driver_open(struct tb_error *err) {
  return tb_fail(err, TB_ERR_UNAVAILABLE,
                 "this tilebench was built without CUDA headers, so it cannot use a GPU");
}

void tb_cuda_inventory_read(struct tb_gpu_inventory *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->reason, sizeof out->reason, "this tilebench was built without CUDA headers");
}

#endif
