/* Plan records for results.json and `tilebench plan --json`: one writer
 * for every kind of execution plan (planner/exec_plan.h). */
#ifndef TB_RESULTS_PLAN_JSON_H
#define TB_RESULTS_PLAN_JSON_H

#include <jansson.h>

#include "planner/exec_plan.h"

/* The plan's record ("kind": "row_reduction", "elementwise" or "gemm",
 * docs/results-schema.md), or NULL for TB_PLAN_NONE. */
json_t *tb_exec_plan_to_json(const struct tb_exec_plan *plan);

#endif
