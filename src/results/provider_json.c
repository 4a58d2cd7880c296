#include "results/provider_json.h"

#include <stdio.h>

#include "results/json_number.h"

static json_t *buffers_json(const struct tb_buffer_facts *b) {
  return json_pack("{s:s, s:I, s:I, s:I, s:I, s:s}", "policy", b->policy, "sets",
                   (json_int_t)b->sets, "bytes_per_set", (json_int_t)b->bytes_per_set,
                   "total_bytes", (json_int_t)b->total_bytes, "l2_bytes", (json_int_t)b->l2_bytes,
                   "state", b->state);
}

static json_t *cpu_json(const struct tb_cpu_details *d) {
  return json_pack("{s:s, s:i}", "executes", d->executes, "lanes", d->lanes);
}

static json_t *kernel_json(const struct tb_kernel_facts *k) {
  return json_pack("{s:s, s:i, s:I, s:i, s:i, s:i, s:i}", "name", k->name, "threads_per_block",
                   k->threads_per_block, "blocks", (json_int_t)k->blocks, "static_shared_bytes",
                   k->static_shared_bytes, "dynamic_shared_bytes", k->dynamic_shared_bytes,
                   "registers", k->registers, "local_bytes", k->local_bytes);
}

static json_t *contract_json(const struct tb_capability_contract *c) {
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", c->min_cc_major, c->min_cc_minor);
  return json_pack("{s:s, s:b, s:i, s:i, s:i}", "min_compute_capability", cc, "arch_specific",
                   c->arch_specific, "threads_per_block", c->threads_per_block,
                   "static_shared_bytes", c->static_shared_bytes, "dynamic_shared_bytes",
                   c->dynamic_shared_bytes);
}

static json_t *compile_json(const struct tb_compile_facts *c) {
  return json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:I, s:i, s:s}", "compiler", "nvrtc",
                   "nvrtc_version", c->nvrtc_version, "options", c->options, "compile_ms",
                   tb_json_number(c->compile_ms), "load_ms", tb_json_number(c->load_ms),
                   "spill_store_bytes", (json_int_t)c->spill_store_bytes, "spill_load_bytes",
                   (json_int_t)c->spill_load_bytes, "stack_frame_bytes",
                   (json_int_t)c->stack_frame_bytes, "max_registers", c->max_registers,
                   "nvrtc_path", c->nvrtc_path);
}

static json_t *cuda_native_json(const struct tb_cuda_native_details *d) {
  json_t *kernels = json_array();
  for (unsigned k = 0; k < d->kernel_count; ++k) {
    json_array_append_new(kernels, kernel_json(&d->kernels[k]));
  }
  return json_pack("{s:s, s:i, s:o, s:o, s:b, s:o, s:o, s:s}", "source_sha256", d->source_sha256,
                   "barrier_sites", d->barrier_sites, "kernels", kernels, "capability_contract",
                   contract_json(&d->contract), "module_cache_hit", d->module_cache_hit, "compile",
                   d->compiled ? compile_json(&d->compile) : json_null(), "buffers",
                   buffers_json(&d->buffers), "device", d->device);
}

static json_t *cublas_json(const struct tb_cublas_details *d) {
  json_t *library =
      json_pack("{s:s, s:i, s:s, s:s, s:s}", "library", d->library, "version", d->version, "call",
                d->call, "math_mode", d->math_mode, "precision", d->precision);
  if (d->has_tf32_override) { /* left out when unset, as the environment has it */
    json_object_set_new(library, "NVIDIA_TF32_OVERRIDE", json_string(d->tf32_override));
  }
  return json_pack("{s:o, s:o, s:s}", "cublas", library, "buffers", buffers_json(&d->buffers),
                   "device", d->device);
}

/* Worker facts keep the worker's own shape: a field it left out stays out,
 * one it sent as null is null. */
static void set_text(json_t *object, const char *key, const struct tb_text_fact *f) {
  if (f->state != TB_FACT_ABSENT) {
    json_object_set_new(object, key, f->state == TB_FACT_SET ? json_string(f->text) : json_null());
  }
}

static void set_integer(json_t *object, const char *key, const struct tb_integer_fact *f) {
  if (f->state != TB_FACT_ABSENT) {
    json_object_set_new(object, key,
                        f->state == TB_FACT_SET ? json_integer(f->value) : json_null());
  }
}

