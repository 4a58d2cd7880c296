/* The timing library on a real GPU (cupti.md §6; issue 4's GPU tests).
 * Run by scripts/gpu.sh; prints one line per check and closes with
 * "N passed, N failed". Writes measured facts as JSON to argv[1]. */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>
#include <jansson.h>

#include "backends/cuda/driver.h"
#include "backends/cuda/nvrtc.h"
#include "core/dlfind.h"
#include "stats/stats.h"
#include "tilebench/timing.h"

static int passed, failed;
static json_t *facts;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (cond) {                                                                                    \
      passed++;                                                                                    \
      printf("PASS ");                                                                             \
    } else {                                                                                       \
      failed++;                                                                                    \
      printf("FAIL ");                                                                             \
    }                                                                                              \
    printf(__VA_ARGS__);                                                                           \
    printf("\n");                                                                                  \
  } while (0)

static const char *kernels_source =
    "extern \"C\" __global__ void spin(long long cycles, float *out) {\n"
    "  long long start = clock64();\n"
    "  while (clock64() - start < cycles) {}\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void scale(const float *in, float *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = in[i] * 1.5f + 0.25f;\n"
    "}\n"
    "extern \"C\" __global__ void empty() {}\n";

static const struct tb_cuda *cu;
static CUfunction k_spin, k_scale, k_empty;
static CUstream stream_a, stream_b;
static long long cycles_per_ms;

static void launch(CUfunction f, unsigned blocks, unsigned threads, CUstream s, void **args) {
  CUresult rc = cu->cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s, args, NULL);
  if (rc != CUDA_SUCCESS) {
    fprintf(stderr, "launch failed: %d\n", rc);
    exit(1);
  }
}

static void launch_empty(CUstream s, unsigned blocks) {
  launch(k_empty, blocks, 32, s, NULL);
}

static int end_session(struct tb_timing_result *r) {
  int rc = tb_timing_end(r);
  if (rc != TB_TIMING_OK) {
    printf("     (%s: %s)\n", tb_timing_code_name(rc), tb_timing_last_error());
  }
  return rc;
}

/* ---- checks ---- */

static void transparency(void) {
  enum { N = 1 << 20 };
  float *host = malloc(N * sizeof *host), *a = malloc(N * 4), *b = malloc(N * 4),
        *c = malloc(N * 4);
  for (int i = 0; i < N; ++i) {
    host[i] = (float)sin(i * 0.001) * 3.0f;
  }
  CUdeviceptr in, out;
  cu->cuMemAlloc(&in, N * 4);
  cu->cuMemAlloc(&out, N * 4);
  cu->cuMemcpyHtoD(in, host, N * 4);
  int n = N;
  void *args[] = {&in, &out, &n};
  float *dest[] = {a, b, c};
  for (int mode = 0; mode < 3; ++mode) {
    cu->cuMemsetD32Async(out, 0, N, stream_a);
    if (mode == 1) {
      tb_timing_begin_control(stream_a);
    } else if (mode == 2) {
      tb_timing_begin_probe(stream_a, 16);
    }
    launch(k_scale, N / 256, 256, stream_a, args);
    if (mode > 0) {
      tb_timing_declare_calls(1);
      struct tb_timing_result r = tb_timing_result_for(NULL, 0);
      end_session(&r);
    }
    cu->cuStreamSynchronize(stream_a);
    cu->cuMemcpyDtoH(dest[mode], out, N * 4);
  }
  CHECK(memcmp(a, b, N * 4) == 0 && memcmp(a, c, N * 4) == 0,
        "outputs bit-identical with no observer, under control and under probe");
  cu->cuMemFree(in);
  cu->cuMemFree(out);
  free(host), free(a), free(b), free(c);
}

