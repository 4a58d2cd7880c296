#include "backends/cuda/cuda_provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cublas.h"
#include "backends/cuda/device_buffers.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/module_cache.h"
#include "codegen/codegen.h"
#include "results/plan_json.h"
#include "inputs/poison.h"

struct cuda_state {
  const struct tb_cuda *cu;
  struct tb_device_info info;
  CUcontext context;
  CUstream stream;
  struct tb_module_cache modules;
  struct tb_cublas *blas; /* the cublas provider: a library call instead of generated kernels */
  int blas_status;        /* of the last cuBLAS call */
  /* the prepared case */
  const struct tb_case_data *data;
  bool planned;
  struct tb_plan plan;
  bool has_gemm; /* gemm: its plan */
  struct tb_gemm_plan gemm;
  struct tb_generated gen;
  const struct tb_module_entry *module;
  int cache_hit;
  CUfunction functions[TB_MAX_KERNELS];
  int registers[TB_MAX_KERNELS], local_bytes[TB_MAX_KERNELS];
  struct tb_device_buffers buffers;
  unsigned cursor; /* next buffer set */
  size_t view_offset;
};

/* Refuses a case the device cannot run, before anything is timed. */
static enum tb_status check_contract(const struct cuda_state *s, struct tb_error *err) {
  const struct tb_generated *g = &s->gen;
  const struct tb_device_info *d = &s->info;
  if (g->arch_specific && (d->cc_major != g->min_cc_major || d->cc_minor != g->min_cc_minor)) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "capability: the kernels are sm_%d%da code (compute capability exactly %d.%d), "
                   "the device has %d.%d",
                   g->min_cc_major, g->min_cc_minor, g->min_cc_major, g->min_cc_minor, d->cc_major,
                   d->cc_minor);
  }
  if (d->cc_major * 10 + d->cc_minor < g->min_cc_major * 10 + g->min_cc_minor) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "capability: the kernels need compute capability %d.%d, the device has %d.%d",
                   g->min_cc_major, g->min_cc_minor, d->cc_major, d->cc_minor);
  }
  if ((int)g->max_threads_per_block > d->max_threads_per_block) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "capability: %u threads per block, the device allows %d",
                   g->max_threads_per_block, d->max_threads_per_block);
  }
  if ((int)g->max_static_shared_bytes > d->max_shared_per_block) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "capability: %u B of shared memory per block, the device allows %d",
                   g->max_static_shared_bytes, d->max_shared_per_block);
  }
  if ((int)(g->max_static_shared_bytes + g->max_dynamic_shared_bytes) > d->max_shared_optin) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "capability: %u B of shared memory per block, the device allows %d",
                   g->max_static_shared_bytes + g->max_dynamic_shared_bytes, d->max_shared_optin);
  }

  return TB_OK;
}

static enum tb_status generate(struct cuda_state *s, const struct tb_case *c,
                               struct tb_error *err) {
  s->planned = c->planned;
  s->has_gemm = c->op->is_matmul;
  if (c->op->is_matmul) {
    size_t sa = tb_view_for(c->view.kind, c->shape.k).row_stride;
    size_t sb = tb_view_for(c->view.kind, c->shape.n).row_stride;
    bool aligned = c->shape.k % 4 == 0 && c->shape.n % 4 == 0 && sa % 4 == 0 && sb % 4 == 0 &&
                   c->view.offset % 4 == 0;
    /* wgmma is sm_90a's: compute capability exactly 9.0 */
    struct tb_gemm_target target = {(unsigned)s->info.multiprocessors,
                                    s->info.cc_major == 9 && s->info.cc_minor == 0};
    if (tb_plan_gemm(c->shape.m, c->shape.n, c->shape.k, c->realization, c->gemm_block, target,
                     aligned, &s->gemm, err) != TB_OK) {
      return err->status;
    }
    return tb_codegen_gemm(&s->gemm, c, &s->gen, err);
  }
  if (c->planned) {
    struct tb_device_limits limits = tb_device_limits_of(&s->info);
    if (tb_plan_reduction(c->op->op, c->shape.m, c->shape.n, c->variant, &limits, c->profile,
                          &s->plan, err) != TB_OK) {
      return err->status;
    }
    return tb_codegen_reduction(&s->plan, c, &s->gen, err);
  }
  struct tb_elementwise_plan ep;
  tb_plan_elementwise(c->op->op, c->shape.m, c->shape.n, c->view.kind == TB_VIEW_PACKED, &ep);
  return tb_codegen_elementwise(&ep, c, &s->gen, err);
}

