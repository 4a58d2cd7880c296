#include "cases/shape.h"

#include <string.h>

#include <stdio.h>

#include "core/strlist.h"

enum tb_status tb_shape_parse(const char *text, struct tb_shape *out, struct tb_error *err) {
  const char *x = strchr(text, 'x');
  if (x == NULL || strchr(x + 1, 'x') != NULL) {
    return tb_fail(err, TB_ERR_USAGE, "shape '%s' must be MxN, for example 37x769", text);
  }
  char rows[32];
  size_t len = (size_t)(x - text);
  if (len == 0 || len >= sizeof rows) {
    return tb_fail(err, TB_ERR_USAGE, "shape '%s' must be MxN, for example 37x769", text);
  }
  memcpy(rows, text, len);
  rows[len] = '\0';
  unsigned long long m = 0, n = 0;
  char what[96];
  snprintf(what, sizeof what, "rows of shape '%s'", text);
  if (tb_parse_size(rows, what, 1, TB_MAX_DIM, &m, err) != TB_OK) {
    return err->status;
  }
  snprintf(what, sizeof what, "columns of shape '%s'", text);
  if (tb_parse_size(x + 1, what, 1, TB_MAX_DIM, &n, err) != TB_OK) {
    return err->status;
  }
  out->m = (size_t)m;
  out->n = (size_t)n;
  return TB_OK;
}

const char *tb_view_name(enum tb_view_kind kind) {
  return kind == TB_VIEW_STRIDED ? "strided" : "packed";
}

enum tb_status tb_view_kind_parse(const char *text, enum tb_view_kind *out, struct tb_error *err) {
  for (int k = 0; k < TB_VIEW_COUNT; ++k) {
    if (strcmp(text, tb_view_name((enum tb_view_kind)k)) == 0) {
      *out = (enum tb_view_kind)k;
      return TB_OK;
    }
  }
  return tb_fail(err, TB_ERR_USAGE, "unknown input view '%s' (known: packed,strided)", text);
}

struct tb_view tb_view_for(enum tb_view_kind kind, size_t n) {
  struct tb_view view = {kind, n, 0};
  if (kind == TB_VIEW_STRIDED) {
    view.row_stride = n + TB_STRIDED_PAD;
    view.offset = TB_STRIDED_OFFSET;
  }
  return view;
}