static void counts_on_two_streams(void) {
  struct tb_timing_kernel kernels[64];
  int rc = tb_timing_begin_probe(stream_a, 64);
  for (int i = 0; i < 5; ++i) {
    launch_empty(stream_a, 1);
  }
  for (int i = 0; i < 3; ++i) {
    launch_empty(stream_b, 1);
  }
  tb_timing_declare_calls(5);
  struct tb_timing_result r = tb_timing_result_for(kernels, 64);
  rc = rc == TB_TIMING_OK ? end_session(&r) : rc;
  CHECK(rc == TB_TIMING_OK && r.counted_launches == 8 && r.kernels_seen == 8,
        "probe counts 5 + 3 launches on two streams exactly (launches %llu, kernels %llu)",
        (unsigned long long)r.counted_launches, (unsigned long long)r.kernels_seen);
  CHECK(r.side_stream_kernels == 3 && r.streams_seen == 2,
        "side-stream work reported: %llu kernels on %llu streams",
        (unsigned long long)r.side_stream_kernels, (unsigned long long)r.streams_seen);
  int inside = 1;
  for (uint64_t k = 0; k < r.kernels_written; ++k) {
    inside &= kernels[k].start_ns >= r.begin_host_ns && kernels[k].end_ns <= r.end_host_ns;
  }
  CHECK(rc == TB_TIMING_OK && inside && r.kernels_before_launch == 0,
        "every kernel lies between begin and the final sync on the host clock, none before its "
        "launch (drift %.0f ns, calibration width %.0f ns)",
        r.clock_drift_ns, r.calibration_width_ns);
  json_object_set_new(facts, "two_streams_clock_drift_ns", json_real(r.clock_drift_ns));
  json_object_set_new(facts, "calibration_width_ns", json_real(r.calibration_width_ns));
}

static void launch_ex(void) {
  CUresult (*launch_kernel_ex)(const CUlaunchConfig *, CUfunction, void **, void **) = NULL;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  *(void **)&launch_kernel_ex = h ? dlsym(h, "cuLaunchKernelEx") : NULL;
  if (launch_kernel_ex == NULL) {
    CHECK(0, "cuLaunchKernelEx not found");
    return;
  }
  CUlaunchConfig config;
  memset(&config, 0, sizeof config);
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 32;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream_a;
  int rc = tb_timing_begin_probe(stream_a, 16);
  launch_kernel_ex(&config, k_empty, NULL, NULL);
  launch_kernel_ex(&config, k_empty, NULL, NULL);
  tb_timing_declare_calls(2);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  rc = rc == TB_TIMING_OK ? end_session(&r) : rc;
  CHECK(rc == TB_TIMING_OK && r.counted_launches == 2 && r.kernels_seen == 2,
        "cuLaunchKernelEx counted: launches %llu, kernels %llu",
        (unsigned long long)r.counted_launches, (unsigned long long)r.kernels_seen);
}

static void graph_launch(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  CUresult (*begin)(CUstream, CUstreamCaptureMode) = NULL;
  CUresult (*end)(CUstream, CUgraph *) = NULL;
  CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long) = NULL;
  CUresult (*glaunch)(CUgraphExec, CUstream) = NULL;
  *(void **)&begin = dlsym(h, "cuStreamBeginCapture_v2");
  *(void **)&end = dlsym(h, "cuStreamEndCapture");
  *(void **)&instantiate = dlsym(h, "cuGraphInstantiateWithFlags");
  *(void **)&glaunch = dlsym(h, "cuGraphLaunch");
  CUgraph graph;
  CUgraphExec exec;
  if (!begin || !end || !instantiate || !glaunch ||
      begin(stream_a, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS) {
    CHECK(0, "graph API unavailable");
    return;
  }
  int capturing = tb_timing_begin_control(stream_a);
  for (int i = 0; i < 4; ++i) {
    launch_empty(stream_a, 1);
  }
  end(stream_a, &graph);
  CHECK(capturing == TB_TIMING_E_CAPTURING, "begin on a capturing stream refused (%s)",
        tb_timing_code_name(capturing));
  instantiate(&exec, graph, 0);
  glaunch(exec, stream_a); /* first launch outside: uploads the graph */
  cu->cuStreamSynchronize(stream_a);
  for (int session = 0; session < 2; ++session) { /* 13.0 bug: wrong ids after the first */
    int rc = tb_timing_begin_probe(stream_a, 16);
    glaunch(exec, stream_a);
    tb_timing_declare_calls(1);
    struct tb_timing_result r = tb_timing_result_for(NULL, 0);
    rc = rc == TB_TIMING_OK ? end_session(&r) : rc;
    CHECK(rc == TB_TIMING_OK && r.counted_launches == 1 && r.kernels_seen == 4,
          "graph of 4 kernels, session %d: launches %llu, kernels %llu", session + 1,
          (unsigned long long)r.counted_launches, (unsigned long long)r.kernels_seen);
  }
}

