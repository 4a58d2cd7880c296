/* Measures one case on one provider: prepare, host phase, validation. */
#ifndef TB_MEASURE_CASE_RUNNER_H
#define TB_MEASURE_CASE_RUNNER_H

#include "measure/defences.h"
#include "measure/host_phase.h"
#include "results/case_result.h"

/* Never aborts the campaign: any failure is recorded in result->error and
 * result->valid stays false. Returns TB_OK unless memory ran out.
 * `fresh`: the second inputs of the defences (defences.h), shared by every
 * provider of the case and made by the first that uses them (their oracle
 * costs as much as the case's own: seconds at 32768x8192); the caller frees
 * them after the last provider. NULL: the case makes its own. */
enum tb_status tb_run_case(struct tb_provider *p, const struct tb_case *c,
                           const struct tb_case_data *data, const double *reference,
                           struct tb_fresh_inputs *fresh, const struct tb_measure_options *opt,
                           struct tb_case_result *result);

#endif
