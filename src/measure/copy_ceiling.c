#include "measure/copy_ceiling.h"

#include <string.h>

#include "backends/cuda/driver.h"
#include "results/results.h"
#include "stats/stats.h"
#include "tilebench/timing.h"

static json_t *failure(const char *what) {
  return json_pack("{s:s}", "error", what);
}

json_t *tb_measure_copy_ceiling(void) {
  const struct tb_cuda *cu = tb_cuda();
  if (cu == NULL) {
    return failure("no CUDA driver");
  }
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  if (tb_cuda_enter_device0(cu, &dev, &ctx) != CUDA_SUCCESS) {
    return failure("no context");
  }
  CUdeviceptr src = 0, dst = 0;
  json_t *result = NULL;
  if (cu->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    cu->cuDevicePrimaryCtxRelease(dev);
    return failure("cuStreamCreate failed");
  }
  if (cu->cuMemAlloc(&src, TB_COPY_CEILING_BYTES) != CUDA_SUCCESS ||
      cu->cuMemAlloc(&dst, TB_COPY_CEILING_BYTES) != CUDA_SUCCESS) {
    result = failure("could not allocate 2 GiB for the copy ceiling");
  } else {
    /* Non-zero contents; warm-up copy outside the timing. */
    cu->cuMemsetD32Async(src, 0x3F800000u, TB_COPY_CEILING_BYTES / 4, stream);
    cu->cuMemcpyDtoDAsync(dst, src, TB_COPY_CEILING_BYTES, stream);
    cu->cuStreamSynchronize(stream);
    double elapsed[TB_COPY_CEILING_SAMPLES];
    json_t *samples = json_array();
    size_t taken = 0;
    for (int i = 0; i < TB_COPY_CEILING_SAMPLES; ++i) {
      struct tb_timing_result r = tb_timing_result_for(NULL, 0);
      if (tb_timing_begin_control(stream) != TB_TIMING_OK) {
        break;
      }
      cu->cuMemcpyDtoDAsync(dst, src, TB_COPY_CEILING_BYTES, stream);
      tb_timing_declare_calls(1);
      if (tb_timing_end(&r) != TB_TIMING_OK) {
        break;
      }
      elapsed[taken++] = r.gpu_elapsed_ns;
      json_array_append_new(samples, tb_json_number(r.gpu_elapsed_ns));
    }
    if (taken == TB_COPY_CEILING_SAMPLES) {
      double p50 = tb_median(elapsed, taken);
      double moved = 2.0 * (double)TB_COPY_CEILING_BYTES;
      result = json_pack("{s:I, s:o, s:o, s:o, s:o, s:s}", "bytes_copied",
                         (json_int_t)TB_COPY_CEILING_BYTES, "bytes_moved", tb_json_number(moved),
                         "elapsed_ns", samples, "p50_ns", tb_json_number(p50), "gbps",
                         tb_json_number(moved / p50), "clock", "CUDA events (control scope)");
    } else {
      json_decref(samples);
      result = json_pack("{s:s, s:s}", "error", "timing the copy failed", "reason",
                         tb_timing_last_error());
    }
  }
  if (src) {
    cu->cuMemFree(src);
  }
  if (dst) {
    cu->cuMemFree(dst);
  }
  cu->cuStreamDestroy(stream);
  cu->cuDevicePrimaryCtxRelease(dev);
  return result;
}