static void cublas_call(void) {
  void *h = tb_dlopen_cuda_library("libcublas.so.13", NULL, 0);
  if (h == NULL) {
    CHECK(0, "libcublas.so.13 not found");
    return;
  }
  int (*create)(void **) = NULL, (*set_stream)(void *, CUstream) = NULL, (*destroy)(void *) = NULL;
  int (*sgemm)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
               int, const float *, float *, int) = NULL;
  *(void **)&create = dlsym(h, "cublasCreate_v2");
  *(void **)&set_stream = dlsym(h, "cublasSetStream_v2");
  *(void **)&destroy = dlsym(h, "cublasDestroy_v2");
  *(void **)&sgemm = dlsym(h, "cublasSgemm_v2");
  void *handle = NULL;
  if (!create || !sgemm || create(&handle) != 0) {
    CHECK(0, "cuBLAS did not initialise");
    return;
  }
  set_stream(handle, stream_a);
  enum { D = 256 };
  CUdeviceptr a, b, c;
  cu->cuMemAlloc(&a, D * D * 4);
  cu->cuMemAlloc(&b, D * D * 4);
  cu->cuMemAlloc(&c, D * D * 4);
  cu->cuMemsetD32Async(a, 0x3F800000u, D * D, stream_a);
  cu->cuMemsetD32Async(b, 0x3F800000u, D * D, stream_a);
  float one = 1.0f, zero = 0.0f;
  sgemm(handle, 0, 0, D, D, D, &one, (const float *)a, D, (const float *)b, D, &zero, (float *)c,
        D);
  cu->cuStreamSynchronize(stream_a); /* warm-up outside the probe */
  int rc = tb_timing_begin_probe(stream_a, 64);
  sgemm(handle, 0, 0, D, D, D, &one, (const float *)a, D, (const float *)b, D, &zero, (float *)c,
        D);
  tb_timing_declare_calls(1);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  rc = rc == TB_TIMING_OK ? end_session(&r) : rc;
  CHECK(rc == TB_TIMING_OK && r.kernels_seen >= 1 && r.counted_launches >= 1,
        "cuBLAS SGEMM (statically linked cudart inside cuBLAS) seen: launches %llu, kernels %llu",
        (unsigned long long)r.counted_launches, (unsigned long long)r.kernels_seen);
  destroy(handle);
  cu->cuMemFree(a), cu->cuMemFree(b), cu->cuMemFree(c);
}

static void capacity_overflow(void) {
  int rc = tb_timing_begin_probe(stream_a, 10);
  for (int i = 0; i < 100; ++i) {
    launch_empty(stream_a, 1);
  }
  struct tb_timing_kernel kernels[10];
  struct tb_timing_result r = tb_timing_result_for(kernels, 10);
  rc = rc == TB_TIMING_OK ? tb_timing_end(&r) : rc;
  CHECK(rc == TB_TIMING_E_CAPACITY && r.kernels_written == 0,
        "capacity 10 with 100 launches fails closed (%s), no intervals", tb_timing_code_name(rc));
  rc = tb_timing_begin_probe(stream_a, 16);
  launch_empty(stream_a, 1);
  r = tb_timing_result_for(NULL, 0);
  rc = rc == TB_TIMING_OK ? end_session(&r) : rc;
  CHECK(rc == TB_TIMING_OK && r.kernels_seen == 1, "the next probe works");
}

static void foreign_subscriber(void) {
  void *h = tb_dlopen_cuda_library("libcupti.so.13", NULL, 0);
  CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) = NULL;
  CUptiResult (*unsubscribe)(CUpti_SubscriberHandle) = NULL;
  *(void **)&subscribe = h ? dlsym(h, "cuptiSubscribe") : NULL;
  *(void **)&unsubscribe = h ? dlsym(h, "cuptiUnsubscribe") : NULL;
  CUpti_SubscriberHandle mine;
  CUptiResult own = subscribe ? subscribe(&mine, NULL, NULL) : CUPTI_ERROR_UNKNOWN;
  CHECK(own == CUPTI_SUCCESS, "a test client can subscribe after our sessions (%d)", own);
  if (own != CUPTI_SUCCESS) {
    return;
  }
  int rc = tb_timing_begin_probe(stream_a, 8);
  CHECK(rc == TB_TIMING_E_CUPTI_BUSY, "probe refuses a foreign subscriber: %s (%s)",
        tb_timing_code_name(rc), tb_timing_last_error());
  unsubscribe(mine);
  rc = tb_timing_begin_probe(stream_a, 8);
  launch_empty(stream_a, 1);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  rc = rc == TB_TIMING_OK ? end_session(&r) : rc;
  CHECK(rc == TB_TIMING_OK, "the probe works once that client left");
}

