#include "backends/cuda/cuda_provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/module_cache.h"
#include "backends/cuda/tensor_maps.h"
#include "codegen/codegen.h"

_Static_assert(TB_MAX_KERNELS <= TB_DETAILS_MAX_KERNELS, "provider details hold every kernel");

/* The native provider: generated kernels, compiled once per source. */
struct native_state {
  struct tb_cuda_device dev; /* first: the shared device ops take the state as one */
  struct tb_module_cache modules;
  /* the prepared case */
  struct tb_generated gen;
  const struct tb_module_entry *module;
  int cache_hit;
  CUfunction functions[TB_MAX_KERNELS];
  int registers[TB_MAX_KERNELS], local_bytes[TB_MAX_KERNELS];
  struct tb_tensor_maps maps; /* the kernels' TMA tensor maps, per buffer set */
};

/* The shared memory the driver reserves for each resident block (compute
 * capability 8.0 and newer). */
#define TB_SHARED_RESERVED_PER_BLOCK 1024

/* A cooperative kernel's blocks must all be resident at once: refused here,
 * naming the shortfall, when the multiprocessors' shared memory holds fewer
 * (the driver would refuse the launch itself, mid-run). */
static enum tb_status check_residency(const struct native_state *s, struct tb_error *err) {
  const struct tb_device_info *d = &s->dev.info;
  for (unsigned k = 0; k < s->gen.kernel_count; ++k) {
    const struct tb_kernel_spec *spec = &s->gen.kernels[k];
    if (!spec->cooperative) {
      continue;
    }
    unsigned long long per_block = (unsigned long long)spec->static_shared_bytes +
                                   spec->dynamic_shared_bytes + TB_SHARED_RESERVED_PER_BLOCK;
    unsigned long long per_sm = (unsigned long long)d->max_shared_per_multiprocessor / per_block;
    if (spec->blocks > per_sm * (unsigned long long)d->multiprocessors) {
      return tb_fail(err, TB_ERR_UNAVAILABLE,
                     "capability: %s needs its %llu blocks resident at once, the device holds %llu "
                     "(%llu of %llu B of shared memory on each of %d multiprocessors)",
                     spec->name, spec->blocks, per_sm * (unsigned long long)d->multiprocessors,
                     per_sm, per_block, d->multiprocessors);
    }
  }
  return TB_OK;
}

/* Refuses a case the device cannot run, before anything is timed. */
static enum tb_status check_contract(const struct native_state *s, struct tb_error *err) {
  const struct tb_generated *g = &s->gen;
  const struct tb_device_info *d = &s->dev.info;
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
  return check_residency(s, err);
}

static enum tb_status set_attribute(struct native_state *s, unsigned k, CUfunction_attribute attr,
                                    int value, const char *what, struct tb_error *err) {
  CUresult rc = s->dev.cu->cuFuncSetAttribute(s->functions[k], attr, value);
  if (rc != CUDA_SUCCESS) {
    char text[96];
    snprintf(text, sizeof text, "cuFuncSetAttribute (%s)", what);
    return tb_cuda_fail(err, text, rc);
  }
  return TB_OK;
}

/* Functions of the module and their resource use; a kernel whose registers
 * do not allow its block size is refused here, before timing. */
