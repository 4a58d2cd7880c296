/* Where does device memory go across CUPTI sessions? (issue 4: the probe
 * loses ~0.5 MB of free device memory per session.) Runs CUPTI's lifecycle
 * without tilebench's library, one stage more each time, 20 cycles each, and
 * prints the free-memory loss per cycle:
 *   subscribe    cuptiSubscribe + cuptiUnsubscribe
 *   activity     + register buffers, enable/disable kernel records, flush
 *   finalize     + cuptiFinalize after each cycle
 * Run by scripts/gpu.sh tests; writes JSON to argv[1]. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <jansson.h>

#include "backends/cuda/driver.h"
#include "core/dlfind.h"

#define CYCLES 20

static CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
static CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
static CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                         CUpti_BuffersCallbackCompleteFunc);
static CUptiResult (*enable)(CUpti_ActivityKind);
static CUptiResult (*disable)(CUpti_ActivityKind);
static CUptiResult (*flush)(uint32_t);
static CUptiResult (*finalize)(void);

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max_records) {
  *size = 1 << 20;
  *buffer = aligned_alloc(8, *size);
  *max_records = 0;
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                 size_t valid) {
  free(buffer);
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id,
                                 const void *data) {}

static int load(void) {
  void *h = tb_dlopen_cuda_library("libcupti.so.13", NULL, 0);
  if (h == NULL) {
    return 0;
  }
  *(void **)&subscribe = dlsym(h, "cuptiSubscribe");
  *(void **)&unsubscribe = dlsym(h, "cuptiUnsubscribe");
  *(void **)&register_callbacks = dlsym(h, "cuptiActivityRegisterCallbacks");
  *(void **)&enable = dlsym(h, "cuptiActivityEnable");
  *(void **)&disable = dlsym(h, "cuptiActivityDisable");
  *(void **)&flush = dlsym(h, "cuptiActivityFlushAll");
  *(void **)&finalize = dlsym(h, "cuptiFinalize");
  return subscribe && unsubscribe && register_callbacks && enable && disable && flush && finalize;
}

/* One cycle up to `stage` (0 subscribe, 1 activity, 2 finalize). */
static void cycle(const struct tb_cuda *cu, int stage) {
  CUpti_SubscriberHandle h;
  subscribe(&h, on_callback, NULL);
  if (stage >= 1) {
    register_callbacks(on_request, on_complete);
    enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cu->cuCtxSynchronize();
    disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  unsubscribe(h);
  if (stage >= 2) {
    finalize();
  }
}

int main(int argc, char **argv) {
  const struct tb_cuda *cu = tb_cuda();
  if (cu == NULL || !load()) {
    printf("no GPU or no CUPTI\n0 passed, 1 failed\n");
    return 1;
  }
  CUdevice dev;
  CUcontext ctx;
  cu->cuDeviceGet(&dev, 0);
  cu->cuDevicePrimaryCtxRetain(&ctx, dev);
  cu->cuCtxSetCurrent(ctx);
  static const char *const stages[] = {"subscribe", "activity", "finalize"};
  json_t *out = json_object();
  for (int stage = 0; stage < 3; ++stage) {
    cycle(cu, stage); /* first cycle: one-time setup, not counted */
    size_t before = 0, after = 0, total = 0;
    cu->cuMemGetInfo(&before, &total);
    for (int i = 0; i < CYCLES; ++i) {
      cycle(cu, stage);
    }
    cu->cuMemGetInfo(&after, &total);
    double kib_per_cycle = ((double)before - (double)after) / 1024.0 / CYCLES;
    printf("INFO %-9s device memory lost per cycle: %.1f KiB\n", stages[stage], kib_per_cycle);
    json_object_set_new(out, stages[stage], json_real(kib_per_cycle));
  }
  if (argc > 1) {
    json_dump_file(out, argv[1], JSON_INDENT(2));
  }
  json_decref(out);
  printf("1 passed, 0 failed\n"); /* a measurement, not a check */
  return 0;
}
