/* The GPU part of a run's provenance (and `tilebench env`), written from
 * the CUDA backend's typed inventory (backends/cuda/driver.h). */
#ifndef TB_CLI_GPU_JSON_H
#define TB_CLI_GPU_JSON_H

#include <jansson.h>

/* {"available": true, "driver_cuda_version", "devices": [...]}, or
 * {"available": false, "reason"}. */
json_t *tb_cuda_describe(void);

#endif
