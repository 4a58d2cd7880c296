/* The CUDA backend's providers built over a fake driver table (no GPU
 * needed): the native provider's plan step plans for the device it found,
 * cuBLAS is a provider of its own on the same device base, the user provider
 * calls a library on rotating buffer sets and runs the defences through
 * device copies (the fake's device memory is host memory, so host-code
 * kernels can stand in for CUDA ones), and all give back every context,
 * stream and allocation they took. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cublas_provider.h"
#include "backends/cuda/cuda_provider.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/user_cuda_provider.h"
#include "backends/cuda/user_nvrtc_provider.h"
#include "measure/defences.h"
#include "oracle/oracle.h"
#include "registry/registry.h"
#include "test_support.h"

/* ---- the fake driver ---------------------------------------------------- */

static struct {
  int cc_major, cc_minor, multiprocessors, l2_bytes, shared_per_multiprocessor;
  int contexts_retained, contexts_released, streams_created, streams_destroyed;
  int allocations, frees;
} dev;

static CUresult fake_device_get(CUdevice *d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_retain(CUcontext *ctx, CUdevice d) {
  *ctx = (CUcontext)(uintptr_t)0xC0;
  dev.contexts_retained++;
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_release(CUdevice d) {
  dev.contexts_released++;
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_set_current(CUcontext ctx) {
  return CUDA_SUCCESS;
}

static CUresult fake_attribute(int *value, CUdevice_attribute a, CUdevice d) {
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = dev.cc_major; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = dev.cc_minor; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = dev.multiprocessors; break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = dev.l2_bytes; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 48 << 10; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 227 << 10; break;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
    *value = dev.shared_per_multiprocessor;
    break;
  default: *value = 0;
  }
  return CUDA_SUCCESS;
}

static CUresult fake_name(char *name, int size, CUdevice d) {
  snprintf(name, (size_t)size, "Fake GPU %d.%d", dev.cc_major, dev.cc_minor);
  return CUDA_SUCCESS;
}

static CUresult fake_stream_create(CUstream *s, unsigned flags) {
  *s = (CUstream)(uintptr_t)0x5;
  dev.streams_created++;
  return CUDA_SUCCESS;
}

static CUresult fake_stream_destroy(CUstream s) {
  dev.streams_destroyed++;
  return CUDA_SUCCESS;
}

static CUresult fake_stream_synchronize(CUstream s) {
  return CUDA_SUCCESS;
}

/* Device memory is host memory: a device pointer is the host address. */
static CUresult fake_mem_alloc(CUdeviceptr *ptr, size_t bytes) {
  void *m = malloc(bytes);
  if (m == NULL) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  memset(m, 0xA5, bytes); /* as a GPU's: whatever was there before */
  *ptr = (CUdeviceptr)(uintptr_t)m;
  dev.allocations++;
  return CUDA_SUCCESS;
}

static CUresult fake_mem_free(CUdeviceptr ptr) {
  free((void *)(uintptr_t)ptr);
  dev.frees++;
  return CUDA_SUCCESS;
}

static CUresult fake_mem_info(size_t *free_bytes, size_t *total) {
  *free_bytes = (size_t)1 << 30;
  *total = (size_t)2 << 30;
  return CUDA_SUCCESS;
}

static CUresult fake_htod(CUdeviceptr dst, const void *src, size_t bytes) {
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return CUDA_SUCCESS;
}

static CUresult fake_dtoh(void *dst, CUdeviceptr src, size_t bytes) {
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return CUDA_SUCCESS;
}

static CUresult fake_memset32(CUdeviceptr dst, unsigned value, size_t count, CUstream s) {
  uint32_t *words = (uint32_t *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i) {
    words[i] = value;
  }
  return CUDA_SUCCESS;
}

/* Modules and launches for the CUDA source user provider: the cubin NVRTC
 * really compiled is "loaded" as a handle, its entry point resolves by name,
 * and a launch runs a host stand-in for the kernel over the parameters as
 * the provider passed them (the device pointers are host addresses). */
static struct {
  int modules_loaded, modules_unloaded, launches;
  unsigned grid[3], block[3], smem;
  CUstream stream;
  int ignore_stride; /* the stand-in reads rows as if packed: a broken kernel */
} fake_kernel;

static CUresult fake_module_load(CUmodule *m, const void *image) {
  *m = (CUmodule)(uintptr_t)0xA0;
  fake_kernel.modules_loaded++;
  return image != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_module_unload(CUmodule m) {
  fake_kernel.modules_unloaded++;
  return CUDA_SUCCESS;
}

/* The user source's softmax, run on the host below, and native's generated
 * entry points (tb_main, and tb_combine of a split matrix-vector product),
 * which the fake loads but does not run: it logs their launches. */
#define FAKE_NATIVE_MAIN ((CUfunction)(uintptr_t)0xF1)
#define FAKE_NATIVE_COMBINE ((CUfunction)(uintptr_t)0xF2)
static CUresult fake_get_function(CUfunction *f, CUmodule m, const char *name) {
  bool main_kernel = strcmp(name, "tb_main") == 0, combine = strcmp(name, "tb_combine") == 0;
  *f = main_kernel ? FAKE_NATIVE_MAIN : combine ? FAKE_NATIVE_COMBINE : (CUfunction)(uintptr_t)0xF0;
  return main_kernel || combine || strcmp(name, "tb_user_softmax") == 0 ? CUDA_SUCCESS
                                                                        : CUDA_ERROR_NOT_FOUND;
}

/* Function attributes the provider sets, by attribute (the last value), and
 * the one set that fails when `fail_attribute` names it (else -1). */
static struct {
  int value[16];
  int fail_attribute;
} func_attributes;

static CUresult fake_func_set_attribute(CUfunction f, CUfunction_attribute a, int value) {
  if ((int)a == func_attributes.fail_attribute) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if ((int)a >= 0 && (int)a < 16) {
    func_attributes.value[a] = value;
  }
  return CUDA_SUCCESS;
}

/* native launches in order: the function, its grid and block, and the
 * workspace argument it was given */
static struct {
  int count;
  CUfunction function[8];
  unsigned grid[8], block[8];
  CUdeviceptr workspace[8];
} native_launches;

static CUresult fake_func_attribute(int *value, CUfunction_attribute a, CUfunction f) {
  *value = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return CUDA_SUCCESS;
}

/* tb_user_softmax(x, y, weight, bias, out, m, n, row_stride, eps) on the host. */
static CUresult fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, CUstream stream, void **params,
                            void **extra) {
  fake_kernel.launches++;
  if (f == FAKE_NATIVE_MAIN || f == FAKE_NATIVE_COMBINE) {
    int i = native_launches.count++ % 8;
    native_launches.function[i] = f;
    native_launches.grid[i] = gx * gy * gz;
    native_launches.block[i] = bx * by * bz;
    native_launches.workspace[i] = *(CUdeviceptr *)params[5];
    return CUDA_SUCCESS;
  }
  fake_kernel.grid[0] = gx, fake_kernel.grid[1] = gy, fake_kernel.grid[2] = gz;
  fake_kernel.block[0] = bx, fake_kernel.block[1] = by, fake_kernel.block[2] = bz;
  fake_kernel.smem = smem;
  fake_kernel.stream = stream;
  const float *x = (const float *)(uintptr_t) * (CUdeviceptr *)params[0];
  float *out = (float *)(uintptr_t) * (CUdeviceptr *)params[4];
  long long m = *(long long *)params[5], n = *(long long *)params[6];
  long long stride = fake_kernel.ignore_stride ? n : *(long long *)params[7];
  for (long long i = 0; i < m; ++i) {
    const float *row = x + i * stride;
    float top = row[0];
    for (long long j = 1; j < n; ++j) {
      top = row[j] > top ? row[j] : top;
    }
    double total = 0;
    for (long long j = 0; j < n; ++j) {
      total += exp((double)row[j] - top);
    }
    for (long long j = 0; j < n; ++j) {
      out[i * n + j] = (float)(exp((double)row[j] - top) / total);
    }
  }
  return CUDA_SUCCESS;
}

/* A cooperative launch: logged as a native one, and counted. */
static int cooperative_launches;
static CUresult fake_cooperative_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                        CUstream stream, void **params) {
  cooperative_launches++;
  return fake_launch(f, gx, gy, gz, bx, by, bz, smem, stream, params, NULL);
}

static void install_device(int cc_major, int cc_minor, int multiprocessors) {
  memset(&dev, 0, sizeof dev);
  dev.cc_major = cc_major;
  dev.cc_minor = cc_minor;
  dev.multiprocessors = multiprocessors;
  dev.l2_bytes = 60 << 20;
  dev.shared_per_multiprocessor = 228 << 10; /* compute capability 9.0's */
  struct tb_cuda table = {
      .cuDeviceGet = fake_device_get,
      .cuDeviceGetName = fake_name,
      .cuDeviceGetAttribute = fake_attribute,
      .cuDevicePrimaryCtxRetain = fake_ctx_retain,
      .cuDevicePrimaryCtxRelease = fake_ctx_release,
      .cuCtxSetCurrent = fake_ctx_set_current,
      .cuStreamCreate = fake_stream_create,
      .cuStreamDestroy = fake_stream_destroy,
      .cuStreamSynchronize = fake_stream_synchronize,
      .cuMemAlloc = fake_mem_alloc,
      .cuMemFree = fake_mem_free,
      .cuMemGetInfo = fake_mem_info,
      .cuMemcpyHtoD = fake_htod,
      .cuMemcpyDtoH = fake_dtoh,
      .cuMemsetD32Async = fake_memset32,
      .cuModuleLoadData = fake_module_load,
      .cuModuleUnload = fake_module_unload,
      .cuModuleGetFunction = fake_get_function,
      .cuFuncGetAttribute = fake_func_attribute,
      .cuFuncSetAttribute = fake_func_set_attribute,
      .cuLaunchKernel = fake_launch,
      .cuLaunchCooperativeKernel = fake_cooperative_launch,
  };
  memset(&func_attributes, 0, sizeof func_attributes);
  func_attributes.fail_attribute = -1;
  memset(&fake_kernel, 0, sizeof fake_kernel);
  memset(&native_launches, 0, sizeof native_launches);
  cooperative_launches = 0;
  tb_cuda_driver_install(&table);
}

static void assert_everything_given_back(void) {
  assert_int_equal(dev.contexts_released, dev.contexts_retained);
  assert_int_equal(dev.streams_destroyed, dev.streams_created);
  assert_int_equal(dev.frees, dev.allocations);
}

/* ---- cases ---------------------------------------------------------------- */

static struct tb_case case_of(enum tb_op op, struct tb_shape shape, enum tb_realization r) {
  const struct tb_op_info *info = tb_op_info(op);
  return (struct tb_case){.op = info,
                          .shape = shape,
                          .view = tb_view_for(TB_VIEW_PACKED, shape.k ? shape.k : shape.n),
                          .provider = "native",
                          .planned = info->is_row_reduction,
                          .variant = TB_VARIANT_AUTOMATIC,
                          .profile = TB_PLANNER_PROFILE_DEFAULT,
                          .realization = r};
}

/* The native provider on the installed fake device. */
static struct tb_provider *native_created(void) {
  struct tb_provider *p = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_cuda_native_provider_create(&p, &err), TB_OK);
  assert_string_equal(p->name, "native");
  assert_string_equal(p->backend, "cuda");
  assert_true(p->plans_reductions);
  assert_int_equal(dev.streams_created, 1);
  return p;
}