static long rss_kb(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) {
      resident = 0;
    }
    fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int open_fds(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  while (d && readdir(d)) {
    n++;
  }
  if (d) {
    closedir(d);
  }
  return n;
}

/* One probe and one control session; returns how many succeeded (0..2). */
static int one_cycle(void) {
  int rc = tb_timing_begin_probe(stream_a, 8);
  launch_empty(stream_a, 1);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  int ok = rc == TB_TIMING_OK && tb_timing_end(&r) == TB_TIMING_OK && r.kernels_seen == 1;
  tb_timing_begin_control(stream_a);
  launch_empty(stream_a, 1);
  tb_timing_declare_calls(1);
  r = tb_timing_result_for(NULL, 0);
  return ok + (tb_timing_end(&r) == TB_TIMING_OK);
}

/* 50 cycles in two windows of 25: a leak keeps growing in the second window;
 * a one-time allocation (CUPTI's first re-initialisation) does not. */
static void fifty_cycles(void) {
  size_t free_mem[3] = {0}, total = 0;
  long rss[3];
  int fds[3], ok = 0;
  for (int i = 0; i < 2; ++i) {
    one_cycle();
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int w = 0; w < 3; ++w) {
    rss[w] = rss_kb();
    fds[w] = open_fds();
    cu->cuMemGetInfo(&free_mem[w], &total);
    for (int i = 0; w < 2 && i < 25; ++i) {
      ok += one_cycle();
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms =
      ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / 50;
  long long lost[2] = {(long long)free_mem[0] - (long long)free_mem[1],
                       (long long)free_mem[1] - (long long)free_mem[2]};
  CHECK(ok == 100, "50 probe + control cycles all succeed (%d of 100)", ok);
  printf(
      "INFO device memory lost: cycles 1-25 %lld KiB, cycles 26-50 %lld KiB; RSS %+ld / %+ld KiB; "
      "fds %+d / %+d\n",
      lost[0] / 1024, lost[1] / 1024, rss[1] - rss[0], rss[2] - rss[1], fds[1] - fds[0],
      fds[2] - fds[1]);
  /* Device memory: CUPTI 13.0 keeps 614.4 KiB at every finalize and
   * re-initialise on its own (cupti_lifecycle_memory, without this library,
   * on the H200); 25 cycles of ours may cost 25 times that, plus one step of
   * the driver's free-memory figure (it moves in 4 MiB steps here), and
   * nothing more. Host memory and descriptors: nothing. */
  const long long cupti_price = 6144LL * 1024 / 10, free_memory_step = 4LL << 20;
  CHECK(lost[1] <= 25 * cupti_price + free_memory_step && rss[2] - rss[1] < 4 * 1024 &&
            fds[2] <= fds[0],
        "no growth in the second 25 cycles beyond CUPTI's own finalize price (614.4 KiB a "
        "cycle, one 4 MiB step of slack): device memory %lld KiB (%lld a cycle), RSS %+ld KiB, "
        "fds %+d",
        lost[1] / 1024, lost[1] / 1024 / 25, rss[2] - rss[1], fds[2] - fds[0]);
  json_object_set_new(facts, "probe_plus_control_cycle_ms", json_real(ms));
  json_object_set_new(facts, "device_memory_lost_kib",
                      json_pack("[I, I]", lost[0] / 1024, lost[1] / 1024));
}

/* The test's own events around one call, for comparison with the library. */
static double raw_event_ns(CUfunction f, unsigned blocks, void **args) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  CUresult (*create)(CUevent *, unsigned) = NULL, (*record)(CUevent, CUstream) = NULL,
                                (*sync)(CUevent) = NULL,
                                (*elapsed)(float *, CUevent, CUevent) = NULL,
                                (*destroy)(CUevent) = NULL;
  *(void **)&create = dlsym(h, "cuEventCreate");
  *(void **)&record = dlsym(h, "cuEventRecord");
  *(void **)&sync = dlsym(h, "cuEventSynchronize");
  *(void **)&elapsed = dlsym(h, "cuEventElapsedTime_v2");
  *(void **)&destroy = dlsym(h, "cuEventDestroy_v2");
  CUevent a, b;
  create(&a, 0);
  create(&b, 0);
  record(a, stream_a);
  launch(f, blocks, 32, stream_a, args);
  record(b, stream_a);
  sync(b);
  float ms = 0;
  elapsed(&ms, a, b);
  destroy(a);
  destroy(b);
  return ms * 1e6;
}

static double scope_ns(int probe, CUfunction f, unsigned blocks, void **args, double *kernel_ns) {
  int rc = probe ? tb_timing_begin_probe(stream_a, 8) : tb_timing_begin_control(stream_a);
  launch(f, blocks, 32, stream_a, args);
  tb_timing_declare_calls(1);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  rc = rc == TB_TIMING_OK ? tb_timing_end(&r) : rc;
  if (kernel_ns) {
    *kernel_ns = r.kernel_sum_ns;
  }
  return rc == TB_TIMING_OK ? r.gpu_elapsed_ns : NAN;
}

static void overhead_and_perturbation(void) {
  enum { REPS = 15 };
  CUdeviceptr out;
  cu->cuMemAlloc(&out, 4);
  long long cycles = cycles_per_ms;
  void *spin_args[] = {&cycles, &out};
  double raw[REPS], control[REPS], probe[REPS], ratio[REPS], kernel[REPS];
  for (int i = 0; i < REPS; ++i) {
    raw[i] = raw_event_ns(k_spin, 1, spin_args);
    control[i] = scope_ns(0, k_spin, 1, spin_args, NULL);
    probe[i] = scope_ns(1, k_spin, 1, spin_args, &kernel[i]);
    ratio[i] = probe[i] / control[i];
  }
  double r = tb_median(raw, REPS), c = tb_median(control, REPS), pr = tb_median(ratio, REPS);
  CHECK(fabs(c / r - 1.0) <= 0.01,
        "control vs no observer for a 1 ms kernel: %.4f (%.1f vs %.1f µs)", c / r, c / 1e3,
        r / 1e3);
  /* The probe's own number is the kernel time from its records: it must
   * agree with the uninstrumented control. The session's event span also
   * holds a fixed cost of CUPTI (launch callbacks, record set-up; ~0.1-0.2
   * ms per session), reported here and flagged by the harness outside
   * [0.95, 1.05]. */
  double k = tb_median(kernel, REPS);
  CHECK(fabs(k / c - 1.0) <= 0.02,
        "probe kernel time vs control for a 1 ms kernel: %.4f (%.1f vs "
        "%.1f µs)",
        k / c, k / 1e3, c / 1e3);
  printf("INFO probe session span / control for a 1 ms kernel: %.4f\n", pr);
  json_object_set_new(facts, "spin_1ms",
                      json_pack("{s:f, s:f, s:f, s:f}", "raw_event_ns", r, "control_ns", c,
                                "probe_over_control", pr, "probe_kernel_ns",
                                tb_median(kernel, REPS)));
  /* Tiny kernels: reported, not judged (cupti.md §4). */
  unsigned blocks[] = {1, 10000};
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < REPS; ++i) {
      control[i] = scope_ns(0, k_empty, blocks[b], NULL, NULL);
      probe[i] = scope_ns(1, k_empty, blocks[b], NULL, &kernel[i]);
      ratio[i] = probe[i] / control[i];
    }
    char key[64];
    snprintf(key, sizeof key, "empty_kernel_%u_blocks", blocks[b]);
    json_object_set_new(facts, key,
                        json_pack("{s:f, s:f, s:f}", "control_ns", tb_median(control, REPS),
                                  "probe_over_control", tb_median(ratio, REPS), "probe_kernel_ns",
                                  tb_median(kernel, REPS)));
    printf("INFO empty kernel, %u blocks: control %.2f µs, probe/control %.3f, kernel %.2f µs\n",
           blocks[b], tb_median(control, REPS) / 1e3, tb_median(ratio, REPS),
           tb_median(kernel, REPS) / 1e3);
  }
  cu->cuMemFree(out);
}

