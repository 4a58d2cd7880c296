/* The device's copy ceiling, measured in the same run as the cases it
 * judges: a >= 1 GiB device-to-device copy timed with the control scope;
 * bandwidth counts bytes read plus bytes written. */
#ifndef TB_MEASURE_COPY_CEILING_H
#define TB_MEASURE_COPY_CEILING_H

#include <jansson.h>

#define TB_COPY_CEILING_BYTES ((size_t)1 << 30)
#define TB_COPY_CEILING_SAMPLES 7

/* {"bytes_copied", "bytes_moved", "elapsed_ns": [...], "p50_ns", "gbps"} or
 * {"error": ...}; needs the CUDA backend and the timing library. */
json_t *tb_measure_copy_ceiling(void);

#endif