static struct tb_provider *native_on(int cc_major, int cc_minor, int multiprocessors) {
  install_device(cc_major, cc_minor, multiprocessors);
  return native_created();
}

/* A reduction is planned under the device's own limits, not the default. */
static void native_plans_reductions_for_its_device(void **state) {
  struct tb_provider *p = native_on(9, 0, 100);
  struct tb_case c = case_of(TB_OP_SOFTMAX, (struct tb_shape){64, 257, 0}, TB_REALIZATION_SIMT);
  struct tb_exec_plan plan;
  struct tb_error err = {0};
  assert_int_equal(p->ops->plan(p, &c, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_REDUCTION);
  assert_true(plan.as.reduction.limits.known);
  assert_string_equal(plan.as.reduction.limits.source, "device");
  assert_int_equal(plan.as.reduction.limits.multiprocessors, 100);
  assert_int_equal(plan.as.reduction.limits.cluster_blocks, 16); /* clusters from 9.0 */
  assert_string_equal(plan.as.reduction.profile, TB_PLANNER_PROFILE_DEFAULT);
  tb_provider_destroy(p);
  assert_everything_given_back();
}

/* The built-in provider is defended as a user's kernel is (method.md §8):
 * its prepared buffers lie between intact guard zones, its inputs read back
 * as loaded, and other inputs load into every set (the fake runs no kernel,
 * so what a kernel computes is the GPU's evidence, not this test's). */
static void native_buffers_are_defended(void **state) {
  struct tb_provider *p = native_on(9, 0, 132);
  dev.l2_bytes = 64 << 10; /* several small sets */
  struct tb_case c = case_of(TB_OP_RMSNORM, (struct tb_shape){5, 33, 0}, TB_REALIZATION_SIMT);
  c.view = tb_view_for(TB_VIEW_STRIDED, 33);
  struct tb_case_data data, other;
  struct tb_error err = {0};
  assert_int_equal(tb_case_data_create(&c, 7, &data, &err), TB_OK);
  assert_int_equal(tb_case_data_create(&c, 8, &other, &err), TB_OK);
  struct tb_exec_plan plan;
  assert_int_equal(p->ops->plan(p, &c, &plan, &err), TB_OK);
  enum tb_status st = p->ops->prepare(p, &c, &data, &plan, &err);
  if (st == TB_ERR_UNAVAILABLE && strstr(err.message, "NVRTC") != NULL) {
    tb_case_data_free(&data);
    tb_case_data_free(&other);
    tb_provider_destroy(p);
    skip(); /* no NVRTC here: native cannot prepare */
  }
  if (st != TB_OK) {
    print_error("%s\n", err.message);
  }
  assert_int_equal(st, TB_OK);
  assert_true(p->ops->output_sets(p) > 1);
  struct tb_guard_report guards;
  assert_int_equal(p->ops->check_guards(p, &guards, &err), TB_OK);
  assert_true(guards.intact);
  assert_true(guards.buffers > p->ops->output_sets(p)); /* inputs and outputs of every set */
  for (size_t i = 0; i < data.input_count; ++i) {
    size_t n = data.inputs[i].storage_elems;
    float *back = malloc(n * sizeof *back);
    assert_int_equal(p->ops->read_input(p, i, back, n, &err), TB_OK);
    assert_memory_equal(back, data.inputs[i].storage, n * sizeof *back);
    free(back);
  }
  assert_int_equal(p->ops->load_inputs(p, &other, &err), TB_OK);
  size_t n = other.inputs[0].storage_elems;
  float *back = malloc(n * sizeof *back);
  assert_int_equal(p->ops->read_input(p, 0, back, n, &err), TB_OK);
  assert_memory_equal(back, other.inputs[0].storage, n * sizeof *back);
  free(back);
  p->ops->release(p);
  tb_provider_destroy(p);
  assert_everything_given_back();
  tb_case_data_free(&data);
  tb_case_data_free(&other);
}

/* gemm: the device's multiprocessors, and wgmma only at exactly 9.0 (a grid
 * large enough for 128x128 tiles). */
static void native_plans_gemm_for_its_device(void **state) {
  struct tb_case c = case_of(TB_OP_GEMM, (struct tb_shape){4096, 4096, 256}, TB_REALIZATION_TENSOR);
  struct tb_exec_plan plan;
  struct tb_error err = {0};
  struct tb_provider *hopper = native_on(9, 0, 132);
  assert_int_equal(hopper->ops->plan(hopper, &c, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_GEMM);
  assert_int_equal(plan.as.gemm.multiprocessors, 132);
  assert_non_null(strstr(plan.as.gemm.instruction, "wgmma"));
  tb_provider_destroy(hopper);
  assert_everything_given_back();

  struct tb_provider *ampere = native_on(8, 0, 108);
  assert_int_equal(ampere->ops->plan(ampere, &c, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_GEMM);
  assert_int_equal(plan.as.gemm.multiprocessors, 108);
  assert_non_null(strstr(plan.as.gemm.instruction, "mma.sync"));
  tb_provider_destroy(ampere);
  assert_everything_given_back();
}

/* A matrix-vector gemm whose k is split: one call is tb_main over the
 * plan's blocks, then tb_combine over its combine blocks, both handed the
 * same workspace; 1x1024x2048: 1 block of 1024 columns, k in 128 chunks of
 * 16 rows (528 / 1 wanted, 2048 / 528 -> 4, at least 16), 128 blocks; 1024
 * / 256 = 4 combine blocks. An n = 1 product with k whole is one launch. */
static void native_launches_matrix_vector(void **state) {
  const struct {
    struct tb_shape shape;
    int launches;
    unsigned main_blocks, combine_blocks;
  } cases[] = {{{1, 1024, 2048}, 2, 128, 4}, {{4096, 1, 64}, 1, 512, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    struct tb_provider *p = native_on(9, 0, 132);
    dev.l2_bytes = 64 << 10; /* few buffer sets */
    struct tb_case c = case_of(TB_OP_GEMM, cases[i].shape, TB_REALIZATION_SIMT);
    c.view = tb_view_for(TB_VIEW_PACKED, c.shape.n);
    struct tb_case_data data;
    struct tb_error err = {0};
    assert_int_equal(tb_case_data_create(&c, 7, &data, &err), TB_OK);
    struct tb_exec_plan plan;
    assert_int_equal(p->ops->plan(p, &c, &plan, &err), TB_OK);
    assert_int_equal(plan.as.gemm.gemv, cases[i].launches == 2 ? TB_GEMV_COLUMNS : TB_GEMV_ROWS);
    enum tb_status st = p->ops->prepare(p, &c, &data, &plan, &err);
    if (st == TB_ERR_UNAVAILABLE && strstr(err.message, "NVRTC") != NULL) {
      tb_case_data_free(&data);
      tb_provider_destroy(p);
      skip(); /* no NVRTC here: native cannot prepare */
    }
    assert_int_equal(st, TB_OK);
    assert_int_equal(p->ops->launches_per_call(p), cases[i].launches);
    assert_int_equal(p->ops->launch(p, 1, &err), TB_OK);
    assert_int_equal(native_launches.count, cases[i].launches);
    assert_true(native_launches.function[0] == FAKE_NATIVE_MAIN);
    assert_int_equal(native_launches.grid[0], cases[i].main_blocks);
    assert_int_equal(native_launches.block[0], 256);
    if (cases[i].launches == 2) {
      assert_true(native_launches.function[1] == FAKE_NATIVE_COMBINE);
      assert_int_equal(native_launches.grid[1], cases[i].combine_blocks);
      assert_int_equal(native_launches.block[1], 256);
      /* the partial sums tb_main leaves are what tb_combine reads */
      assert_true(native_launches.workspace[0] != 0);
      assert_true(native_launches.workspace[1] == native_launches.workspace[0]);
    }
    struct tb_provider_details details;
    p->ops->details(p, &details);
    assert_int_equal(details.as.cuda.kernel_count, cases[i].launches);
    assert_string_equal(details.as.cuda.kernels[0].name, "tb_main");
    p->ops->release(p);
    tb_provider_destroy(p);
    assert_everything_given_back();
    tb_case_data_free(&data);
  }
}

/* softmax of `shape` on p, planned (to `mapping`) by p, or for `planned_for`
 * where given, and prepared: the prepare's status, or the test skipped where
 * there is no NVRTC. */
static enum tb_status prepare_softmax(struct tb_provider *p, struct tb_shape shape,
                                      const struct tb_device_limits *planned_for,
                                      enum tb_mapping mapping, struct tb_exec_plan *plan,
                                      struct tb_case_data *data, struct tb_error *err) {
  struct tb_case c = case_of(TB_OP_SOFTMAX, shape, TB_REALIZATION_SIMT);
  assert_int_equal(tb_case_data_create(&c, 7, data, err), TB_OK);
  if (planned_for != NULL) {
    struct tb_plan_target target = {.limits = *planned_for};
    assert_int_equal(tb_plan_case(&c, &target, plan, err), TB_OK);
  } else {
    assert_int_equal(p->ops->plan(p, &c, plan, err), TB_OK);
  }
  assert_int_equal(plan->as.reduction.mapping, mapping);
  enum tb_status st = p->ops->prepare(p, &c, data, plan, err);
  if (st == TB_ERR_UNAVAILABLE && strstr(err->message, "NVRTC") != NULL) {
    tb_case_data_free(data);
    tb_provider_destroy(p);
    skip(); /* no NVRTC here: native cannot prepare */
  }
  return st;
}

/* softmax 200x40000 on a 9.0 device: rows no register candidate holds go to
 * clusters of 2 blocks whose chunks (20000 floats) stay in shared memory: the
 * function is given 80000 B of dynamic shared memory and the whole carveout,
 * the launch asks for them; a carveout the driver refuses fails the prepare,
 * naming it, with everything given back. */
static void native_shared_chunks_ask_for_shared_memory(void **state) {
  for (int refuse = 0; refuse < 2; ++refuse) {
    struct tb_provider *p = native_on(9, 0, 132);
    dev.l2_bytes = 64 << 20;
    func_attributes.fail_attribute =
        refuse ? (int)CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT : -1;
    struct tb_case_data data;
    struct tb_error err = {0};
    struct tb_exec_plan plan;
    enum tb_status st = prepare_softmax(p, (struct tb_shape){200, 40000, 0}, NULL,
                                        TB_MAPPING_CLUSTER_ROW, &plan, &data, &err);
    assert_int_equal(plan.as.reduction.stream.cache_shared_bytes, 80000);
    if (refuse) {
      assert_int_not_equal(st, TB_OK);
      assert_non_null(strstr(err.message, "cuFuncSetAttribute (shared memory carveout)"));
    } else {
      assert_int_equal(st, TB_OK);
      assert_int_equal(func_attributes.value[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES],
                       80000);
      assert_int_equal(func_attributes.value[CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT],
                       100);
      assert_int_equal(p->ops->launch(p, 1, &err), TB_OK);
      assert_int_equal(native_launches.grid[0], 400); /* 200 rows x 2 blocks */
      assert_int_equal(native_launches.block[0], 256);
      struct tb_provider_details details;
      p->ops->details(p, &details);
      assert_int_equal(details.as.cuda.kernels[0].dynamic_shared_bytes, 80000);
      p->ops->release(p);
    }
    tb_provider_destroy(p);
    assert_everything_given_back();
    tb_case_data_free(&data);
  }
}

/* softmax 10x500000 on a 9.0 device of 132 SMs: rows too long for a
 * cluster's chunks take persistent rows, 10 groups of 26 blocks with chunks
 * of 19232 floats in a ring of 110592 B of shared memory, launched
 * cooperatively (every block resident), with a workspace of zeros (each
 * group's two counters and two rows of 26 x 2 floats). On a device whose
 * multiprocessors hold none such block (100 KiB of shared memory, as sm_120)
 * the planner keeps cluster rows, and a persistent plan made for the H200
 * is refused before anything is timed, naming the shortfall. */
static void native_persistent_rows_launch_cooperatively(void **state) {
  const struct tb_device_limits h200 = tb_device_limits_h200();
  const struct {
    int shared_per_multiprocessor;
    const struct tb_device_limits *planned_for;
    enum tb_mapping mapping;
    enum tb_status prepared;
  } runs[] = {{228 << 10, NULL, TB_MAPPING_PERSISTENT_ROW, TB_OK},
              {100 << 10, NULL, TB_MAPPING_CLUSTER_ROW, TB_OK},
              {100 << 10, &h200, TB_MAPPING_PERSISTENT_ROW, TB_ERR_UNAVAILABLE}};
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; ++r) {
    install_device(9, 0, 132);
    dev.shared_per_multiprocessor = runs[r].shared_per_multiprocessor;
    dev.l2_bytes = 1 << 20; /* one buffer set */
    struct tb_provider *p = native_created();
    struct tb_case_data data;
    struct tb_error err = {0};
    struct tb_exec_plan plan;
    enum tb_status st = prepare_softmax(p, (struct tb_shape){10, 500000, 0}, runs[r].planned_for,
                                        runs[r].mapping, &plan, &data, &err);
    assert_int_equal(st, runs[r].prepared);
    if (st != TB_OK) {
      assert_non_null(strstr(err.message, "260 blocks resident at once, the device holds 0"));
    } else if (runs[r].mapping == TB_MAPPING_PERSISTENT_ROW) {
      assert_int_equal(func_attributes.value[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES],
                       110592);
      assert_int_equal(p->ops->launch(p, 2, &err), TB_OK);
      assert_int_equal(cooperative_launches, 2);
      assert_int_equal(native_launches.grid[0], 260);
      assert_int_equal(native_launches.block[0], 256);
      const float *workspace = (const float *)(uintptr_t)native_launches.workspace[0];
      for (size_t i = 0; i < 10 * (2 + 2 * 26 * 2); ++i) {
        assert_true(workspace[i] == 0.0f);
      }
    }
    if (st == TB_OK) {
      p->ops->release(p);
    }
    tb_provider_destroy(p);
    assert_everything_given_back();
    tb_case_data_free(&data);
  }
}

/* Elementwise: the fixed walk; a block the generator cannot build is
 * refused by the plan step, before anything is prepared. */
static void native_plans_elementwise_and_refuses_bad_blocks(void **state) {
  struct tb_provider *p = native_on(9, 0, 132);
  struct tb_exec_plan plan;
  struct tb_error err = {0};
  struct tb_case add = case_of(TB_OP_ADD, (struct tb_shape){64, 257, 0}, TB_REALIZATION_SIMT);
  assert_int_equal(p->ops->plan(p, &add, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_ELEMENTWISE);
  assert_int_equal(plan.as.elementwise.threads_per_block, TB_ELEMENTWISE_THREADS);
  struct tb_case gemm = case_of(TB_OP_GEMM, (struct tb_shape){64, 64, 64}, TB_REALIZATION_SIMT);
  gemm.gemm_block = (struct tb_gemm_block){48, 48, 8};
  assert_int_equal(p->ops->plan(p, &gemm, &plan, &err), TB_ERR_USAGE);
  assert_int_equal(plan.kind, TB_PLAN_NONE);
  tb_provider_destroy(p);
  assert_everything_given_back();
}

/* cuBLAS over the same device base: it plans nothing and runs gemm only.
 * Where libcublas cannot start (no real driver behind the fake) the
 * construction fails with the reason and still gives the device back. */
static void cublas_is_its_own_provider(void **state) {
  install_device(9, 0, 132);
  struct tb_provider *p = NULL;
  struct tb_error err = {0};
  enum tb_status status = tb_cuda_cublas_provider_create(&p, &err);
  assert_int_equal(dev.streams_created, 1);
  if (status != TB_OK) {
    assert_null(p);
    assert_non_null(strstr(err.message, "cuBLAS"));
    assert_everything_given_back();
    return;
  }
  assert_string_equal(p->name, "cublas");
  assert_string_equal(p->backend, "cuda");
  assert_false(p->plans_reductions);
  struct tb_case c = case_of(TB_OP_GEMM, (struct tb_shape){64, 64, 64}, TB_REALIZATION_SIMT);
  c.provider = "cublas";
  struct tb_exec_plan plan;
  assert_int_equal(p->ops->plan(p, &c, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_NONE);
  struct tb_case sum = case_of(TB_OP_SUM, (struct tb_shape){4, 8, 0}, TB_REALIZATION_SIMT);
  assert_int_equal(p->ops->prepare(p, &sum, NULL, &plan, &err), TB_ERR_UNAVAILABLE);
  assert_non_null(strstr(err.message, "gemm only"));
  tb_provider_destroy(p);
  assert_everything_given_back();
}

/* The user provider's case of the defence tests: a strided softmax, small. */
static struct tb_case strided_user_case(void) {
  return (struct tb_case){.op = tb_op_info(TB_OP_SOFTMAX),
                          .shape = {5, 33, 0},
                          .view = tb_view_for(TB_VIEW_STRIDED, 33),
                          .provider = "user",
                          .variant = TB_VARIANT_AUTOMATIC};
}

/* The user provider on a strided softmax case, its library one of the
 * host-code kernels built beside this test: prepared on rotating, guarded
 * buffer sets, then validated and defended as the case runner does (no
 * device phase: the fake has no events). */
static void defend_user_kernel(const char *library, struct tb_case_result *r) {
  install_device(9, 0, 132);
  dev.l2_bytes = 64 << 10; /* several small sets, not hundreds */
  struct tb_case c = strided_user_case();
  struct tb_measure_options opt = {0.5, 0.2, 3, true, 0, 7, {0}, 1.0, {0, "", 0, 0, 0, 0}, false};
  struct tb_case_data data;
  double *reference = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_case_data_create(&c, opt.seed, &data, &err), TB_OK);
  assert_int_equal(tb_oracle_compute(&data, &reference, &err), TB_OK);
  struct tb_input_hashes before;
  tb_hash_inputs(&data, &before);
  struct tb_provider *p = NULL;
  assert_int_equal(tb_cuda_user_provider_create(library, &p, &err), TB_OK);
  assert_string_equal(p->backend, "cuda");
  struct tb_exec_plan plan;
  assert_int_equal(p->ops->plan(p, &c, &plan, &err), TB_OK);
  assert_int_equal(p->ops->prepare(p, &c, &data, &plan, &err), TB_OK);
  struct tb_provider_details details;
  p->ops->details(p, &details);
  assert_true(details.as.user.has_buffers);
  assert_true(details.as.user.buffers.sets > 1); /* the calls rotate over sets */
  /* the timed calls stand-in: once over every set, as the host phase's are */
  assert_int_equal(p->ops->output_sets(p), details.as.user.buffers.sets);
  assert_int_equal(p->ops->launch(p, details.as.user.buffers.sets, &err), TB_OK);
  assert_int_equal(p->ops->synchronize(p, &err), TB_OK);
  memset(r, 0, sizeof *r);
  r->c = c;
  r->backend = p->backend;
  r->host_measured = true; /* no samples: plausible has no figure to judge */
  assert_int_equal(tb_validate_and_defend(p, &c, &data, reference, &before, NULL, &opt, r, &err),
                   TB_OK);
  tb_provider_details_free(&details);
  p->ops->release(p);
  tb_provider_destroy(p);
  assert_everything_given_back();
  free(reference);
  tb_case_data_free(&data);
}

/* The example passes every defence through device copies; with no device
 * phase launches_on_stream is not run, and says so. */
static void user_provider_runs_a_library_on_device_buffers(void **state) {
  struct tb_case_result r;
  defend_user_kernel(TB_FAKE_USER_example, &r);
  assert_true(r.validated && r.validation.passed && r.defences_ran);
  for (int d = 0; d < TB_DEFENCE_COUNT; ++d) {
    if (r.defences[d].outcome == TB_DEFENCE_FAILED) {
      print_error("%s: %s\n", tb_defence_name((enum tb_defence)d), r.defences[d].detail);
    }
    assert_int_equal(r.defences[d].outcome, d == TB_DEFENCE_ON_STREAM || d == TB_DEFENCE_PLAUSIBLE
                                                ? TB_DEFENCE_NOT_RUN
                                                : TB_DEFENCE_PASSED);
  }
  assert_string_equal(r.defences[TB_DEFENCE_ON_STREAM].detail, "the device phase did not run");
  assert_string_equal(r.defences[TB_DEFENCE_PLAUSIBLE].detail, "no timed figure to judge");
  /* every set the calls reached, each as they left it */
  assert_int_equal(r.timed_outputs.checked, r.timed_outputs.sets);
  assert_non_null(strstr(r.defences[TB_DEFENCE_TIMED_OUTPUTS].detail, "buffer set(s)"));
  assert_non_null(strstr(r.defences[TB_DEFENCE_GUARD_ZONES].detail, "intact"));
}

/* Each broken kernel of tests/user_kernels, caught by its defence on the
 * device copies: an input written, a write past the output, a kept result. */
static void user_provider_defences_catch_broken_kernels(void **state) {
  static const struct {
    const char *library;
    enum tb_defence by;
  } broken[] = {{TB_FAKE_USER_modifies_input, TB_DEFENCE_INPUTS_UNCHANGED},
                {TB_FAKE_USER_writes_outside, TB_DEFENCE_GUARD_ZONES},
                {TB_FAKE_USER_caches_output, TB_DEFENCE_FRESH_INPUTS},
                {TB_FAKE_USER_one_set_only, TB_DEFENCE_TIMED_OUTPUTS}};
  for (size_t i = 0; i < sizeof broken / sizeof broken[0]; ++i) {
    struct tb_case_result r;
    defend_user_kernel(broken[i].library, &r);
    char why[600];
    assert_true(tb_defence_failure(&r, why, sizeof why));
    print_message("%s: %s\n", broken[i].library, why);
    assert_int_equal(r.defences[broken[i].by].outcome, TB_DEFENCE_FAILED);
  }
  /* only the sets the validation calls never use show the one-set kernel:
   * set 1, the first after set 0, holds the poison of its allocation */
  struct tb_case_result r;
  defend_user_kernel(TB_FAKE_USER_one_set_only, &r);
  assert_int_equal(r.defences[TB_DEFENCE_EVERY_CALL].outcome, TB_DEFENCE_PASSED);
  assert_int_equal(r.defences[TB_DEFENCE_FRESH_INPUTS].outcome, TB_DEFENCE_PASSED);
  assert_true(r.timed_outputs.failed && r.timed_outputs.failed_set == 1);
  assert_int_equal(r.timed_outputs.validation.unwritten, r.timed_outputs.validation.checked);
  assert_non_null(strstr(r.defences[TB_DEFENCE_TIMED_OUTPUTS].detail, "buffer set 1 of"));
}

#define SOFTMAX_CU TB_SOURCE_DIR "/examples/user-kernel-nvrtc/softmax.cu"

/* The CUDA source provider over the fake: NVRTC really compiles the
 * example, the fake loads it and runs the host stand-in; validated and
 * defended as the case runner does. Returns 0 when NVRTC is missing. */
static int defend_source_kernel(const char *launch, int ignore_stride, struct tb_case_result *r,
                                struct tb_provider_details *details) {
  install_device(9, 0, 132);
  fake_kernel.ignore_stride = ignore_stride;
  dev.l2_bytes = 64 << 10;
  struct tb_case c = strided_user_case();
  struct tb_measure_options opt = {0.5, 0.2, 3, true, 0, 7, {0}, 1.0, {0, "", 0, 0, 0, 0}, false};
  struct tb_case_data data;
  double *reference = NULL;
  struct tb_error err = {0};
  struct tb_provider *p = NULL;
  enum tb_status st = tb_cuda_user_source_provider_create(SOFTMAX_CU, launch, &p, &err);
  if (st == TB_ERR_UNAVAILABLE && strstr(err.message, "NVRTC") != NULL) {
    return 0;
  }
  if (st != TB_OK) {
    print_error("%s\n", err.message);
  }
  assert_int_equal(st, TB_OK);
  assert_int_equal(fake_kernel.modules_loaded, 1); /* compiled and loaded once, at creation */
  assert_int_equal(tb_case_data_create(&c, opt.seed, &data, &err), TB_OK);
  assert_int_equal(tb_oracle_compute(&data, &reference, &err), TB_OK);
  struct tb_input_hashes before;
  tb_hash_inputs(&data, &before);
  struct tb_exec_plan plan;
  assert_int_equal(p->ops->plan(p, &c, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_NONE);
  assert_int_equal(p->ops->prepare(p, &c, &data, &plan, &err), TB_OK);
  memset(r, 0, sizeof *r);
  r->c = c;
  r->backend = p->backend;
  assert_int_equal(tb_validate_and_defend(p, &c, &data, reference, &before, NULL, &opt, r, &err),
                   TB_OK);
  p->ops->details(p, details);
  const char *sha = NULL;
  const char *text = p->ops->source(p, &sha);
  assert_non_null(strstr(text, "tb_user_softmax")); /* archived with the run */
  assert_string_equal(sha, details->as.user.sha256);
  p->ops->release(p);
  tb_provider_destroy(p);
  assert_int_equal(fake_kernel.modules_unloaded, 1);
  assert_everything_given_back();
  free(reference);
  tb_case_data_free(&data);
  return 1;
}

/* The launch description decides the launch, on the provider's stream, and
 * the example's stand-in passes validation and every defence. */
static void source_provider_launches_as_described(void **state) {
  struct tb_case_result r;
  struct tb_provider_details d;
  if (!defend_source_kernel("grid=cdiv(m,2),2,block=32*n/n,4,smem=n*4", 0, &r, &d)) {
    skip(); /* no NVRTC here */
  }
  assert_int_equal(fake_kernel.grid[0], 3); /* m = 5 rows, two per block */
  assert_int_equal(fake_kernel.grid[1], 2);
  assert_int_equal(fake_kernel.block[0], 32);
  assert_int_equal(fake_kernel.block[1], 4);
  assert_int_equal(fake_kernel.smem, 33 * 4);
  assert_ptr_equal(fake_kernel.stream, (CUstream)(uintptr_t)0x5);
  assert_true(fake_kernel.launches >= 4); /* three validation calls and the fresh inputs */
  assert_true(r.validated && r.validation.passed && r.defences_ran);
  /* no timings here: nothing for the three defences that judge them */
  for (int k = 0; k < TB_DEFENCE_COUNT; ++k) {
    bool untimed =
        k == TB_DEFENCE_ON_STREAM || k == TB_DEFENCE_TIMED_OUTPUTS || k == TB_DEFENCE_PLAUSIBLE;
    assert_int_equal(r.defences[k].outcome, untimed ? TB_DEFENCE_NOT_RUN : TB_DEFENCE_PASSED);
  }
  assert_true(d.as.user.from_source);
  assert_string_equal(d.as.user.symbol, "tb_user_softmax");
  assert_string_equal(d.as.user.file_name, "softmax.cu");
  assert_string_equal(d.as.user.launch, "grid=cdiv(m,2),2,block=32*n/n,4,smem=n*4");
  assert_non_null(strstr(d.as.user.compile.options, "sm_90"));
  assert_true(d.as.user.accepts_strided);
  tb_provider_details_free(&d);
}

/* A kernel that ignores row_stride reads the strided view's NaN padding:
 * validation fails, whatever the provider launched. */
static void source_provider_validation_catches_a_wrong_kernel(void **state) {
  struct tb_case_result r;
  struct tb_provider_details d;
  if (!defend_source_kernel("grid=m,block=256", 1, &r, &d)) {
    skip();
  }
  assert_true(r.validated);
  assert_false(r.validation.passed);
  tb_provider_details_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(native_plans_reductions_for_its_device),
      cmocka_unit_test(native_buffers_are_defended),
      cmocka_unit_test(native_plans_gemm_for_its_device),
      cmocka_unit_test(native_launches_matrix_vector),
      cmocka_unit_test(native_shared_chunks_ask_for_shared_memory),
      cmocka_unit_test(native_persistent_rows_launch_cooperatively),
      cmocka_unit_test(native_plans_elementwise_and_refuses_bad_blocks),
      cmocka_unit_test(cublas_is_its_own_provider),
      cmocka_unit_test(user_provider_runs_a_library_on_device_buffers),
      cmocka_unit_test(user_provider_defences_catch_broken_kernels),
      cmocka_unit_test(source_provider_launches_as_described),
      cmocka_unit_test(source_provider_validation_catches_a_wrong_kernel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