static enum tb_status bind_functions(struct native_state *s, struct tb_error *err) {
  for (unsigned k = 0; k < s->gen.kernel_count; ++k) {
    CUresult rc =
        s->dev.cu->cuModuleGetFunction(&s->functions[k], s->module->module, s->gen.kernels[k].name);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuModuleGetFunction", rc);
    }
    const struct tb_kernel_spec *spec = &s->gen.kernels[k];
    /* what the kernel asks of its launches: dynamic shared memory beyond
     * 48 KiB, a carveout, a cluster past the portable 8 blocks */
    enum tb_status st = TB_OK;
    if (spec->dynamic_shared_bytes > 0) {
      st = set_attribute(s, k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                         (int)spec->dynamic_shared_bytes, "dynamic shared memory", err);
    }
    if (st == TB_OK && spec->shared_carveout_percent > 0) {
      st = set_attribute(s, k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                         (int)spec->shared_carveout_percent, "shared memory carveout", err);
    }
    if (st == TB_OK && spec->cluster_blocks > 8) {
      st = set_attribute(s, k, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1,
                         "non-portable cluster size", err);
    }
    if (st != TB_OK) {
      return st;
    }
    int max_threads = 0;
    s->dev.cu->cuFuncGetAttribute(&s->registers[k], CU_FUNC_ATTRIBUTE_NUM_REGS, s->functions[k]);
    s->dev.cu->cuFuncGetAttribute(&s->local_bytes[k], CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                  s->functions[k]);
    s->dev.cu->cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
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

/* The planner's rule for device 0: its limits, its multiprocessors, and
 * wgmma where the compute capability is exactly 9.0 (sm_90a's). */
static enum tb_status native_plan(const struct tb_provider *p, const struct tb_case *c,
                                  struct tb_exec_plan *plan, struct tb_error *err) {
  const struct native_state *s = p->state;
  const struct tb_device_info *info = &s->dev.info;
  struct tb_plan_target target = {
      .limits = tb_device_limits_of(info),
      .plans_gemm = true,
      .gemm = {(unsigned)info->multiprocessors, info->cc_major == 9 && info->cc_minor == 0,
               s->dev.cu->cuTensorMapEncodeTiled != NULL},
  };
  return tb_plan_case(c, &target, plan, err);
}

/* The kernels of the plan; every native case has one. */
static enum tb_status generate(const struct tb_case *c, const struct tb_exec_plan *plan,
                               struct tb_generated *gen, struct tb_error *err) {
  switch (plan->kind) {
  case TB_PLAN_GEMM: return tb_codegen_gemm(&plan->as.gemm, c, gen, err);
  case TB_PLAN_REDUCTION: return tb_codegen_reduction(&plan->as.reduction, c, gen, err);
  case TB_PLAN_ELEMENTWISE: return tb_codegen_elementwise(&plan->as.elementwise, c, gen, err);
  case TB_PLAN_NONE: break;
  }
  return tb_fail(err, TB_ERR_RUN, "the native CUDA provider has no plan for %s", c->op->name);
}

static enum tb_status native_prepare(struct tb_provider *p, const struct tb_case *c,
                                     const struct tb_case_data *data,
                                     const struct tb_exec_plan *plan, struct tb_error *err) {
  struct native_state *s = p->state;
  s->dev.cu->cuCtxSetCurrent(s->dev.context);
  if (generate(c, plan, &s->gen, err) != TB_OK || check_contract(s, err) != TB_OK) {
    return err->status;
  }
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d%d%s", s->dev.info.cc_major, s->dev.info.cc_minor,
           s->gen.arch_specific ? "a" : "");
  if (tb_module_get(s->dev.cu, &s->modules, &s->gen, arch, &s->module, &s->cache_hit, err) !=
          TB_OK ||
      bind_functions(s, err) != TB_OK) {
    return err->status;
  }
  if (tb_cuda_device_load_case(&s->dev, c, data, s->gen.workspace_floats, err) != TB_OK) {
    return err->status;
  }
  return tb_tensor_maps_encode(&s->dev, &s->gen, &s->maps, err);
}

/* One call: every kernel of the plan, on the next buffer set. */
static CUresult launch_one(struct native_state *s) {
  struct tb_case_operands o = tb_cuda_device_next_operands(&s->dev);
  /* the tensor maps follow the uniform arguments (a kernel without them
   * takes the first six) */
  CUtensorMap *maps = tb_tensor_maps_of_set(&s->maps, o.set);
  void *args[] = {&o.x,   &o.y,         &o.weight, &o.bias,
                  &o.out, &o.workspace, maps,      maps != NULL ? maps + 1 : NULL};
  for (unsigned k = 0; k < s->gen.kernel_count; ++k) {
    const struct tb_kernel_spec *spec = &s->gen.kernels[k];
    CUresult rc =
        spec->cooperative
            ? s->dev.cu->cuLaunchCooperativeKernel(s->functions[k], (unsigned)spec->blocks, 1, 1,
                                                   spec->threads_per_block, 1, 1,
                                                   spec->dynamic_shared_bytes, s->dev.stream, args)
            : s->dev.cu->cuLaunchKernel(s->functions[k], (unsigned)spec->blocks, 1, 1,
                                        spec->threads_per_block, 1, 1, spec->dynamic_shared_bytes,
                                        s->dev.stream, args, NULL);
    if (rc != CUDA_SUCCESS) {
      return rc;
    }
  }
  return CUDA_SUCCESS;
}