/* ---- batch modes (issue 18): eager, one graph replay, held ---- */

struct graph_api {
  CUresult (*begin)(CUstream, CUstreamCaptureMode);
  CUresult (*end)(CUstream, CUgraph *);
  CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*launch)(CUgraphExec, CUstream);
  CUresult (*exec_destroy)(CUgraphExec);
  CUresult (*destroy)(CUgraph);
};

static int graph_api(struct graph_api *g) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  *(void **)&g->begin = dlsym(h, "cuStreamBeginCapture_v2");
  *(void **)&g->end = dlsym(h, "cuStreamEndCapture");
  *(void **)&g->instantiate = dlsym(h, "cuGraphInstantiateWithFlags");
  *(void **)&g->launch = dlsym(h, "cuGraphLaunch");
  *(void **)&g->exec_destroy = dlsym(h, "cuGraphExecDestroy");
  *(void **)&g->destroy = dlsym(h, "cuGraphDestroy");
  return g->begin && g->end && g->instantiate && g->launch && g->exec_destroy && g->destroy;
}

/* One sample of `calls` spin kernels: mode 0 eager, 1 graph replay, 2 held
 * eager calls; graph replays are held, probe and control, as the device
 * phase holds them (src/measure/device_phase.c); GPU ns per call (NaN on
 * failure); kernel_ns: the probe's per call. */
