#include "backends/cuda/user_nvrtc_provider.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/nvrtc.h"
#include "backends/user_library.h"
#include "backends/user_source.h"
#include "core/clock.h"

struct user_source_state {
  struct tb_cuda_device dev; /* first: the shared device ops take the state as one */
  struct tb_user_source src;
  char arch[16];
  CUmodule module;
  struct tb_compile_facts compile;
  char compile_log[2048];
  /* the prepared case */
  CUfunction fn;
  char symbol[64];
  struct tb_launch_dims dims;
  /* the scalar parameters of every call (docs/user-kernels.md): their
   * addresses go to cuLaunchKernel, so they live as long as the case */
  long long m, n, row_stride;
  float eps;
};

static enum tb_status user_source_plan(const struct tb_provider *p, const struct tb_case *c,
                                       struct tb_exec_plan *plan, struct tb_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->kind = TB_PLAN_NONE; /* the user's launch description decides the launch */
  return TB_OK;
}

/* The log as JSON can hold it: printable ASCII, new lines and tabs. */
static void keep_log(struct user_source_state *s, const char *log) {
  snprintf(s->compile_log, sizeof s->compile_log, "%s", log != NULL ? log : "");
  for (char *c = s->compile_log; *c != '\0'; ++c) {
    if ((*c < 0x20 && *c != '\n' && *c != '\t') || (unsigned char)*c >= 0x7f) {
      *c = '?';
    }
  }
}

/* Once per campaign, for device 0's architecture: every case uses the same
 * module, as the native provider's cache would give it. */
static enum tb_status compile_source(struct user_source_state *s, struct tb_error *err) {
  snprintf(s->arch, sizeof s->arch, "sm_%d%d", s->dev.info.cc_major, s->dev.info.cc_minor);
  char what[320];
  snprintf(what, sizeof what, "--kernel %s", s->src.file_name);
  struct tb_compiled compiled;
  struct tb_error nvrtc_err = {0};
  enum tb_status st =
      tb_nvrtc_compile_named(s->src.text, s->src.file_name, what, s->arch, &compiled, &nvrtc_err);
  keep_log(s, compiled.log);
  if (st != TB_OK) {
    tb_compiled_free(&compiled);
    return tb_fail(err, st, "%s", nvrtc_err.message);
  }
  int64_t start = tb_monotonic_ns();
  CUresult rc = s->dev.cu->cuModuleLoadData(&s->module, compiled.cubin);
  tb_compiled_facts(&compiled, (double)(tb_monotonic_ns() - start) / 1e6, &s->compile);
  tb_compiled_free(&compiled);
  if (rc != CUDA_SUCCESS) {
    s->module = NULL;
    return tb_cuda_fail(err, "cuModuleLoadData (the compiled --kernel source)", rc);
  }
  return TB_OK;
}

/* The entry point of the case's operation, and a launch the device allows. */
static enum tb_status bind_entry_point(struct user_source_state *s, const struct tb_case *c,
                                       struct tb_error *err) {
  snprintf(s->symbol, sizeof s->symbol, "tb_user_%s", c->op->name);
  if (c->op->is_matmul ||
      s->dev.cu->cuModuleGetFunction(&s->fn, s->module, s->symbol) != CUDA_SUCCESS) {
    s->fn = NULL;
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "%s defines no extern \"C\" __global__ %s (a C++ name is mangled: declare it "
                   "extern \"C\")",
                   s->src.file_name, s->symbol);
  }
  if (tb_launch_spec_eval(&s->src.launch, (int64_t)c->shape.m, (int64_t)c->shape.n, &s->dims,
                          err) != TB_OK) {
    return err->status;
  }
  int max_threads = 0;
  s->dev.cu->cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, s->fn);
  unsigned threads = s->dims.block[0] * s->dims.block[1] * s->dims.block[2];
  if (max_threads > 0 && threads > (unsigned)max_threads) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "capability: %s fits at most %d threads per block (its registers), the launch "
                   "asks %u",
                   s->symbol, max_threads, threads);
  }
  if (s->dims.smem_bytes > (unsigned)s->dev.info.max_shared_optin) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "capability: smem %u B for shape %zux%zu, the device allows %d per block",
                   s->dims.smem_bytes, c->shape.m, c->shape.n, s->dev.info.max_shared_optin);
  }
  /* above the 48 KiB default a kernel must opt in to its dynamic shared memory */
  if (s->dims.smem_bytes > 48u * 1024 &&
      s->dev.cu->cuFuncSetAttribute(s->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    (int)s->dims.smem_bytes) != CUDA_SUCCESS) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "cuFuncSetAttribute: %u B of dynamic shared memory",
                   s->dims.smem_bytes);
  }
  return TB_OK;
}

