#include "backends/cpu/cpu_provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_output.h"
#include "inputs/guard.h"
#include "inputs/poison.h"
#include "planner/exec_plan.h"

struct cpu_state {
  /* first (cpu_output.h); between guard zones, for the defences (method §8) */
  struct tb_guarded out;
  const struct tb_case_data *data; /* borrowed: the host inputs are the "device" inputs */
  unsigned lanes;
  enum tb_realization realization; /* gemm */
  float *scratch;                  /* one float per lane */
};

/* Lanes a plan reduces a row with: a register plan's width, a streaming
 * block's threads, or every thread of every chunk of a split row. */
static unsigned plan_lanes(const struct tb_plan *plan) {
  switch (plan->mapping) {
  case TB_MAPPING_REGISTER_ROWS: return plan->selected.width;
  case TB_MAPPING_BLOCK_STREAMING: return plan->stream.threads_per_block;
  case TB_MAPPING_SUBWARP_ROWS: return plan->subwarp.lanes;
  default: return plan->stream.threads_per_block * plan->stream.blocks_per_row;
  }
}

/* The planner's default device limits (the CPU has none of its own); gemm
 * runs as plain loops, without a tiling to plan. */
static enum tb_status cpu_plan(const struct tb_provider *p, const struct tb_case *c,
                               struct tb_exec_plan *plan, struct tb_error *err) {
  struct tb_plan_target target = {.limits = tb_device_limits_default(), .plans_gemm = false};
  return tb_plan_case(c, &target, plan, err);
}

static enum tb_status cpu_prepare(struct tb_provider *p, const struct tb_case *c,
                                  const struct tb_case_data *data, const struct tb_exec_plan *plan,
                                  struct tb_error *err) {
  struct cpu_state *s = p->state;
  s->data = data;
  s->realization = c->realization;
  s->lanes = plan->kind == TB_PLAN_REDUCTION ? plan_lanes(&plan->as.reduction) : TB_CPU_MIN_LANES;
  s->scratch = malloc(s->lanes * sizeof(float));
  if (!tb_guarded_alloc(&s->out, data->output.storage_elems) || s->scratch == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for the CPU backend's output");
  }
  tb_poison(s->out.data, s->out.count);
  return TB_OK;
}

static enum tb_status cpu_launch(struct tb_provider *p, unsigned long calls, struct tb_error *err) {
  struct cpu_state *s = p->state;
  for (unsigned long i = 0; i < calls; ++i) {
    tb_cpu_run_case(s->data, s->realization, s->lanes, s->scratch, s->out.data);
  }
  return TB_OK;
}

static enum tb_status cpu_synchronize(struct tb_provider *p, struct tb_error *err) {
  return TB_OK;
}

static enum tb_status cpu_poison(struct tb_provider *p, struct tb_error *err) {
  struct cpu_state *s = p->state;
  tb_poison(s->out.data, s->out.count);
  return TB_OK;
}

/* The inputs are the case's host tensors themselves (borrowed): reading
 * them back shows whether a call wrote into them. */
static enum tb_status cpu_read_input(struct tb_provider *p, size_t index, float *dst, size_t count,
                                     struct tb_error *err) {
  struct cpu_state *s = p->state;
  if (index >= s->data->input_count || count != s->data->inputs[index].storage_elems) {
    return tb_fail(err, TB_ERR_RUN, "no input %zu of %zu elements", index, count);
  }
  memcpy(dst, s->data->inputs[index].storage, count * sizeof(float));
  return TB_OK;
}

/* Only the output is the provider's own allocation, so only it is guarded. */
static enum tb_status cpu_check_guards(struct tb_provider *p, struct tb_guard_report *r,
                                       struct tb_error *err) {
  struct cpu_state *s = p->state;
  long long offset = 0;
  memset(r, 0, sizeof *r);
  r->buffers = 1;
  r->intact = tb_guarded_intact(&s->out, &offset);
  if (!r->intact) {
    snprintf(r->damaged, sizeof r->damaged, "around out: element %lld", offset);
  }
  return TB_OK;
}

static enum tb_status cpu_load_inputs(struct tb_provider *p, const struct tb_case_data *data,
                                      struct tb_error *err) {
  struct cpu_state *s = p->state;
  s->data = data; /* borrowed like the first: the caller keeps it until release */
  return TB_OK;
}

static void cpu_release(struct tb_provider *p) {
  struct cpu_state *s = p->state;
  tb_guarded_free(&s->out);
  free(s->scratch);
  memset(s, 0, sizeof *s);
}

static void cpu_destroy(struct tb_provider *p) {
  cpu_release(p);
  free(p->state);
  free(p);
}

static void *cpu_device_stream(const struct tb_provider *p) {
  return NULL;
}

static bool cpu_has_device(const struct tb_provider *p) {
  return false;
}

static unsigned cpu_launches_per_call(const struct tb_provider *p) {
  return 1;
}

static void cpu_details(const struct tb_provider *p, struct tb_provider_details *out) {
  const struct cpu_state *s = p->state;
  memset(out, 0, sizeof *out);
  out->kind = TB_DETAILS_CPU;
  out->as.cpu.executes = "host fp32 loops following the plan's lane count";
  out->as.cpu.lanes = s->lanes;
}

static const char *cpu_source(const struct tb_provider *p, const char **sha256) {
  *sha256 = NULL;
  return NULL;
}

static const struct tb_provider_ops cpu_ops = {
    .plan = cpu_plan,
    .prepare = cpu_prepare,
    .launch = cpu_launch,
    .synchronize = cpu_synchronize,
    .poison_output = cpu_poison,
    TB_CPU_OUTPUT_OPS,
    .device_stream = cpu_device_stream,
    .has_device = cpu_has_device,
    .read_input = cpu_read_input,
    .check_guards = cpu_check_guards,
    .load_inputs = cpu_load_inputs,
    .launches_per_call = cpu_launches_per_call,
    .details = cpu_details,
    .source = cpu_source,
    .release = cpu_release,
    .destroy = cpu_destroy,
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
  p->plans_reductions = true;
  p->state = s;
  *out = p;
  return TB_OK;
}
