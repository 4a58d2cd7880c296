/* The GPU part of the provenance over a fake driver table (no GPU needed):
 * each device's UUID in nvidia-smi's form when the driver gives one, null
 * when it lacks the entry point or the call fails; compare holds two runs
 * to these (docs/method.md §3.1). */
#include <jansson.h>
#include <string.h>

#include "backends/cuda/driver.h"
#include "cli/gpu_json.h"
#include "test_support.h"

static CUresult fake_version(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

static CUresult fake_count(int *count) {
  *count = 2;
  return CUDA_SUCCESS;
}

static CUresult fake_device_get(CUdevice *d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}

static CUresult fake_name(char *name, int size, CUdevice d) {
  snprintf(name, (size_t)size, "NVIDIA H200");
  return CUDA_SUCCESS;
}

static CUresult fake_attribute(int *value, CUdevice_attribute a, CUdevice d) {
  *value = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
  return CUDA_SUCCESS;
}

static CUresult fake_total_mem(size_t *bytes, CUdevice d) {
  *bytes = (size_t)1 << 30;
  return CUDA_SUCCESS;
}

/* bytes 0x00..0x0f on device 0, 0xf0..0xff on device 1; device 1 fails when asked to */
static int uuid_fails_on_device_1;

static CUresult fake_uuid(CUuuid *uuid, CUdevice d) {
  if (d == 1 && uuid_fails_on_device_1) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  for (int i = 0; i < 16; ++i) {
    uuid->bytes[i] = (char)(d == 0 ? i : 0xf0 + i);
  }
  return CUDA_SUCCESS;
}

static json_t *describe_with(CUresult (*uuid)(CUuuid *, CUdevice)) {
  struct tb_cuda table = {
      .cuDriverGetVersion = fake_version,
      .cuDeviceGetCount = fake_count,
      .cuDeviceGet = fake_device_get,
      .cuDeviceGetName = fake_name,
      .cuDeviceGetAttribute = fake_attribute,
      .cuDeviceTotalMem = fake_total_mem,
      .cuDeviceGetUuid = uuid,
  };
  tb_cuda_driver_install(&table);
  json_t *gpu = tb_cuda_describe();
  assert_true(json_is_true(json_object_get(gpu, "available")));
  assert_string_equal(json_string_value(json_object_get(gpu, "driver_cuda_version")), "13.0");
  assert_int_equal(json_array_size(json_object_get(gpu, "devices")), 2);
  return gpu;
}

static json_t *device(json_t *gpu, size_t i) {
  return json_array_get(json_object_get(gpu, "devices"), i);
}

static void uuids_in_nvidia_smi_form(void **state) {
  uuid_fails_on_device_1 = 0;
  json_t *gpu = describe_with(fake_uuid);
  assert_string_equal(json_string_value(json_object_get(device(gpu, 0), "uuid")),
                      "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  assert_string_equal(json_string_value(json_object_get(device(gpu, 1), "uuid")),
                      "GPU-f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff");
  assert_string_equal(json_string_value(json_object_get(device(gpu, 1), "name")), "NVIDIA H200");
  json_decref(gpu);
}

static void no_uuid_is_null(void **state) {
  json_t *gpu = describe_with(NULL); /* a driver without cuDeviceGetUuid */
  assert_true(json_is_null(json_object_get(device(gpu, 0), "uuid")));
  json_decref(gpu);
  uuid_fails_on_device_1 = 1; /* a failing call leaves only that device without one */
  gpu = describe_with(fake_uuid);
  assert_true(json_is_string(json_object_get(device(gpu, 0), "uuid")));
  assert_true(json_is_null(json_object_get(device(gpu, 1), "uuid")));
  json_decref(gpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(uuids_in_nvidia_smi_form),
      cmocka_unit_test(no_uuid_is_null),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
