/* The columns of the CSV and the JSON summary, one list for both so the two
 * formats cannot drift apart: each column names itself and gives one typed
 * cell of a row (docs/results-schema.md, "Report formats"). */
#ifndef TB_REPORT_COLUMNS_H
#define TB_REPORT_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>

#include "report/rows.h"

enum tb_cell_kind { TB_CELL_ABSENT, TB_CELL_TEXT, TB_CELL_INTEGER, TB_CELL_NUMBER, TB_CELL_BOOL };

struct tb_cell {
  enum tb_cell_kind kind;
  const char *text;
  long long integer;
  double number;
  bool flag;
};

struct tb_column {
  const char *name;
  struct tb_cell (*cell)(const struct tb_report_row *row);
};

extern const struct tb_column tb_report_columns[];
extern const size_t tb_report_column_count;

#endif
