#include "backends/cpu/user_provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/user_library.h"
#include "backends/cpu/cpu_output.h"
#include "inputs/guard.h"
#include "inputs/poison.h"

struct user_state {
  struct tb_guarded out; /* first: cpu_output.h */
  struct tb_user_library lib;
  tb_user_kernel_fn fn; /* the prepared case's operation */
  char symbol[64];
  struct tb_guarded inputs[TB_MAX_INPUTS]; /* whole storage, padding included */
  size_t input_count;
  struct tb_kernel_args args;
};

static enum tb_status user_plan(const struct tb_provider *p, const struct tb_case *c,
                                struct tb_exec_plan *plan, struct tb_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->kind = TB_PLAN_NONE; /* the user's code decides its own mapping */
  return TB_OK;
}

/* Copies each input's storage (padding included) into its guarded buffer. */
static enum tb_status copy_inputs(struct user_state *s, const struct tb_case_data *data,
                                  struct tb_error *err) {
  if (data->input_count != s->input_count) {
    return tb_fail(err, TB_ERR_RUN, "the case has %zu inputs, %zu were prepared", data->input_count,
                   s->input_count);
  }
  for (size_t i = 0; i < data->input_count; ++i) {
    if (data->inputs[i].storage_elems != s->inputs[i].count) {
      return tb_fail(err, TB_ERR_RUN, "input %s changed size", data->inputs[i].role);
    }
    memcpy(s->inputs[i].data, data->inputs[i].storage, s->inputs[i].count * sizeof(float));
  }
  return TB_OK;
}

/* The guarded copy of input `i` at the element [0,0] of its view. */
static const float *first_element(const struct user_state *s, const struct tb_case_data *data,
                                  size_t i) {
  return s->inputs[i].data + data->inputs[i].offset;
}

/* The arguments of every call: ABI 1's struct over the guarded copies. */
static void fill_args(struct user_state *s, const struct tb_case *c,
                      const struct tb_case_data *data) {
  struct tb_kernel_args *a = &s->args;
  tb_user_kernel_args_init(c, data, a);
  a->x = first_element(s, data, 0);
  size_t next = 1;
  if (c->op->has_second_matrix) {
    a->y = first_element(s, data, next++);
  }
  if (c->op->has_weight) {
    a->weight = first_element(s, data, next++);
  }
  if (c->op->has_bias) {
    a->bias = first_element(s, data, next++);
  }
  a->out = s->out.data;
  a->stream = NULL; /* the CPU contract: compute before returning */
}

static enum tb_status user_prepare(struct tb_provider *p, const struct tb_case *c,
                                   const struct tb_case_data *data, const struct tb_exec_plan *plan,
                                   struct tb_error *err) {
  struct user_state *s = p->state;
  if (tb_user_library_accepts(&s->lib, c, data, err) != TB_OK) {
    return err->status;
  }
  s->fn = s->lib.fns[c->op->op];
  snprintf(s->symbol, sizeof s->symbol, "tb_user_%s", c->op->name);
  s->input_count = data->input_count;
  for (size_t i = 0; i < data->input_count; ++i) {
    if (!tb_guarded_alloc(&s->inputs[i], data->inputs[i].storage_elems)) {
      return tb_fail(err, TB_ERR_SYSTEM, "out of memory for the user provider's inputs");
    }
  }
  if (!tb_guarded_alloc(&s->out, data->output.storage_elems)) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for the user provider's output");
  }
  tb_poison(s->out.data, s->out.count);
  fill_args(s, c, data);
  return copy_inputs(s, data, err);
}

static enum tb_status user_launch(struct tb_provider *p, unsigned long calls,
                                  struct tb_error *err) {
  struct user_state *s = p->state;
  for (unsigned long i = 0; i < calls; ++i) {
    int rc = s->fn(&s->args);
    if (rc != 0) {
      return tb_fail(err, TB_ERR_RUN, "%s returned %d (call %lu of a batch of %lu)", s->symbol, rc,
                     i + 1, calls);
    }
  }
  return TB_OK;
}

static enum tb_status user_synchronize(struct tb_provider *p, struct tb_error *err) {
  return TB_OK; /* the CPU contract: a call has computed when it returns */
}

static enum tb_status user_poison(struct tb_provider *p, struct tb_error *err) {
  struct user_state *s = p->state;
  tb_poison(s->out.data, s->out.count);
  return TB_OK;
}