static double batch_sample(int mode, int probe, const struct graph_api *g, CUgraphExec exec,
                           unsigned calls, void **args, double *kernel_ns) {
  const uint64_t hold_ns = 1000000000ull;
  int rc = probe && mode == 1 ? tb_timing_begin_probe_held(stream_a, calls + 16, hold_ns)
           : probe            ? tb_timing_begin_probe(stream_a, calls + 16)
           : mode != 0        ? tb_timing_begin_control_held(stream_a, hold_ns)
                              : tb_timing_begin_control(stream_a);
  if (mode == 1) {
    g->launch(exec, stream_a);
  } else {
    for (unsigned i = 0; i < calls; ++i) {
      launch(k_spin, 1, 32, stream_a, args);
    }
  }
  tb_timing_declare_calls(calls);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  rc = rc == TB_TIMING_OK ? end_session(&r) : rc;
  if (kernel_ns != NULL) {
    *kernel_ns = rc == TB_TIMING_OK ? r.kernel_sum_ns / calls : NAN;
  }
  return rc == TB_TIMING_OK ? r.gpu_elapsed_ns / calls : NAN;
}

/* Medians over REPS interleaved samples of one kernel length. */
static void batch_modes_for(const struct graph_api *g, double spin_us, unsigned calls,
                            double out[5]) {
  enum { REPS = 9 };
  CUdeviceptr dst;
  cu->cuMemAlloc(&dst, 4);
  long long cycles = (long long)(cycles_per_ms * spin_us / 1000.0);
  void *args[] = {&cycles, &dst};
  CUgraph graph;
  CUgraphExec exec;
  g->begin(stream_a, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  for (unsigned i = 0; i < calls; ++i) {
    launch(k_spin, 1, 32, stream_a, args);
  }
  g->end(stream_a, &graph);
  g->instantiate(&exec, graph, 0);
  g->launch(exec, stream_a); /* uploads the graph */
  cu->cuStreamSynchronize(stream_a);
  double eager[REPS], replay[REPS], held[REPS], kernel[REPS], probe[REPS];
  for (int i = 0; i < REPS; ++i) {
    eager[i] = batch_sample(0, 0, g, exec, calls, args, NULL);
    replay[i] = batch_sample(1, 0, g, exec, calls, args, NULL);
    held[i] = batch_sample(2, 0, g, exec, calls, args, NULL);
    probe[i] = batch_sample(1, 1, g, exec, calls, args, &kernel[i]);
  }
  out[0] = tb_median(eager, REPS);
  out[1] = tb_median(replay, REPS);
  out[2] = tb_median(held, REPS);
  out[3] = tb_median(kernel, REPS);
  out[4] = tb_median(probe, REPS);
  g->exec_destroy(exec);
  g->destroy(graph);
  cu->cuMemFree(dst);
  printf("INFO spin %.0f µs x %u: eager %.3f, graph %.3f, held %.3f, probe kernel %.3f, graph "
         "probe span %.3f µs/call\n",
         spin_us, calls, out[0] / 1e3, out[1] / 1e3, out[2] / 1e3, out[3] / 1e3, out[4] / 1e3);
  char key[64];
  snprintf(key, sizeof key, "batch_modes_spin_%.0fus", spin_us);
  json_object_set_new(facts, key,
                      json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "calls", calls, "eager_ns",
                                out[0], "graph_ns", out[1], "held_ns", out[2], "probe_kernel_ns",
                                out[3], "graph_probe_ns", out[4]));
}

