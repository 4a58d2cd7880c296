/* One row per case: the figure a case is ranked by, its spread and its
 * bandwidth, what the CSV and the JSON summary write (docs/results-schema.md,
 * "Report formats"). Absent figures are NaN and absent names NULL, so each
 * writer decides how to show them. */
#ifndef TB_REPORT_ROWS_H
#define TB_REPORT_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "results/model.h"

/* Which timed scope a row's figure comes from, best first: the host-gap-free
 * GPU control (graph or held batches), the eager GPU control, host E2E. */
enum tb_row_scope { TB_ROW_NONE, TB_ROW_GAP_FREE, TB_ROW_EAGER, TB_ROW_HOST };

struct tb_report_row {
  const struct tb_model_case *c;
  enum tb_row_scope scope;
  const char *mode;              /* gap-free: "graph", "held" or "eager"; else NULL */
  double p50_ns, min_ns, max_ns; /* per call, over the scope's samples */
  size_t samples;
  double robust_cv;     /* tb_robust_cv of the same samples */
  double gbps;          /* minimal bytes / p50 */
  double copy_fraction; /* gbps / the run's copy ceiling: GPU scopes only */
};

/* "gap_free", "eager_gpu", "host", or NULL for TB_ROW_NONE. */
const char *tb_row_scope_name(enum tb_row_scope scope);

/* The row of one case in a run whose copy ceiling is `ceiling` (NaN: none). */
struct tb_report_row tb_report_row(const struct tb_model_case *c, double ceiling);

#endif