static enum tb_status user_source_prepare(struct tb_provider *p, const struct tb_case *c,
                                          const struct tb_case_data *data,
                                          const struct tb_exec_plan *plan, struct tb_error *err) {
  struct user_source_state *s = p->state;
  s->dev.cu->cuCtxSetCurrent(s->dev.context);
  if (bind_entry_point(s, c, err) != TB_OK) {
    return err->status;
  }
  if (c->op->has_second_matrix && data->inputs[1].row_stride != data->inputs[0].row_stride) {
    return tb_fail(err, TB_ERR_RUN, "the kernel parameters have one row stride for x and y");
  }
  struct tb_kernel_args a;
  tb_user_kernel_args_init(c, data, &a);
  s->m = a.m;
  s->n = a.n;
  s->row_stride = a.row_stride;
  s->eps = a.eps;
  return tb_cuda_device_load_case(&s->dev, c, data, 0, err);
}

/* Each call one launch of the entry point on the next buffer set; absent
 * operands (y, weight, bias) are null pointers. */
static enum tb_status user_source_launch(struct tb_provider *p, unsigned long calls,
                                         struct tb_error *err) {
  struct user_source_state *s = p->state;
  const struct tb_launch_dims *d = &s->dims;
  for (unsigned long i = 0; i < calls; ++i) {
    struct tb_case_operands o = tb_cuda_device_next_operands(&s->dev);
    void *params[] = {&o.x,  &o.y,  &o.weight,      &o.bias, &o.out,
                      &s->m, &s->n, &s->row_stride, &s->eps};
    CUresult rc = s->dev.cu->cuLaunchKernel(s->fn, d->grid[0], d->grid[1], d->grid[2], d->block[0],
                                            d->block[1], d->block[2], d->smem_bytes, s->dev.stream,
                                            params, NULL);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuLaunchKernel (the --kernel entry point)", rc);
    }
  }
  return TB_OK;
}

static unsigned user_source_launches_per_call(const struct tb_provider *p) {
  return 1;
}

static void user_source_details(const struct tb_provider *p, struct tb_provider_details *out) {
  const struct user_source_state *s = p->state;
  memset(out, 0, sizeof *out);
  out->kind = TB_DETAILS_USER;
  struct tb_user_details *u = &out->as.user;
  snprintf(u->library, sizeof u->library, "%s", s->src.path);
  snprintf(u->file_name, sizeof u->file_name, "%s", s->src.file_name);
  snprintf(u->sha256, sizeof u->sha256, "%s", s->src.sha256);
  snprintf(u->symbol, sizeof u->symbol, "%s", s->symbol);
  snprintf(u->description, sizeof u->description, "CUDA source compiled by NVRTC for %s", s->arch);
  u->abi_version = TB_KERNEL_ABI_VERSION;
  u->accepts_strided = true; /* the parameters carry row_stride: every kernel must honour it */
  u->has_buffers = true;
  tb_cuda_device_buffer_facts(&s->dev, &u->buffers);
  snprintf(u->device, sizeof u->device, "%s", s->dev.info.name);
  u->from_source = true;
  u->compile = s->compile;
  snprintf(u->compile_log, sizeof u->compile_log, "%s", s->compile_log);
  snprintf(u->launch, sizeof u->launch, "%s", s->src.launch.text);
  memcpy(u->grid, s->dims.grid, sizeof u->grid);
  memcpy(u->block, s->dims.block, sizeof u->block);
  u->dynamic_shared_bytes = s->dims.smem_bytes;
}

/* The user's source, archived with the run as sources/<sha256>.cu. */
static const char *user_source_source(const struct tb_provider *p, const char **sha256) {
  const struct user_source_state *s = p->state;
  *sha256 = s->src.sha256;
  return s->src.text;
}

static void user_source_release(struct tb_provider *p) {
  struct user_source_state *s = p->state;
  tb_cuda_device_unload_case(&s->dev);
  s->fn = NULL;
  s->symbol[0] = '\0';
  memset(&s->dims, 0, sizeof s->dims);
}

static void user_source_destroy(struct tb_provider *p) {
  struct user_source_state *s = p->state;
  user_source_release(p);
  if (s->module != NULL) {
    s->dev.cu->cuModuleUnload(s->module);
  }
  tb_cuda_device_close(&s->dev);
  tb_user_source_close(&s->src);
  free(s);
  free(p);
}

static const struct tb_provider_ops user_source_ops = {
    .plan = user_source_plan,
    .prepare = user_source_prepare,
    .launch = user_source_launch,
    TB_CUDA_DEVICE_OPS,
    .launches_per_call = user_source_launches_per_call,
    .details = user_source_details,
    .source = user_source_source,
    .release = user_source_release,
    .destroy = user_source_destroy,
};

enum tb_status tb_cuda_user_source_provider_create(const char *source_path, const char *launch,
                                                   struct tb_provider **out, struct tb_error *err) {
  *out = NULL;
  struct user_source_state *s = calloc(1, sizeof *s);
  struct tb_provider *p = s ? tb_cuda_provider_new(&user_source_ops, "user", false, s) : NULL;
  if (p == NULL) {
    free(s);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating the user provider");
  }
  if (tb_cuda_device_open(&s->dev, err) != TB_OK ||
      tb_user_source_open(source_path, launch, &s->src, err) != TB_OK ||
      compile_source(s, err) != TB_OK) {
    user_source_destroy(p);
    return err->status;
  }
  *out = p;
  return TB_OK;
}
