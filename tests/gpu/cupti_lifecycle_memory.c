/* Where does device memory go across CUPTI sessions? (issue 4: the probe
 * loses ~0.5 MB of free device memory per session.) Runs CUPTI's lifecycle
 * without tilebench's library, one stage more each time, 20 cycles each, and
 * prints the free-memory loss per cycle:
 *   subscribe    cuptiSubscribe + cuptiUnsubscribe
 *   activity     + register buffers, enable/disable kernel records, flush
 *   finalize     + cuptiFinalize after each cycle
 *   pinned       finalize, profiling buffers in pinned host memory
 *   small        finalize, one device buffer of 256 KiB (default: 3 of 3 MiB)
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
static CUptiResult (*set_attribute)(CUpti_ActivityAttribute, size_t *, void *);

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
  *(void **)&set_attribute = dlsym(h, "cuptiActivitySetAttribute");
  return subscribe && unsubscribe && register_callbacks && enable && disable && flush && finalize &&
         set_attribute;
}

enum stage { SUBSCRIBE, ACTIVITY, FINALIZE, PINNED, SMALL, STAGES };

/* Buffer attributes of the pinned and small stages, set before CUPTI
 * (re)initialises in each cycle. */
static void set_buffer_attributes(int stage) {
  if (stage == PINNED) {
    uint8_t pinned = 1;
    size_t size = sizeof pinned;
    set_attribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &size, &pinned);
  } else if (stage == SMALL) {
    uint8_t pinned = 0; /* back to device buffers, smaller ones */
    size_t one = sizeof pinned;
    set_attribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &one, &pinned);
    size_t bytes = 256 << 10, buffers = 1, size = sizeof(size_t);
    set_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes);
    set_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &size, &buffers);
  }
}

/* One cycle of a stage: subscribe; from ACTIVITY on, kernel records; from
 * FINALIZE on, cuptiFinalize at the end. */
static void cycle(const struct tb_cuda *cu, int stage) {
  CUpti_SubscriberHandle h;
  set_buffer_attributes(stage);
  subscribe(&h, on_callback, NULL);
  if (stage >= ACTIVITY) {
    register_callbacks(on_request, on_complete);
    enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cu->cuCtxSynchronize();
    disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  unsubscribe(h);
  if (stage >= FINALIZE) {
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
  static const char *const stages[] = {"subscribe", "activity", "finalize", "pinned", "small"};
  json_t *out = json_object();
  for (int stage = 0; stage < STAGES; ++stage) {
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