/* Functions of the module and their resource use; a kernel whose registers
 * do not allow its block size is refused here, before timing. */
static enum tb_status bind_functions(struct cuda_state *s, struct tb_error *err) {
  for (unsigned k = 0; k < s->gen.kernel_count; ++k) {
    CUresult rc =
        s->cu->cuModuleGetFunction(&s->functions[k], s->module->module, s->gen.kernels[k].name);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuModuleGetFunction", rc);
    }
    unsigned dynamic = s->gen.kernels[k].dynamic_shared_bytes;
    if (dynamic > 0) {
      rc = s->cu->cuFuncSetAttribute(s->functions[k],
                                     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)dynamic);
      if (rc != CUDA_SUCCESS) {
        return tb_cuda_fail(err, "cuFuncSetAttribute (dynamic shared memory)", rc);
      }
    }
    if (s->gen.kernels[k].cluster_blocks > 8) { /* 8 is the portable cluster size */
      rc = s->cu->cuFuncSetAttribute(s->functions[k],
                                     CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
      if (rc != CUDA_SUCCESS) {
        return tb_cuda_fail(err, "cuFuncSetAttribute (non-portable cluster size)", rc);
      }
    }
    int max_threads = 0;
    s->cu->cuFuncGetAttribute(&s->registers[k], CU_FUNC_ATTRIBUTE_NUM_REGS, s->functions[k]);
    s->cu->cuFuncGetAttribute(&s->local_bytes[k], CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                              s->functions[k]);
    s->cu->cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                              s->functions[k]);
    if ((int)s->gen.kernels[k].threads_per_block > max_threads) {
      return tb_fail(err, TB_ERR_UNAVAILABLE,
                     "capability: %s uses %d registers, so at most %d threads per block fit, "
                     "not %u",
                     s->gen.kernels[k].name, s->registers[k], max_threads,
                     s->gen.kernels[k].threads_per_block);
    }
  }
  return TB_OK;
}

static enum tb_status cuda_prepare(struct tb_provider *p, const struct tb_case *c,
                                   const struct tb_case_data *data, struct tb_error *err) {
  struct cuda_state *s = p->state;
  s->data = data;
  s->cursor = 0;
  s->view_offset = c->view.offset;
  s->cu->cuCtxSetCurrent(s->context);
  if (s->blas != NULL) {
    if (!c->op->is_matmul) {
      return tb_fail(err, TB_ERR_UNAVAILABLE, "the cublas provider runs gemm only, not %s",
                     c->op->name);
    }
    if (tb_cublas_set_realization(s->blas, c->realization, err) != TB_OK) {
      return err->status;
    }
    return tb_device_buffers_create(s->cu, data, 0, s->info.l2_bytes, &s->buffers, err);
  }
  if (generate(s, c, err) != TB_OK || check_contract(s, err) != TB_OK) {
    return err->status;
  }
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d%d%s", s->info.cc_major, s->info.cc_minor,
           s->gen.arch_specific ? "a" : "");
  if (tb_module_get(s->cu, &s->modules, &s->gen, arch, &s->module, &s->cache_hit, err) != TB_OK ||
      bind_functions(s, err) != TB_OK) {
    return err->status;
  }
  return tb_device_buffers_create(s->cu, data, s->gen.workspace_floats, s->info.l2_bytes,
                                  &s->buffers, err);
}

static const struct tb_plan *cuda_plan(const struct tb_provider *p) {
  const struct cuda_state *s = p->state;
  return s->planned ? &s->plan : NULL;
}

/* One call: every kernel of the plan, on the next buffer set. */
static CUresult launch_one(struct cuda_state *s) {
  struct tb_buffer_set *set = &s->buffers.sets[s->cursor];
  s->cursor = (s->cursor + 1) % s->buffers.count;
  const struct tb_case_data *d = s->data;
  /* x (or a), y (b), weight, bias: views start `offset` elements in */
  CUdeviceptr x = set->inputs[0] + s->view_offset * sizeof(float);
  CUdeviceptr y = d->c.op->has_second_matrix ? set->inputs[1] + s->view_offset * sizeof(float) : 0;
  size_t next = d->c.op->has_second_matrix ? 2 : 1;
  CUdeviceptr w = d->c.op->has_weight ? set->inputs[next++] : 0;
  CUdeviceptr b = d->c.op->has_bias ? set->inputs[next] : 0;
  if (s->blas != NULL) {
    const struct tb_case *c = &d->c;
    size_t sa = tb_view_for(c->view.kind, c->shape.k).row_stride;
    size_t sb = tb_view_for(c->view.kind, c->shape.n).row_stride;
    s->blas_status =
        tb_cublas_gemm(s->blas, c->shape.m, c->shape.n, c->shape.k, x, sa, y, sb, set->out);
    return s->blas_status == 0 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
  }
  void *args[] = {&x, &y, &w, &b, &set->out, &set->workspace};
  for (unsigned k = 0; k < s->gen.kernel_count; ++k) {
    const struct tb_kernel_spec *spec = &s->gen.kernels[k];
    CUresult rc = s->cu->cuLaunchKernel(s->functions[k], (unsigned)spec->blocks, 1, 1,
                                        spec->threads_per_block, 1, 1, spec->dynamic_shared_bytes,
                                        s->stream, args, NULL);
    if (rc != CUDA_SUCCESS) {
      return rc;
    }
  }
  return CUDA_SUCCESS;
}

