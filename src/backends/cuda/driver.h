/* The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so one
 * tilebench binary runs on machines with and without a GPU and says plainly
 * which it found. */
#ifndef TB_BACKENDS_CUDA_DRIVER_H
#define TB_BACKENDS_CUDA_DRIVER_H

#include <jansson.h>

#include "core/error.h"

/* Loads the driver and calls cuInit. TB_ERR_UNAVAILABLE, with the reason,
 * when there is no driver, no device, or this build lacks CUDA headers. */
enum tb_status tb_cuda_driver_open(struct tb_error *err);

/* Driver version and every device's name, compute capability, SM count, L2
 * size and memory; or {"available": false, "reason": ...}. */
json_t *tb_cuda_describe(void);

#endif