static void batch_modes(void) {
  struct graph_api g;
  if (!graph_api(&g)) {
    CHECK(0, "graph API unavailable");
    return;
  }
  double m[5];
  batch_modes_for(&g, 1000.0, 8, m);
  CHECK(fabs(m[1] / m[0] - 1.0) <= 0.01, "graph control of a 1 ms kernel vs eager: %.4f",
        m[1] / m[0]);
  batch_modes_for(&g, 2.0, 64, m);
  /* CUPTI's instrumentation lengthens each kernel it records (~2.5 % of a
   * ~2 µs kernel on the H200), so the probe's kernel time may exceed the held
   * replay's control by up to the probe's perturbation bound, 5 %. */
  CHECK(m[1] < m[0] && m[1] * 1.05 >= m[3],
        "graph control of a ~2 µs kernel below eager and at or "
        "above the probe's kernel time less its perturbation: graph %.3f, eager %.3f, kernel "
        "%.3f µs",
        m[1] / 1e3, m[0] / 1e3, m[3] / 1e3);
  printf("INFO probe perturbation of a held graph of 64 ~2 µs kernels: probe/control %.4f\n",
         m[4] / m[1]);
  double spins[] = {10.0, 50.0, 200.0};
  for (int i = 0; i < 3; ++i) {
    batch_modes_for(&g, spins[i], 32, m);
    /* The held probe keeps CUPTI's first-launch work out of the events. */
    CHECK(m[4] / m[1] >= 0.95 && m[4] / m[1] <= 1.05,
          "probe perturbation of a held graph of 32 %.0f µs kernels: probe/control %.4f", spins[i],
          m[4] / m[1]);
    /* An eager launch costs the GPU's front end a fixed time more than a graph
     * node, whatever the kernel's length: 0.8-0.9 µs on the H200
     * (evidence/2026-12-01-h200-held-graphs), 1.09-1.10 µs on the H100
     * (evidence/2026-12-06-h100-batch-campaign). Within 5 % or 1.25 µs. */
    CHECK(fabs(m[2] / m[1] - 1.0) <= 0.05 || fabs(m[2] - m[1]) <= 1250.0,
          "held vs graph for a %.0f µs kernel: %.4f (%.2f µs/call apart)", spins[i], m[2] / m[1],
          (m[2] - m[1]) / 1e3);
  }
  /* A synchronisation inside a held session waits for the hold's time-out
   * and the session fails closed. */
  CUdeviceptr dst;
  cu->cuMemAlloc(&dst, 4);
  long long cycles = cycles_per_ms / 100;
  void *args[] = {&cycles, &dst};
  int rc = tb_timing_begin_control_held(stream_a, 2000000ull);
  launch(k_spin, 1, 32, stream_a, args);
  cu->cuStreamSynchronize(stream_a);
  tb_timing_declare_calls(1);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  rc = rc == TB_TIMING_OK ? tb_timing_end(&r) : rc;
  CHECK(rc == TB_TIMING_E_HOLD_TIMEOUT, "a synchronisation inside a held session fails closed (%s)",
        tb_timing_code_name(rc));
  cu->cuMemFree(dst);
}

/* Which host clock CUPTI's timestamps follow (cupti.md §4). */
static void cupti_clock(void) {
  void *h = tb_dlopen_cuda_library("libcupti.so.13", NULL, 0);
  CUptiResult (*stamp)(uint64_t *) = NULL;
  *(void **)&stamp = h ? dlsym(h, "cuptiGetTimestamp") : NULL;
  uint64_t t = 0;
  struct timespec real, mono;
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  if (stamp) {
    stamp(&t);
  }
  double d_real = (double)t - ((double)real.tv_sec * 1e9 + real.tv_nsec);
  double d_mono = (double)t - ((double)mono.tv_sec * 1e9 + mono.tv_nsec);
  const char *which = fabs(d_real) < 1e7   ? "CLOCK_REALTIME"
                      : fabs(d_mono) < 1e7 ? "CLOCK_MONOTONIC"
                                           : "other";
  printf("INFO cuptiGetTimestamp follows %s (minus REALTIME %.0f ns, minus MONOTONIC %.3g ns)\n",
         which, d_real, d_mono);
  json_object_set_new(facts, "cupti_timestamp_clock", json_string(which));
}

