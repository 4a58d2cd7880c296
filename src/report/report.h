/* Human-readable reports, generated from a results document alone, so that
 * `tilebench report DIR` reproduces exactly what `run` wrote. */
#ifndef TB_REPORT_REPORT_H
#define TB_REPORT_REPORT_H

#include <jansson.h>

#include "core/error.h"

/* results.md: run summary, per-case table, validation, environment hazards.
 * Returns NULL (with err) when the document does not follow the schema. */
char *tb_report_markdown(const json_t *results, struct tb_error *err);

/* The compact table printed at the end of `run`. */
char *tb_report_terminal_table(const json_t *results, struct tb_error *err);

#endif
