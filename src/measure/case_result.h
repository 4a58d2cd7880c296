/* What one case x provider produced: raw samples, validation, validity. */
#ifndef TB_MEASURE_CASE_RESULT_H
#define TB_MEASURE_CASE_RESULT_H

#include <stdbool.h>

#include "cases/case.h"
#include "measure/host_phase.h"
#include "planner/planner.h"
#include "oracle/validate.h"

struct tb_case_result {
  struct tb_case c;
  char id[160];
  const char *backend;
  bool has_plan;          /* a planned native reduction: `plan` is what ran */
  struct tb_plan plan;
  const char *output_allocation;
  double minimal_bytes;

  bool host_measured;
  struct tb_host_phase host;

  /* Why device timing is absent; the CPU backend has no device clock. */
  const char *device_unavailable_reason;

  bool validated;
  struct tb_validation validation;

  /* valid = output correct and every required measurement present
   * (METHOD.md §2.4); it says nothing about how quiet the machine was. */
  bool valid;
  char error[1024]; /* empty unless something failed */
};

void tb_case_result_free(struct tb_case_result *r);

#endif