static int setup(void) {
  cu = tb_cuda();
  if (cu == NULL) {
    printf("no GPU\n");
    return 0;
  }
  CUdevice dev;
  CUcontext ctx;
  if (tb_cuda_enter_device0(cu, &dev, &ctx) != CUDA_SUCCESS) {
    printf("no context on device 0\n");
    return 0;
  }
  cu->cuStreamCreate(&stream_a, CU_STREAM_NON_BLOCKING);
  cu->cuStreamCreate(&stream_b, CU_STREAM_NON_BLOCKING);
  int major = 0, minor = 0, khz = 0;
  cu->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cu->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cu->cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  cycles_per_ms = khz; /* kHz = cycles per ms at the maximum clock */
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
  struct tb_compiled compiled;
  struct tb_error err = {0};
  if (tb_nvrtc_compile(kernels_source, arch, &compiled, &err) != TB_OK) {
    printf("NVRTC: %s\n", err.message);
    return 0;
  }
  CUmodule module;
  cu->cuModuleLoadData(&module, compiled.cubin);
  cu->cuModuleGetFunction(&k_spin, module, "spin");
  cu->cuModuleGetFunction(&k_scale, module, "scale");
  cu->cuModuleGetFunction(&k_empty, module, "empty");
  tb_compiled_free(&compiled);
  /* a discarded probe pass: CUPTI instruments the module on first use */
  tb_timing_begin_probe(stream_a, 8);
  launch_empty(stream_a, 1);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  tb_timing_end(&r);
  return 1;
}

/* Control time of a launch-bound batch (200 empty kernels) and of a 1 ms
 * kernel, taken before any probe and again after every probe session: what
 * a probe session leaves behind must not slow what control measures (a
 * CUPTI left initialised did: +15 % on the batch, see session.c). */
struct control_baseline {
  double batch_ns, spin_ns;
};

static struct control_baseline control_baseline(void) {
  enum { REPS = 21, LAUNCHES = 200 };
  double batch[REPS], spin[REPS];
  CUdeviceptr out;
  cu->cuMemAlloc(&out, 4);
  long long cycles = cycles_per_ms;
  void *spin_args[] = {&cycles, &out};
  for (int i = 0; i < REPS; ++i) {
    int rc = tb_timing_begin_control(stream_a);
    for (int j = 0; j < LAUNCHES; ++j) {
      launch_empty(stream_a, 1);
    }
    tb_timing_declare_calls(LAUNCHES);
    struct tb_timing_result r = tb_timing_result_for(NULL, 0);
    batch[i] = rc == TB_TIMING_OK && tb_timing_end(&r) == TB_TIMING_OK ? r.gpu_elapsed_ns : NAN;
    spin[i] = scope_ns(0, k_spin, 1, spin_args, NULL);
  }
  cu->cuMemFree(out);
  struct control_baseline b = {tb_median(batch, REPS), tb_median(spin, REPS)};
  return b;
}

static void control_unchanged_after_probes(struct control_baseline before) {
  struct control_baseline after = control_baseline();
  CHECK(after.batch_ns <= before.batch_ns * 1.05 && after.spin_ns <= before.spin_ns * 1.02,
        "control after every probe session vs before any: 200 empty launches %.1f vs %.1f µs, "
        "1 ms kernel %.1f vs %.1f µs",
        after.batch_ns / 1e3, before.batch_ns / 1e3, after.spin_ns / 1e3, before.spin_ns / 1e3);
  json_object_set_new(facts, "control_before_after_probes",
                      json_pack("{s:f, s:f, s:f, s:f}", "batch_before_ns", before.batch_ns,
                                "batch_after_ns", after.batch_ns, "spin_before_ns", before.spin_ns,
                                "spin_after_ns", after.spin_ns));
}

int main(int argc, char **argv) {
  facts = json_object();
  if (!setup()) {
    printf("0 passed, 1 failed\n");
    return 1;
  }
  CHECK(tb_timing_abi_version() == TB_TIMING_ABI_VERSION, "ABI version %d",
        tb_timing_abi_version());
  struct control_baseline before = control_baseline();
  transparency();
  counts_on_two_streams();
  launch_ex();
  graph_launch();
  cublas_call();
  capacity_overflow();
  fifty_cycles();
  foreign_subscriber();
  overhead_and_perturbation();
  batch_modes();
  cupti_clock();
  control_unchanged_after_probes(before);
  if (argc > 1) {
    json_dump_file(facts, argv[1], JSON_INDENT(2) | JSON_SORT_KEYS);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
