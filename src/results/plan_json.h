/* Plan records for results.json and `tilebench plan --json`. */
#ifndef TB_RESULTS_PLAN_JSON_H
#define TB_RESULTS_PLAN_JSON_H

#include <jansson.h>

#include "planner/elementwise.h"
#include "planner/gemm.h"
#include "planner/planner.h"

json_t *tb_plan_to_json(const struct tb_plan *plan);
json_t *tb_elementwise_plan_to_json(const struct tb_elementwise_plan *plan);
json_t *tb_gemm_plan_to_json(const struct tb_gemm_plan *plan);

#endif