static enum tb_status user_read_input(struct tb_provider *p, size_t index, float *dst, size_t count,
                                      struct tb_error *err) {
  struct user_state *s = p->state;
  if (index >= s->input_count || count != s->inputs[index].count) {
    return tb_fail(err, TB_ERR_RUN, "no input %zu of %zu elements", index, count);
  }
  memcpy(dst, s->inputs[index].data, count * sizeof(float));
  return TB_OK;
}

/* Records the first damaged zone of one buffer; true when intact. */
static bool check_one(const struct tb_guarded *g, const char *role, struct tb_guard_report *r) {
  long long offset = 0;
  r->buffers++;
  if (tb_guarded_intact(g, &offset)) {
    return true;
  }
  if (offset < 0) {
    snprintf(r->damaged, sizeof r->damaged, "before %s: element %lld", role, offset);
  } else {
    snprintf(r->damaged, sizeof r->damaged, "after %s: element %lld, %lld past its end", role,
             offset, offset - (long long)g->count);
  }
  return false;
}

static const char *const input_roles[] = {"input 1", "input 2", "input 3", "input 4"};

static enum tb_status user_check_guards(struct tb_provider *p, struct tb_guard_report *r,
                                        struct tb_error *err) {
  struct user_state *s = p->state;
  memset(r, 0, sizeof *r);
  r->intact = check_one(&s->out, "out", r);
  for (size_t i = 0; i < s->input_count && r->intact; ++i) {
    r->intact = check_one(&s->inputs[i], input_roles[i], r);
  }
  return TB_OK;
}

static enum tb_status user_load_inputs(struct tb_provider *p, const struct tb_case_data *data,
                                       struct tb_error *err) {
  return copy_inputs(p->state, data, err);
}

static void *user_device_stream(const struct tb_provider *p) {
  return NULL;
}

static bool user_has_device(const struct tb_provider *p) {
  return false;
}

static unsigned user_launches_per_call(const struct tb_provider *p) {
  return 1;
}

static void user_details(const struct tb_provider *p, struct tb_provider_details *out) {
  const struct user_state *s = p->state;
  tb_user_library_details(&s->lib, s->symbol, out);
}

static const char *user_source(const struct tb_provider *p, const char **sha256) {
  *sha256 = NULL;
  return NULL; /* no source: the library is identified by its digest */
}

static void user_release(struct tb_provider *p) {
  struct user_state *s = p->state;
  for (size_t i = 0; i < TB_MAX_INPUTS; ++i) {
    tb_guarded_free(&s->inputs[i]);
  }
  tb_guarded_free(&s->out);
  s->input_count = 0;
  s->fn = NULL;
  s->symbol[0] = '\0';
  memset(&s->args, 0, sizeof s->args);
}

static void user_destroy(struct tb_provider *p) {
  struct user_state *s = p->state;
  user_release(p);
  tb_user_library_close(&s->lib);
  free(s);
  free(p);
}

static const struct tb_provider_ops user_ops = {
    .plan = user_plan,
    .prepare = user_prepare,
    .launch = user_launch,
    .synchronize = user_synchronize,
    .poison_output = user_poison,
    TB_CPU_OUTPUT_OPS,
    .device_stream = user_device_stream,
    .has_device = user_has_device,
    .read_input = user_read_input,
    .check_guards = user_check_guards,
    .load_inputs = user_load_inputs,
    .launches_per_call = user_launches_per_call,
    .details = user_details,
    .source = user_source,
    .release = user_release,
    .destroy = user_destroy,
};

enum tb_status tb_cpu_user_provider_create(const char *path, struct tb_provider **out,
                                           struct tb_error *err) {
  *out = NULL;
  struct tb_provider *p = calloc(1, sizeof *p);
  struct user_state *s = calloc(1, sizeof *s);
  if (p == NULL || s == NULL) {
    free(p);
    free(s);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating the user provider");
  }
  if (tb_user_library_open(path, &s->lib, err) != TB_OK) {
    free(p);
    free(s);
    return err->status;
  }
  p->ops = &user_ops;
  p->name = "user";
  p->backend = "cpu";
  p->output_allocation = "preallocated_out";
  p->plans_reductions = false;
  p->state = s;
  *out = p;
  return TB_OK;
}
