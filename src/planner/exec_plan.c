#include "planner/exec_plan.h"

#include <string.h>

struct tb_gemm_alignment tb_gemm_operands_alignment(const struct tb_case *c) {
  size_t sa = tb_view_for(c->view.kind, c->shape.k).row_stride;
  size_t sb = tb_view_for(c->view.kind, c->shape.n).row_stride;
  bool offset = c->view.offset % 4 == 0;
  /* B's rows on 16 bytes, or B one contiguous column (a matrix-vector
   * product's vector, read 4 floats at once) */
  bool b_rows = (c->shape.n % 4 == 0 && sb % 4 == 0) || (c->shape.n == 1 && sb == 1);
  return (struct tb_gemm_alignment){c->shape.k % 4 == 0 && sa % 4 == 0 && offset, b_rows && offset};
}

static enum tb_status plan_gemm_case(const struct tb_case *c, const struct tb_plan_target *t,
                                     struct tb_exec_plan *plan, struct tb_error *err) {
  plan->kind = TB_PLAN_GEMM;
  return tb_plan_gemm(c->shape.m, c->shape.n, c->shape.k, c->realization, c->gemm_block, t->gemm,
                      tb_gemm_operands_alignment(c), &plan->as.gemm, err);
}

static enum tb_status plan_reduction_case(const struct tb_case *c, const struct tb_plan_target *t,
                                          struct tb_exec_plan *plan, struct tb_error *err) {
  plan->kind = TB_PLAN_REDUCTION;
  return tb_plan_reduction(c->op->op, c->shape.m, c->shape.n, c->variant, &t->limits, c->profile,
                           &plan->as.reduction, err);
}

enum tb_status tb_plan_case(const struct tb_case *c, const struct tb_plan_target *target,
                            struct tb_exec_plan *plan, struct tb_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->kind = TB_PLAN_NONE;
  enum tb_status status = TB_OK;
  if (c->op->is_matmul) {
    status = target->plans_gemm ? plan_gemm_case(c, target, plan, err) : TB_OK;
  } else if (c->planned) {
    status = plan_reduction_case(c, target, plan, err);
  } else if (!c->op->is_row_reduction) {
    plan->kind = TB_PLAN_ELEMENTWISE;
    tb_plan_elementwise(c->op->op, c->shape.m, c->shape.n, c->view.kind == TB_VIEW_PACKED,
                        &plan->as.elementwise);
  }
  if (status != TB_OK) {
    plan->kind = TB_PLAN_NONE; /* a refused case has no plan to record */
  }
  return status;
}
