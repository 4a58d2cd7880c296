#include "backends/cuda/device_info.h"

#include <string.h>

enum tb_status tb_device_info_read(const struct tb_cuda *cu, CUdevice dev,
                                   struct tb_device_info *info, struct tb_error *err) {
  memset(info, 0, sizeof *info);
  info->device = dev;
  struct {
    int *field;
    CUdevice_attribute attribute;
  } wanted[] = {
      {&info->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {&info->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {&info->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {&info->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
      {&info->max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {&info->max_shared_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
      {&info->max_registers_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {&info->max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {&info->max_shared_per_multiprocessor,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
  };
  for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; ++i) {
    CUresult rc = cu->cuDeviceGetAttribute(wanted[i].field, wanted[i].attribute, dev);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuDeviceGetAttribute", rc);
    }
  }
  cu->cuDeviceGetName(info->name, sizeof info->name, dev);
  return TB_OK;
}

struct tb_device_limits tb_device_limits_of(const struct tb_device_info *info) {
  struct tb_device_limits d = {
      true, (unsigned)info->max_threads_per_block, (unsigned)info->max_shared_per_block,
      (unsigned)info->multiprocessors, "device", (unsigned)info->max_registers_per_block,
      /* clusters since 9.0; 16 blocks with non-portable sizes (the
       * provider allows them on every cluster kernel it binds) */
      info->cc_major >= 9 ? 16u : 0u, (unsigned)info->max_shared_per_multiprocessor};
  return d;
}