static enum tb_status native_launch(struct tb_provider *p, unsigned long calls,
                                    struct tb_error *err) {
  struct native_state *s = p->state;
  for (unsigned long i = 0; i < calls; ++i) {
    CUresult rc = launch_one(s);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuLaunchKernel", rc);
    }
  }
  return TB_OK;
}

static unsigned native_launches_per_call(const struct tb_provider *p) {
  const struct native_state *s = p->state;
  return s->gen.kernel_count;
}

static void kernel_facts(const struct native_state *s, unsigned k, struct tb_kernel_facts *f) {
  const struct tb_kernel_spec *spec = &s->gen.kernels[k];
  snprintf(f->name, sizeof f->name, "%s", spec->name);
  f->threads_per_block = spec->threads_per_block;
  f->blocks = spec->blocks;
  f->static_shared_bytes = spec->static_shared_bytes;
  f->dynamic_shared_bytes = spec->dynamic_shared_bytes;
  f->registers = s->registers[k];
  f->local_bytes = s->local_bytes[k];
}

static void native_details(const struct tb_provider *p, struct tb_provider_details *out) {
  const struct native_state *s = p->state;
  memset(out, 0, sizeof *out);
  if (s->gen.source == NULL) {
    return; /* nothing generated: TB_DETAILS_NONE */
  }
  out->kind = TB_DETAILS_CUDA_NATIVE;
  struct tb_cuda_native_details *d = &out->as.cuda;
  snprintf(d->source_sha256, sizeof d->source_sha256, "%s", s->gen.sha256);
  d->barrier_sites = s->gen.barrier_sites;
  d->kernel_count = s->gen.kernel_count;
  for (unsigned k = 0; k < s->gen.kernel_count; ++k) {
    kernel_facts(s, k, &d->kernels[k]);
  }
  d->contract = (struct tb_capability_contract){
      .min_cc_major = s->gen.min_cc_major,
      .min_cc_minor = s->gen.min_cc_minor,
      .arch_specific = s->gen.arch_specific,
      .threads_per_block = s->gen.max_threads_per_block,
      .static_shared_bytes = s->gen.max_static_shared_bytes,
      .dynamic_shared_bytes = s->gen.max_dynamic_shared_bytes,
  };
  d->module_cache_hit = s->cache_hit != 0;
  d->compiled = s->module != NULL;
  if (s->module != NULL) {
    d->compile = s->module->compile;
  }
  tb_cuda_device_buffer_facts(&s->dev, &d->buffers);
  snprintf(d->device, sizeof d->device, "%s", s->dev.info.name);
}

static const char *native_source(const struct tb_provider *p, const char **sha256) {
  const struct native_state *s = p->state;
  *sha256 = s->gen.source ? s->gen.sha256 : NULL;
  return s->gen.source;
}

static void native_release(struct tb_provider *p) {
  struct native_state *s = p->state;
  tb_cuda_device_unload_case(&s->dev);
  tb_tensor_maps_free(&s->maps);
  tb_generated_free(&s->gen);
  s->module = NULL;
}

static void native_destroy(struct tb_provider *p) {
  struct native_state *s = p->state;
  native_release(p);
  if (s->dev.cu != NULL) {
    tb_module_cache_clear(s->dev.cu, &s->modules);
  }
  tb_cuda_device_close(&s->dev);
  free(s);
  free(p);
}

static const struct tb_provider_ops native_ops = {
    .plan = native_plan,
    .prepare = native_prepare,
    .launch = native_launch,
    TB_CUDA_DEVICE_OPS,
    .launches_per_call = native_launches_per_call,
    .details = native_details,
    .source = native_source,
    .release = native_release,
    .destroy = native_destroy,
};

enum tb_status tb_cuda_native_provider_create(struct tb_provider **out, struct tb_error *err) {
  *out = NULL;
  struct native_state *s = calloc(1, sizeof *s);
  struct tb_provider *p = s ? tb_cuda_provider_new(&native_ops, "native", true, s) : NULL;
  if (p == NULL) {
    free(s);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating the CUDA provider");
  }
  if (tb_cuda_device_open(&s->dev, err) != TB_OK) {
    native_destroy(p);
    return err->status;
  }
  *out = p;
  return TB_OK;
}