static enum tb_status cuda_launch(struct tb_provider *p, unsigned long calls,
                                  struct tb_error *err) {
  struct cuda_state *s = p->state;
  for (unsigned long i = 0; i < calls; ++i) {
    CUresult rc = launch_one(s);
    if (rc != CUDA_SUCCESS && s->blas != NULL) {
      return tb_fail(err, TB_ERR_RUN, "cublasSgemm failed: status %d", s->blas_status);
    }
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuLaunchKernel", rc);
    }
  }
  return TB_OK;
}

static enum tb_status cuda_synchronize(struct tb_provider *p, struct tb_error *err) {
  struct cuda_state *s = p->state;
  CUresult rc = s->cu->cuStreamSynchronize(s->stream);
  return rc == CUDA_SUCCESS ? TB_OK
                            : tb_cuda_fail(err, "cuStreamSynchronize (a kernel failed?)", rc);
}

/* Poisons every set's output and restarts the rotation at set 0, so the
 * validated call writes set 0. */
static enum tb_status cuda_poison(struct tb_provider *p, struct tb_error *err) {
  struct cuda_state *s = p->state;
  for (unsigned i = 0; i < s->buffers.count; ++i) {
    CUresult rc = s->cu->cuMemsetD32Async(s->buffers.sets[i].out, TB_POISON_BITS,
                                          s->buffers.out_bytes / sizeof(float), s->stream);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuMemsetD32Async", rc);
    }
  }
  s->cursor = 0;
  return cuda_synchronize(p, err);
}

static enum tb_status cuda_read_output(struct tb_provider *p, float *dst, size_t count,
                                       struct tb_error *err) {
  struct cuda_state *s = p->state;
  if (count * sizeof(float) != s->buffers.out_bytes) {
    return tb_fail(err, TB_ERR_RUN, "output size mismatch");
  }
  if (cuda_synchronize(p, err) != TB_OK) {
    return err->status;
  }
  CUresult rc = s->cu->cuMemcpyDtoH(dst, s->buffers.sets[0].out, s->buffers.out_bytes);
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "cuMemcpyDtoH", rc);
}

static void *cuda_device_stream(const struct tb_provider *p) {
  return ((const struct cuda_state *)p->state)->stream;
}

static bool cuda_has_device(const struct tb_provider *p) {
  return true;
}

static unsigned cuda_launches_per_call(const struct tb_provider *p) {
  const struct cuda_state *s = p->state;
  /* cuBLAS: an upper bound for the probe's capacity (split-k adds a kernel) */
  return s->blas != NULL ? 4 : s->gen.kernel_count;
}

