/* One execution plan per case, whatever the operation: the planner's record
 * of how the case runs (a row reduction's mapping, the fixed elementwise
 * walk, a gemm tiling), or none where the provider does not plan (a library
 * call, a framework). A provider's plan step (providers/provider.h) returns
 * it, prepare executes it, and results/plan_json.c writes it, so the plan
 * that ran is the plan recorded. */
#ifndef TB_PLANNER_EXEC_PLAN_H
#define TB_PLANNER_EXEC_PLAN_H

#include <stdbool.h>

#include "cases/case.h"
#include "core/error.h"
#include "planner/elementwise.h"
#include "planner/gemm.h"
#include "planner/planner.h"

enum tb_plan_kind {
  TB_PLAN_NONE = 0,    /* also what a zeroed case record holds */
  TB_PLAN_REDUCTION,   /* planner.h: a row reduction's mapping */
  TB_PLAN_ELEMENTWISE, /* elementwise.h: the fixed walk of add, gelu_add */
  TB_PLAN_GEMM,        /* gemm.h: the tiling of C = A.B */
};

struct tb_exec_plan {
  enum tb_plan_kind kind;
  union {
    struct tb_plan reduction;
    struct tb_elementwise_plan elementwise;
    struct tb_gemm_plan gemm;
  } as;
};

/* What a backend tells the planner of the device it runs on. */
struct tb_plan_target {
  struct tb_device_limits limits; /* for reductions */
  /* gemm: false where the backend computes gemm without a tiling (the CPU's
   * loops), so the case has no gemm plan */
  bool plans_gemm;
  struct tb_gemm_target gemm;
};

/* Plans case `c` for `target`: a planned row reduction, an elementwise
 * operation, or (when the target plans gemm) a gemm; TB_PLAN_NONE for
 * anything else. Fails (TB_ERR_USAGE) only where the planner refuses the
 * case, e.g. a --gemm-block the generator cannot build. */
enum tb_status tb_plan_case(const struct tb_case *c, const struct tb_plan_target *target,
                            struct tb_exec_plan *plan, struct tb_error *err);

/* Which gemm operands' rows start on 16 bytes (struct tb_gemm_alignment) in
 * the case's view. */
struct tb_gemm_alignment tb_gemm_operands_alignment(const struct tb_case *c);

#endif
