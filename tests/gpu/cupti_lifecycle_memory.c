/* Where does device memory go across CUPTI sessions? (issue 4: the probe
 * loses ~0.5 MB of free device memory per session.) Runs CUPTI's lifecycle
 * without tilebench's library, one stage more each time, 20 cycles each, and
 * prints the free-memory loss per cycle:
 *   subscribe    cuptiSubscribe + cuptiUnsubscribe
 *   activity     + register buffers, enable/disable kernel records, flush
 *   finalize     + cuptiFinalize after each cycle
 *   pinned       finalize, profiling buffers in pinned host memory
 *   small        finalize, one device buffer of 256 KiB (default: 3 of 3 MiB)
 * After each stage it also times a batch of 200 empty launches on the host
 * clock (median of 15), against the same batch before any CUPTI call: does
 * a CUPTI left initialised (no finalize) slow later launches?
 * Run by scripts/gpu.sh tests; writes JSON to argv[1]. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>
#include <jansson.h>

#include "backends/cuda/driver.h"
#include "core/dlfind.h"
#include "stats/stats.h"

#define CYCLES 20
#define BATCH 200
#define BATCH_REPS 15

/* An empty kernel, JIT-compiled by the driver for the device. */
static const char empty_ptx[] = ".version 7.0\n.target sm_52\n.address_size 64\n"
                                ".visible .entry tb_empty()\n{\n  ret;\n}\n";
static CUfunction empty_kernel;

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

static char cupti_path[512];
static uint32_t cupti_version;

static int load(void) {
  void *h = tb_dlopen_cuda_library("libcupti.so.13", cupti_path, sizeof cupti_path);
  if (h == NULL) {
    return 0;
  }
  CUptiResult (*get_version)(uint32_t *);
  *(void **)&get_version = dlsym(h, "cuptiGetVersion");
  if (get_version != NULL) {
    get_version(&cupti_version);
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

static void launch_empty(const struct tb_cuda *cu) {
  cu->cuLaunchKernel(empty_kernel, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
}

/* Host time of BATCH launches and their synchronisation, median of reps. */
static double batch_us(const struct tb_cuda *cu) {
  double t[BATCH_REPS];
  for (int r = 0; r < BATCH_REPS; ++r) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < BATCH; ++i) {
      launch_empty(cu);
    }
    cu->cuCtxSynchronize();
    clock_gettime(CLOCK_MONOTONIC, &b);
    t[r] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
  }
  return tb_median(t, BATCH_REPS);
}

/* One cycle of a stage: subscribe; from ACTIVITY on, kernel records around
 * one launch; from FINALIZE on, cuptiFinalize at the end. */
static void cycle(const struct tb_cuda *cu, int stage) {
  CUpti_SubscriberHandle h;
  set_buffer_attributes(stage);
  subscribe(&h, on_callback, NULL);
  if (stage >= ACTIVITY) {
    register_callbacks(on_request, on_complete);
    enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    launch_empty(cu);
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
  CUmodule module;
  if (tb_cuda_enter_device0(cu, &dev, &ctx) != CUDA_SUCCESS ||
      cu->cuModuleLoadData(&module, empty_ptx) != CUDA_SUCCESS ||
      cu->cuModuleGetFunction(&empty_kernel, module, "tb_empty") != CUDA_SUCCESS) {
    printf("cannot load the empty kernel\n0 passed, 1 failed\n");
    return 1;
  }
  static const char *const stages[] = {"subscribe", "activity", "finalize", "pinned", "small"};
  json_t *out = json_object();
  batch_us(cu); /* warm-up */
  double baseline = batch_us(cu);
  printf("INFO CUPTI API version %u from %s\n", cupti_version, cupti_path);
  json_object_set_new(out, "cupti_path", json_string(cupti_path));
  json_object_set_new(out, "cupti_api_version", json_integer(cupti_version));
  printf("INFO before any CUPTI call: %d empty launches %.1f µs\n", BATCH, baseline);
  json_object_set_new(out, "launch_batch_us_before_cupti", json_real(baseline));
  for (int stage = 0; stage < STAGES; ++stage) {
    cycle(cu, stage); /* first cycle: one-time setup, not counted */
    size_t before = 0, after = 0, total = 0;
    cu->cuMemGetInfo(&before, &total);
    for (int i = 0; i < CYCLES; ++i) {
      cycle(cu, stage);
    }
    cu->cuMemGetInfo(&after, &total);
    double kib_per_cycle = ((double)before - (double)after) / 1024.0 / CYCLES;
    double batch = batch_us(cu);
    printf("INFO %-9s device memory lost per cycle: %.1f KiB; then %d empty launches %.1f µs "
           "(%.2f of before any CUPTI call)\n",
           stages[stage], kib_per_cycle, BATCH, batch, batch / baseline);
    json_object_set_new(out, stages[stage], json_real(kib_per_cycle));
    char key[64];
    snprintf(key, sizeof key, "launch_batch_us_after_%s", stages[stage]);
    json_object_set_new(out, key, json_real(batch));
  }
  if (argc > 1) {
    json_dump_file(out, argv[1], JSON_INDENT(2));
  }
  json_decref(out);
  printf("1 passed, 0 failed\n"); /* a measurement, not a check */
  return 0;
}