static json_t *cuda_details(const struct tb_provider *p) {
  const struct cuda_state *s = p->state;
  if (s->blas != NULL) {
    json_t *j = json_pack("{s:o, s:o, s:s}", "cublas", tb_cublas_describe(s->blas), "buffers",
                          tb_device_buffers_describe(&s->buffers), "device", s->info.name);
    return j;
  }
  if (s->gen.source == NULL) {
    return NULL;
  }
  json_t *kernels = json_array();
  for (unsigned k = 0; k < s->gen.kernel_count; ++k) {
    const struct tb_kernel_spec *spec = &s->gen.kernels[k];
    json_array_append_new(kernels,
                          json_pack("{s:s, s:i, s:I, s:i, s:i, s:i, s:i}", "name", spec->name,
                                    "threads_per_block", spec->threads_per_block, "blocks",
                                    (json_int_t)spec->blocks, "static_shared_bytes",
                                    spec->static_shared_bytes, "dynamic_shared_bytes",
                                    spec->dynamic_shared_bytes, "registers", s->registers[k],
                                    "local_bytes", s->local_bytes[k]));
  }
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", s->gen.min_cc_major, s->gen.min_cc_minor);
  json_t *contract =
      json_pack("{s:s, s:b, s:i, s:i, s:i}", "min_compute_capability", cc, "arch_specific",
                s->gen.arch_specific, "threads_per_block", s->gen.max_threads_per_block,
                "static_shared_bytes", s->gen.max_static_shared_bytes, "dynamic_shared_bytes",
                s->gen.max_dynamic_shared_bytes);
  json_t *j = json_pack("{s:s, s:i, s:o, s:o, s:b, s:O, s:o}", "source_sha256", s->gen.sha256,
                        "barrier_sites", s->gen.barrier_sites, "kernels", kernels,
                        "capability_contract", contract, "module_cache_hit", s->cache_hit,
                        "compile", s->module ? s->module->compile : json_null(), "buffers",
                        tb_device_buffers_describe(&s->buffers));
  json_object_set_new(j, "device", json_string(s->info.name));
  if (s->has_gemm) {
    json_object_set_new(j, "gemm_plan", tb_gemm_plan_to_json(&s->gemm));
  }
  return j;
}

static const char *cuda_source(const struct tb_provider *p, const char **sha256) {
  const struct cuda_state *s = p->state;
  *sha256 = s->gen.source ? s->gen.sha256 : NULL;
  return s->gen.source;
}

static void cuda_release(struct tb_provider *p) {
  struct cuda_state *s = p->state;
  if (s->buffers.count > 0) {
    s->cu->cuStreamSynchronize(s->stream);
  }
  tb_device_buffers_free(s->cu, &s->buffers);
  tb_generated_free(&s->gen);
  s->module = NULL;
  s->data = NULL;
  s->planned = false;
}

static void cuda_destroy(struct tb_provider *p) {
  struct cuda_state *s = p->state;
  cuda_release(p);
  tb_module_cache_clear(s->cu, &s->modules);
  tb_cublas_close(s->blas);
  if (s->stream) {
    s->cu->cuStreamDestroy(s->stream);
  }
  if (s->context) {
    s->cu->cuDevicePrimaryCtxRelease(s->info.device);
  }
  free(s);
  free(p);
}

static const struct tb_provider_ops cuda_ops = {
    .prepare = cuda_prepare,
    .plan = cuda_plan,
    .launch = cuda_launch,
    .synchronize = cuda_synchronize,
    .poison_output = cuda_poison,
    .read_output = cuda_read_output,
    .device_stream = cuda_device_stream,
    .has_device = cuda_has_device,
    .launches_per_call = cuda_launches_per_call,
    .details = cuda_details,
    .source = cuda_source,
    .release = cuda_release,
    .destroy = cuda_destroy,
};

static enum tb_status create_provider(bool cublas, struct tb_provider **out, struct tb_error *err) {
  *out = NULL;
  if (tb_cuda_driver_open(err) != TB_OK) {
    return err->status;
  }
  struct tb_provider *p = calloc(1, sizeof *p);
  struct cuda_state *s = calloc(1, sizeof *s);
  if (p == NULL || s == NULL) {
    free(p);
    free(s);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating the CUDA provider");
  }
  p->ops = &cuda_ops;
  p->name = cublas ? "cublas" : "native";
  p->backend = "cuda";
  p->output_allocation = "preallocated_out";
  p->plans_reductions = !cublas;
  p->state = s;
  s->cu = tb_cuda();
  CUdevice dev = 0;
  CUresult rc = tb_cuda_enter_device0(s->cu, &dev, &s->context);
  if (rc == CUDA_SUCCESS && tb_device_info_read(s->cu, dev, &s->info, err) == TB_OK) {
    rc = s->cu->cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING);
  }
  if (rc == CUDA_SUCCESS && err->status == TB_OK && cublas &&
      tb_cublas_open(s->stream, &s->blas, err) != TB_OK) {
    cuda_destroy(p);
    return err->status;
  }
  if (rc != CUDA_SUCCESS || err->status != TB_OK) {
    if (err->status == TB_OK) {
      tb_cuda_fail(err, "setting up the GPU (context, stream)", rc);
    }
    cuda_destroy(p);
    return err->status;
  }
  *out = p;
  return TB_OK;
}

enum tb_status tb_cuda_native_provider_create(struct tb_provider **out, struct tb_error *err) {
  return create_provider(false, out, err);
}

enum tb_status tb_cuda_cublas_provider_create(struct tb_provider **out, struct tb_error *err) {
  return create_provider(true, out, err);
}