static void set_boolean(json_t *object, const char *key, const struct tb_boolean_fact *f) {
  if (f->state != TB_FACT_ABSENT) {
    json_object_set_new(object, key,
                        f->state == TB_FACT_SET ? json_boolean(f->value) : json_null());
  }
}

static json_t *thread_env_json(const struct tb_torch_worker_facts *w) {
  json_t *env = json_object();
  for (unsigned i = 0; i < w->env_count; ++i) {
    set_text(env, w->thread_env[i].name, &w->thread_env[i].value);
  }
  return env;
}

static json_t *worker_json(const struct tb_torch_worker_facts *w) {
  json_t *j = json_object();
  set_text(j, "torch", &w->torch);
  set_boolean(j, "cuda", &w->cuda);
  set_text(j, "cuda_version", &w->cuda_version);
  set_integer(j, "cudnn", &w->cudnn);
  set_text(j, "device", &w->device);
  set_integer(j, "threads", &w->threads);
  set_integer(j, "interop_threads", &w->interop_threads);
  set_text(j, "config", &w->config);
  set_boolean(j, "timing", &w->timing);
  if (w->has_thread_env) {
    json_object_set_new(j, "thread_env", thread_env_json(w));
  }
  return j;
}

static json_t *torch_json(const struct tb_torch_details *d) {
  json_t *j = json_pack(
      "{s:o, s:o, s:b}", "worker", d->has_worker ? worker_json(&d->worker) : json_null(), "buffers",
      d->has_buffers ? buffers_json(&d->buffers) : json_null(), "torch_compile", d->torch_compile);
  set_text(j, "implementation", &d->implementation);
  json_object_set_new(j, "compile_ms",
                      d->compile_ms.state == TB_FACT_SET ? tb_json_number(d->compile_ms.value)
                                                         : json_null());
  if (d->has_callable) { /* user-python: beside the worker's facts, what it ran */
    const struct tb_python_callable_facts *f = &d->callable;
    json_object_set_new(j, "module_path", json_string(f->module_path));
    json_object_set_new(j, "file_name", json_string(f->file_name));
    json_object_set_new(j, "sha256", json_string(f->sha256));
    json_object_set_new(j, "function", json_string(f->function));
    json_object_set_new(j, "qualname", json_string(f->qualname));
  }
  return j;
}

/* A CUDA source kernel's compilation and launch (docs/user-kernels.md). */
static json_t *source_kernel_json(const struct tb_user_details *d) {
  return json_pack("{s:o, s:s, s:s, s:[i,i,i], s:[i,i,i], s:i}", "compile",
                   compile_json(&d->compile), "compile_log", d->compile_log, "launch", d->launch,
                   "grid", d->grid[0], d->grid[1], d->grid[2], "block", d->block[0], d->block[1],
                   d->block[2], "dynamic_shared_bytes", d->dynamic_shared_bytes);
}

static json_t *user_json(const struct tb_user_details *d) {
  json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:i, s:b, s:b, s:s}", "library", d->library,
                        "file_name", d->file_name, "sha256", d->sha256, "symbol", d->symbol,
                        "abi_version", d->abi_version, "abi_declared", d->abi_declared,
                        "accepts_strided_rows", d->accepts_strided, "description", d->description);
  if (d->has_buffers) { /* the CUDA backend's buffer sets, as the other CUDA providers' */
    json_object_set_new(j, "buffers", buffers_json(&d->buffers));
    json_object_set_new(j, "device", json_string(d->device));
  }
  if (d->from_source) {
    json_object_set_new(j, "source", source_kernel_json(d));
  }
  return j;
}

json_t *tb_provider_details_to_json(const struct tb_provider_details *d) {
  switch (d->kind) {
  case TB_DETAILS_CPU: return cpu_json(&d->as.cpu);
  case TB_DETAILS_CUDA_NATIVE: return cuda_native_json(&d->as.cuda);
  case TB_DETAILS_CUBLAS: return cublas_json(&d->as.cublas);
  case TB_DETAILS_TORCH: return torch_json(&d->as.torch);
  case TB_DETAILS_USER: return user_json(&d->as.user);
  case TB_DETAILS_NONE: break;
  }
  return json_null();
}
