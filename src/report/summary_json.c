/* results-summary.json: the CSV's rows as JSON, with the run they came
 * from, so a script needs neither the full record nor a CSV parser. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/columns.h"
#include "report/report.h"

static json_t *json_text(const char *s) {
  return s != NULL ? json_string(s) : json_null();
}

/* NaN is not JSON: absent figures are null. */
static json_t *json_figure(double v) {
  return isfinite(v) ? json_real(v) : json_null();
}

static json_t *cell_json(const struct tb_cell *cell) {
  switch (cell->kind) {
  case TB_CELL_TEXT: return json_string(cell->text);
  case TB_CELL_INTEGER: return json_integer(cell->integer);
  case TB_CELL_NUMBER: return json_real(cell->number);
  case TB_CELL_BOOL: return json_boolean(cell->flag);
  case TB_CELL_ABSENT: break;
  }
  return json_null();
}

/* The first GPU's name on a GPU run; the CPU's model otherwise. */
static json_t *run_identity(const struct tb_results_model *m) {
  bool gpu = m->gpu_available && m->gpu_count > 0;
  return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:I, s:I, s:o, s:o}", "tool_version",
                   json_text(m->tool_version), "backend", json_text(m->backend), "device",
                   json_text(gpu ? m->gpus[0].name : m->host_cpu_model), "started_at",
                   json_text(m->started_at), "command", json_text(m->command), "commit",
                   json_text(m->git_commit), "dirty", m->git_dirty, "seed", m->seed,
                   "results_schema_version", m->schema_version, "copy_ceiling_gbps",
                   json_figure(m->copy_ceiling_gbps), "complete", json_boolean(!m->incomplete));
}

static json_t *case_rows(const struct tb_results_model *m) {
  json_t *rows = json_array();
  for (size_t i = 0; rows != NULL && i < m->case_count; ++i) {
    struct tb_report_row row = tb_report_row(&m->cases[i], m->copy_ceiling_gbps);
    json_t *obj = json_object();
    for (size_t k = 0; obj != NULL && k < tb_report_column_count; ++k) {
      struct tb_cell cell = tb_report_columns[k].cell(&row);
      json_object_set_new(obj, tb_report_columns[k].name, cell_json(&cell));
    }
    json_array_append_new(rows, obj);
  }
  return rows;
}

char *tb_report_json_summary(const struct tb_results_model *m, struct tb_error *err) {
  json_t *doc = json_pack("{s:s, s:i, s:o, s:o}", "format", "tilebench.report-summary",
                          "format_version", 1, "run", run_identity(m), "cases", case_rows(m));
  char *text = doc != NULL ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
  json_decref(doc);
  if (text == NULL) {
    tb_fail(err, TB_ERR_SYSTEM, "out of memory building the JSON summary");
    return NULL;
  }
  /* json_dumps' buffer is freed with free(); a final newline like the others */
  size_t len = strlen(text);
  char *out = realloc(text, len + 2);
  if (out == NULL) {
    free(text);
    tb_fail(err, TB_ERR_SYSTEM, "out of memory building the JSON summary");
    return NULL;
  }
  out[len] = '\n';
  out[len + 1] = '\0';
  return out;
}
