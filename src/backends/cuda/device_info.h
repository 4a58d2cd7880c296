/* What the CUDA backend needs to know of its device. */
#ifndef TB_BACKENDS_CUDA_DEVICE_INFO_H
#define TB_BACKENDS_CUDA_DEVICE_INFO_H

#include "backends/cuda/driver.h"
#include "planner/planner.h"

struct tb_device_info {
  CUdevice device;
  char name[256];
  int cc_major, cc_minor;
  int multiprocessors;
  int l2_bytes;
  int max_threads_per_block;
  int max_shared_per_block; /* static shared memory a block may use */
  int max_shared_optin;     /* static + dynamic, once a kernel opts in */
  int max_shared_per_multiprocessor;
  int max_registers_per_block;
};

enum tb_status tb_device_info_read(const struct tb_cuda *cu, CUdevice dev,
                                   struct tb_device_info *info, struct tb_error *err);
/* The planner's view of the device. */
struct tb_device_limits tb_device_limits_of(const struct tb_device_info *info);

#endif
