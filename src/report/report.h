/* Human-readable reports, generated from a results file's model alone
 * (results/model.h), so that `tilebench report DIR` reproduces exactly what
 * `run` wrote. */
#ifndef TB_REPORT_REPORT_H
#define TB_REPORT_REPORT_H

#include "core/error.h"
#include "results/model.h"

/* results.md: run summary, per-case table, validation, environment hazards.
 * Returns NULL (with err) when memory runs out. */
char *tb_report_markdown(const struct tb_results_model *results, struct tb_error *err);

/* results.csv: a header, then one RFC 4180 row per case (report/columns.h). */
char *tb_report_csv(const struct tb_results_model *results, struct tb_error *err);

/* results-summary.json: the CSV's rows as JSON objects, with the run's
 * identity (device, backend, commit, seed, results schema version). */
char *tb_report_json_summary(const struct tb_results_model *results, struct tb_error *err);

/* The compact table printed at the end of `run`. */
char *tb_report_terminal_table(const struct tb_results_model *results, struct tb_error *err);

#endif
