/* results.csv: one row per case (report/columns.h), RFC 4180. */
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"
#include "report/columns.h"
#include "report/report.h"

/* RFC 4180: a field holding a comma, a quote or a line break is quoted and
 * its quotes doubled; case ids and a foreign file's names may hold any. */
static void csv_text(struct tb_strbuf *b, const char *s) {
  if (strpbrk(s, ",\"\r\n") == NULL) {
    tb_strbuf_printf(b, "%s", s);
    return;
  }
  tb_strbuf_printf(b, "\"");
  for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
    tb_strbuf_printf(b, "%.*s\"\"", (int)(q - s), s);
  }
  tb_strbuf_printf(b, "%s\"", s);
}

/* %.17g: every double reads back exactly, so the CSV is the file's number. */
static void csv_cell(struct tb_strbuf *b, const struct tb_cell *cell) {
  switch (cell->kind) {
  case TB_CELL_TEXT: csv_text(b, cell->text); break;
  case TB_CELL_INTEGER: tb_strbuf_printf(b, "%lld", cell->integer); break;
  case TB_CELL_NUMBER: tb_strbuf_printf(b, "%.17g", cell->number); break;
  case TB_CELL_BOOL: tb_strbuf_printf(b, "%s", cell->flag ? "true" : "false"); break;
  case TB_CELL_ABSENT: break; /* an empty field */
  }
}

char *tb_report_csv(const struct tb_results_model *m, struct tb_error *err) {
  struct tb_strbuf b = {0};
  for (size_t k = 0; k < tb_report_column_count; ++k) {
    tb_strbuf_printf(&b, "%s%s", k ? "," : "", tb_report_columns[k].name);
  }
  tb_strbuf_printf(&b, "\r\n");
  for (size_t i = 0; i < m->case_count; ++i) {
    struct tb_report_row row = tb_report_row(&m->cases[i], m->copy_ceiling_gbps);
    for (size_t k = 0; k < tb_report_column_count; ++k) {
      struct tb_cell cell = tb_report_columns[k].cell(&row);
      if (k > 0) {
        tb_strbuf_printf(&b, ",");
      }
      csv_cell(&b, &cell);
    }
    tb_strbuf_printf(&b, "\r\n");
  }
  char *text = tb_strbuf_take(&b);
  if (text == NULL) {
    tb_fail(err, TB_ERR_SYSTEM, "out of memory building the CSV");
  }
  return text;
}
