/* Measures one case on one provider: prepare, host phase, validation. */
#ifndef TB_MEASURE_CASE_RUNNER_H
#define TB_MEASURE_CASE_RUNNER_H

#include "measure/host_phase.h"
#include "results/case_result.h"

/* Never aborts the campaign: any failure is recorded in result->error and
 * result->valid stays false. Returns TB_OK unless memory ran out. */
enum tb_status tb_run_case(struct tb_provider *p, const struct tb_case *c,
                           const struct tb_case_data *data, const double *reference,
                           const struct tb_measure_options *opt, struct tb_case_result *result);

#endif
