/* The CUDA backend's providers built over a fake driver table (no GPU
 * needed): the native provider's plan step plans for the device it found,
 * cuBLAS is a provider of its own on the same device base, and both give
 * back every context and stream they took. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cublas_provider.h"
#include "backends/cuda/cuda_provider.h"
#include "backends/cuda/driver.h"
#include "registry/registry.h"
#include "test_support.h"

/* ---- the fake driver ---------------------------------------------------- */

static struct {
  int cc_major, cc_minor, multiprocessors;
  int contexts_retained, contexts_released, streams_created, streams_destroyed;
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
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 60 << 20; break;
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

static void install_device(int cc_major, int cc_minor, int multiprocessors) {
  memset(&dev, 0, sizeof dev);
  dev.cc_major = cc_major;
  dev.cc_minor = cc_minor;
  dev.multiprocessors = multiprocessors;
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
  };
  tb_cuda_driver_install(&table);
}

static void assert_everything_given_back(void) {
  assert_int_equal(dev.contexts_released, dev.contexts_retained);
  assert_int_equal(dev.streams_destroyed, dev.streams_created);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(native_plans_reductions_for_its_device),
      cmocka_unit_test(native_plans_gemm_for_its_device),
      cmocka_unit_test(native_plans_elementwise_and_refuses_bad_blocks),
      cmocka_unit_test(cublas_is_its_own_provider),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
