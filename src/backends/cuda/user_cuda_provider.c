#include "backends/cuda/user_cuda_provider.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_device.h"
#include "backends/user_library.h"

/* The probe's capacity per call: the library may launch several kernels. */
#define USER_LAUNCHES_PER_CALL 16

struct user_cuda_state {
  struct tb_cuda_device dev; /* first: the shared device ops take the state as one */
  struct tb_user_library lib;
  tb_user_kernel_fn fn;
  char symbol[64];
  struct tb_kernel_args args; /* shared by every call; the pointers set per call */
};

static enum tb_status user_cuda_plan(const struct tb_provider *p, const struct tb_case *c,
                                     struct tb_exec_plan *plan, struct tb_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->kind = TB_PLAN_NONE; /* the user's code decides its own launch */
  return TB_OK;
}

static enum tb_status user_cuda_prepare(struct tb_provider *p, const struct tb_case *c,
                                        const struct tb_case_data *data,
                                        const struct tb_exec_plan *plan, struct tb_error *err) {
  struct user_cuda_state *s = p->state;
  s->dev.cu->cuCtxSetCurrent(s->dev.context);
  if (tb_user_library_accepts(&s->lib, c, data, err) != TB_OK) {
    return err->status;
  }
  s->fn = s->lib.fns[c->op->op];
  snprintf(s->symbol, sizeof s->symbol, "tb_user_%s", c->op->name);
  tb_user_kernel_args_init(c, data, &s->args);
  s->args.stream = s->dev.stream;
  return tb_cuda_device_load_case(&s->dev, c, data, 0, err);
}

static const float *device_floats(CUdeviceptr ptr) {
  return (const float *)(uintptr_t)ptr;
}

/* Each call on the next buffer set, enqueued by the library on the stream. */
static enum tb_status user_cuda_launch(struct tb_provider *p, unsigned long calls,
                                       struct tb_error *err) {
  struct user_cuda_state *s = p->state;
  for (unsigned long i = 0; i < calls; ++i) {
    struct tb_case_operands o = tb_cuda_device_next_operands(&s->dev);
    s->args.x = device_floats(o.x);
    s->args.y = o.y ? device_floats(o.y) : NULL;
    s->args.weight = o.weight ? device_floats(o.weight) : NULL;
    s->args.bias = o.bias ? device_floats(o.bias) : NULL;
    s->args.out = (float *)(uintptr_t)o.out;
    int rc = s->fn(&s->args);
    if (rc != 0) {
      return tb_fail(err, TB_ERR_RUN, "%s returned %d (call %lu of a batch of %lu)", s->symbol, rc,
                     i + 1, calls);
    }
  }
  return TB_OK;
}

static unsigned user_cuda_launches_per_call(const struct tb_provider *p) {
  return USER_LAUNCHES_PER_CALL;
}

static void user_cuda_details(const struct tb_provider *p, struct tb_provider_details *out) {
  const struct user_cuda_state *s = p->state;
  tb_user_library_details(&s->lib, s->symbol, out);
  out->as.user.has_buffers = true;
  tb_cuda_device_buffer_facts(&s->dev, &out->as.user.buffers);
  snprintf(out->as.user.device, sizeof out->as.user.device, "%s", s->dev.info.name);
}

static void user_cuda_release(struct tb_provider *p) {
  struct user_cuda_state *s = p->state;
  tb_cuda_device_unload_case(&s->dev);
  s->fn = NULL;
  s->symbol[0] = '\0';
}

static void user_cuda_destroy(struct tb_provider *p) {
  struct user_cuda_state *s = p->state;
  user_cuda_release(p);
  tb_cuda_device_close(&s->dev); /* the library's work on the stream is finished */
  tb_user_library_close(&s->lib);
  free(s);
  free(p);
}

static const struct tb_provider_ops user_cuda_ops = {
    .plan = user_cuda_plan,
    .prepare = user_cuda_prepare,
    .launch = user_cuda_launch,
    TB_CUDA_DEVICE_OPS,
    .launches_per_call = user_cuda_launches_per_call,
    .details = user_cuda_details,
    .source = tb_cuda_device_op_no_source,
    .release = user_cuda_release,
    .destroy = user_cuda_destroy,
};

enum tb_status tb_cuda_user_provider_create(const char *library, struct tb_provider **out,
                                            struct tb_error *err) {
  *out = NULL;
  struct user_cuda_state *s = calloc(1, sizeof *s);
  struct tb_provider *p = s ? tb_cuda_provider_new(&user_cuda_ops, "user", false, s) : NULL;
  if (p == NULL) {
    free(s);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating the user provider");
  }
  /* the device first: a library using the CUDA runtime finds the primary
   * context the device base retained */
  if (tb_cuda_device_open(&s->dev, err) != TB_OK ||
      tb_user_library_open(library, &s->lib, err) != TB_OK) {
    user_cuda_destroy(p);
    return err->status;
  }
  *out = p;
  return TB_OK;
}
