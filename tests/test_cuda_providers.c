/* The CUDA backend's providers built over a fake driver table (no GPU
 * needed): the native provider's plan step plans for the device it found,
 * cuBLAS is a provider of its own on the same device base, the user provider
 * calls a library on rotating buffer sets and runs the defences through
 * device copies (the fake's device memory is host memory, so host-code
 * kernels can stand in for CUDA ones), and all give back every context,
 * stream and allocation they took. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cublas_provider.h"
#include "backends/cuda/cuda_provider.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/user_cuda_provider.h"
#include "measure/defences.h"
#include "oracle/oracle.h"
#include "registry/registry.h"
#include "test_support.h"

/* ---- the fake driver ---------------------------------------------------- */

static struct {
  int cc_major, cc_minor, multiprocessors, l2_bytes;
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

static void install_device(int cc_major, int cc_minor, int multiprocessors) {
  memset(&dev, 0, sizeof dev);
  dev.cc_major = cc_major;
  dev.cc_minor = cc_minor;
  dev.multiprocessors = multiprocessors;
  dev.l2_bytes = 60 << 20;
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
  };
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

static struct tb_provider *native_on(int cc_major, int cc_minor, int multiprocessors) {
  install_device(cc_major, cc_minor, multiprocessors);
  struct tb_provider *p = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_cuda_native_provider_create(&p, &err), TB_OK);
  assert_string_equal(p->name, "native");
  assert_string_equal(p->backend, "cuda");
  assert_true(p->plans_reductions);
  assert_int_equal(dev.streams_created, 1);
  return p;
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

/* The user provider on a strided softmax case, its library one of the
 * host-code kernels built beside this test: prepared on rotating, guarded
 * buffer sets, then validated and defended as the case runner does (no
 * device phase: the fake has no events). */
static void defend_user_kernel(const char *library, struct tb_case_result *r) {
  install_device(9, 0, 132);
  dev.l2_bytes = 64 << 10; /* several small sets, not hundreds */
  struct tb_case c = {.op = tb_op_info(TB_OP_SOFTMAX),
                      .shape = {5, 33, 0},
                      .view = tb_view_for(TB_VIEW_STRIDED, 33),
                      .provider = "user",
                      .variant = TB_VARIANT_AUTOMATIC};
  struct tb_measure_options opt = {0.5, 0.2, 3, true, 0, 7, {0}};
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
  memset(r, 0, sizeof *r);
  r->c = c;
  assert_int_equal(tb_validate_and_defend(p, &c, &data, reference, &before, &opt, r, &err), TB_OK);
  struct tb_provider_details details;
  p->ops->details(p, &details);
  assert_true(details.as.user.has_buffers);
  assert_true(details.as.user.buffers.sets > 1); /* the calls rotate over sets */
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
    assert_int_equal(r.defences[d].outcome,
                     d == TB_DEFENCE_ON_STREAM ? TB_DEFENCE_NOT_RUN : TB_DEFENCE_PASSED);
  }
  assert_string_equal(r.defences[TB_DEFENCE_ON_STREAM].detail, "the device phase did not run");
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
                {TB_FAKE_USER_caches_output, TB_DEFENCE_FRESH_INPUTS}};
  for (size_t i = 0; i < sizeof broken / sizeof broken[0]; ++i) {
    struct tb_case_result r;
    defend_user_kernel(broken[i].library, &r);
    char why[600];
    assert_true(tb_defence_failure(&r, why, sizeof why));
    print_message("%s: %s\n", broken[i].library, why);
    assert_int_equal(r.defences[broken[i].by].outcome, TB_DEFENCE_FAILED);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(native_plans_reductions_for_its_device),
      cmocka_unit_test(native_plans_gemm_for_its_device),
      cmocka_unit_test(native_plans_elementwise_and_refuses_bad_blocks),
      cmocka_unit_test(cublas_is_its_own_provider),
      cmocka_unit_test(user_provider_runs_a_library_on_device_buffers),
      cmocka_unit_test(user_provider_defences_catch_broken_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
