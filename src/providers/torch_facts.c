#include "providers/torch_facts.h"

#include <stdio.h>
#include <string.h>

static struct tb_text_fact text_of(const json_t *object, const char *key) {
  const json_t *v = json_object_get(object, key);
  if (v == NULL) {
    return (struct tb_text_fact){TB_FACT_ABSENT, NULL};
  }
  return tb_text_fact_of(json_is_string(v) ? json_string_value(v) : NULL);
}

static struct tb_integer_fact integer_of(const json_t *object, const char *key) {
  const json_t *v = json_object_get(object, key);
  if (v == NULL) {
    return (struct tb_integer_fact){TB_FACT_ABSENT, 0};
  }
  return json_is_integer(v) ? (struct tb_integer_fact){TB_FACT_SET, json_integer_value(v)}
                            : (struct tb_integer_fact){TB_FACT_NULL, 0};
}

static struct tb_number_fact number_of(const json_t *object, const char *key) {
  const json_t *v = json_object_get(object, key);
  if (v == NULL) {
    return (struct tb_number_fact){TB_FACT_ABSENT, 0};
  }
  return json_is_number(v) ? (struct tb_number_fact){TB_FACT_SET, json_number_value(v)}
                           : (struct tb_number_fact){TB_FACT_NULL, 0};
}

static struct tb_boolean_fact boolean_of(const json_t *object, const char *key) {
  const json_t *v = json_object_get(object, key);
  if (v == NULL) {
    return (struct tb_boolean_fact){TB_FACT_ABSENT, false};
  }
  return json_is_boolean(v) ? (struct tb_boolean_fact){TB_FACT_SET, json_is_true(v)}
                            : (struct tb_boolean_fact){TB_FACT_NULL, false};
}

static void read_thread_env(const json_t *hello, struct tb_torch_worker_facts *w) {
  const json_t *env = json_object_get(hello, "thread_env");
  w->has_thread_env = json_is_object(env);
  const char *name;
  const json_t *value;
  json_object_foreach((json_t *)env, name, value) {
    if (w->env_count == TB_DETAILS_MAX_ENV) {
      break;
    }
    struct tb_env_fact *f = &w->thread_env[w->env_count++];
    f->name = strdup(name);
    f->value = tb_text_fact_of(json_is_string(value) ? json_string_value(value) : NULL);
  }
}

static void read_worker(const json_t *hello, struct tb_torch_worker_facts *w) {
  w->torch = text_of(hello, "torch");
  w->cuda_version = text_of(hello, "cuda_version");
  w->device = text_of(hello, "device");
  w->config = text_of(hello, "config");
  w->cuda = boolean_of(hello, "cuda");
  w->timing = boolean_of(hello, "timing");
  w->cudnn = integer_of(hello, "cudnn");
  w->threads = integer_of(hello, "threads");
  w->interop_threads = integer_of(hello, "interop_threads");
  read_thread_env(hello, w);
}

static void copy_text(char *dst, size_t size, const json_t *v) {
  snprintf(dst, size, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static void read_buffers(const json_t *b, struct tb_buffer_facts *f) {
  copy_text(f->policy, sizeof f->policy, json_object_get(b, "policy"));
  copy_text(f->state, sizeof f->state, json_object_get(b, "state"));
  f->sets = json_integer_value(json_object_get(b, "sets"));
  f->bytes_per_set = json_integer_value(json_object_get(b, "bytes_per_set"));
  f->total_bytes = json_integer_value(json_object_get(b, "total_bytes"));
  f->l2_bytes = json_integer_value(json_object_get(b, "l2_bytes"));
}

void tb_torch_details_read(const json_t *hello, const json_t *prepared, bool torch_compile,
                           struct tb_provider_details *out) {
  memset(out, 0, sizeof *out);
  out->kind = TB_DETAILS_TORCH;
  struct tb_torch_details *t = &out->as.torch;
  t->torch_compile = torch_compile;
  t->has_worker = hello != NULL;
  if (hello != NULL) {
    read_worker(hello, &t->worker);
  }
  /* without a prepare reply these are null, as the worker never said */
  t->implementation =
      prepared ? text_of(prepared, "implementation") : (struct tb_text_fact){TB_FACT_NULL, NULL};
  t->compile_ms =
      prepared ? number_of(prepared, "compile_ms") : (struct tb_number_fact){TB_FACT_NULL, 0};
  const json_t *buffers = prepared ? json_object_get(prepared, "buffers") : NULL;
  t->has_buffers = json_is_object(buffers);
  if (t->has_buffers) {
    read_buffers(buffers, &t->buffers);
  }
}

void tb_torch_callable_read(const json_t *loaded, struct tb_provider_details *out) {
  struct tb_torch_details *t = &out->as.torch;
  t->has_callable = loaded != NULL;
  if (loaded == NULL) {
    return;
  }
  struct tb_python_callable_facts *f = &t->callable;
  copy_text(f->module_path, sizeof f->module_path, json_object_get(loaded, "module_path"));
  copy_text(f->file_name, sizeof f->file_name, json_object_get(loaded, "file_name"));
  copy_text(f->sha256, sizeof f->sha256, json_object_get(loaded, "sha256"));
  copy_text(f->function, sizeof f->function, json_object_get(loaded, "function"));
  copy_text(f->qualname, sizeof f->qualname, json_object_get(loaded, "qualname"));
}
