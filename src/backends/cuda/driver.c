#include "backends/cuda/driver.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

#ifdef TB_HAVE_CUDA_HEADERS
#include <cuda.h>

/* Entry points by their exported (versioned) symbol names. */
struct driver_api {
  void *handle;
  CUresult (*init)(unsigned int);
  CUresult (*driver_get_version)(int *);
  CUresult (*device_get_count)(int *);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*device_get_name)(char *, int, CUdevice);
  CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*device_total_mem)(size_t *, CUdevice);
  CUresult (*get_error_string)(CUresult, const char **);
};

static struct driver_api api;
static int api_state; /* 0 untried, 1 ready, -1 failed */
static struct tb_error api_error;

static int bind(void **slot, const char *name) {
  *slot = dlsym(api.handle, name);
  return *slot != NULL;
}

static const char *result_text(CUresult rc) {
  const char *text = NULL;
  if (api.get_error_string == NULL || api.get_error_string(rc, &text) != CUDA_SUCCESS || !text) {
    return "unknown CUDA error";
  }
  return text;
}

static enum tb_status load_driver(struct tb_error *err) {
  api.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api.handle == NULL) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "no CUDA driver found (libcuda.so.1: %s)", dlerror());
  }
  int ok = bind((void **)&api.init, "cuInit") &&
           bind((void **)&api.driver_get_version, "cuDriverGetVersion") &&
           bind((void **)&api.device_get_count, "cuDeviceGetCount") &&
           bind((void **)&api.device_get, "cuDeviceGet") &&
           bind((void **)&api.device_get_name, "cuDeviceGetName") &&
           bind((void **)&api.device_get_attribute, "cuDeviceGetAttribute") &&
           bind((void **)&api.device_total_mem, "cuDeviceTotalMem_v2") &&
           bind((void **)&api.get_error_string, "cuGetErrorString");
  if (!ok) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "libcuda.so.1 lacks a required entry point: %s",
                   dlerror());
  }
  CUresult rc = api.init(0);
  if (rc != CUDA_SUCCESS) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "the CUDA driver did not initialise: %s",
                   result_text(rc));
  }
  int count = 0;
  rc = api.device_get_count(&count);
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

static json_t *describe_device(int ordinal) {
  CUdevice dev;
  char name[256] = "?";
  int major = 0, minor = 0, sms = 0, l2 = 0, clock_khz = 0;
  size_t mem = 0;
  if (api.device_get(&dev, ordinal) != CUDA_SUCCESS) {
    return json_pack("{s:i, s:s}", "ordinal", ordinal, "error", "cuDeviceGet failed");
  }
  api.device_get_name(name, sizeof name, dev);
  api.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  api.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  api.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  api.device_get_attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  api.device_get_attribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  api.device_total_mem(&mem, dev);
  char capability[16];
  snprintf(capability, sizeof capability, "%d.%d", major, minor);
  return json_pack("{s:i, s:s, s:s, s:i, s:i, s:I, s:i}", "ordinal", ordinal, "name", name,
                   "compute_capability", capability,
                   "multiprocessors", sms, "l2_bytes", l2, "memory_bytes", (json_int_t)mem,
                   "max_sm_clock_khz", clock_khz);
}

json_t *tb_cuda_describe(void) {
  struct tb_error err = {0};
  if (tb_cuda_driver_open(&err) != TB_OK) {
    return json_pack("{s:b, s:s}", "available", 0, "reason", err.message);
  }
  int version = 0, count = 0;
  api.driver_get_version(&version);
  api.device_get_count(&count);
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
