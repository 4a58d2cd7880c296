/* What a reader must know before any table, the same in results.md and on
 * the terminal: the counts, an incomplete run, providers that did not
 * start, native / framework headlines, every hazard raised and background
 * load. */
#ifndef TB_REPORT_SUMMARY_H
#define TB_REPORT_SUMMARY_H

#include <stdbool.h>

#include "core/strbuf.h"
#include "results/model.h"

/* One line each, every line starting with `bullet`; the case counts only
 * when with_counts. */
void tb_report_summary_lines(struct tb_strbuf *b, const struct tb_results_model *m,
                             const char *bullet, bool with_counts);

#endif
