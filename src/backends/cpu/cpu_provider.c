#include "backends/cpu/cpu_provider.h"

#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "oracle/validate.h"

struct cpu_state {
  const struct tb_case_data *data; /* borrowed: the host inputs are the "device" inputs */
  float *out;
  size_t out_count;
};

static enum tb_status cpu_prepare(struct tb_provider *p, const struct tb_case_data *data,
                                  struct tb_error *err) {
  struct cpu_state *s = p->state;
  s->data = data;
  s->out_count = data->output.storage_elems;
  s->out = malloc(s->out_count * sizeof(float));
  if (s->out == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for the CPU backend's output");
  }
  tb_poison(s->out, s->out_count);
  return TB_OK;
}

static enum tb_status cpu_launch(struct tb_provider *p, unsigned long calls, struct tb_error *err) {
  struct cpu_state *s = p->state;
  for (unsigned long i = 0; i < calls; ++i) {
    tb_cpu_run_case(s->data, s->out);
  }
  return TB_OK;
}

static enum tb_status cpu_synchronize(struct tb_provider *p, struct tb_error *err) {
  return TB_OK;
}

static enum tb_status cpu_poison(struct tb_provider *p, struct tb_error *err) {
  struct cpu_state *s = p->state;
  tb_poison(s->out, s->out_count);
  return TB_OK;
}

static enum tb_status cpu_read_output(struct tb_provider *p, float *dst, size_t count,
                                      struct tb_error *err) {
  struct cpu_state *s = p->state;
  if (count != s->out_count) {
    return tb_fail(err, TB_ERR_RUN, "output has %zu elements, %zu were asked for", s->out_count,
                   count);
  }
  memcpy(dst, s->out, count * sizeof(float));
  return TB_OK;
}

static void cpu_release(struct tb_provider *p) {
  struct cpu_state *s = p->state;
  free(s->out);
  memset(s, 0, sizeof *s);
}

static void cpu_destroy(struct tb_provider *p) {
  cpu_release(p);
  free(p->state);
  free(p);
}

static const struct tb_provider_ops cpu_ops = {
    cpu_prepare, cpu_launch, cpu_synchronize, cpu_poison, cpu_read_output, cpu_release, cpu_destroy,
};

enum tb_status tb_cpu_native_provider_create(struct tb_provider **out, struct tb_error *err) {
  struct tb_provider *p = calloc(1, sizeof *p);
  struct cpu_state *s = calloc(1, sizeof *s);
  if (p == NULL || s == NULL) {
    free(p);
    free(s);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating the CPU provider");
  }
  p->ops = &cpu_ops;
  p->name = "native";
  p->backend = "cpu";
  p->output_allocation = "preallocated_out";
  p->state = s;
  *out = p;
  return TB_OK;
}
