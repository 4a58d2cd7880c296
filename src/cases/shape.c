#include "cases/shape.h"

#include <string.h>

#include <stdio.h>

#include "core/numbers.h"

enum tb_status tb_shape_parse(const char *text, struct tb_shape *out, struct tb_error *err) {
  static const char *const names[] = {"rows", "columns", "inner dimension"};
  size_t dims[3] = {0, 0, 0}, count = 0;
  const char *start = text;
  for (;;) {
    const char *x = strchr(start, 'x');
    size_t len = x ? (size_t)(x - start) : strlen(start);
    char part[32], what[96];
    if (count == 3 || len == 0 || len >= sizeof part) {
      return tb_fail(err, TB_ERR_USAGE,
                     "shape '%s' must be MxN (or MxNxK for gemm), for example 37x769", text);
    }
    memcpy(part, start, len);
    part[len] = '\0';
    snprintf(what, sizeof what, "%s of shape '%s'", names[count], text);
    unsigned long long value = 0;
    if (tb_parse_size(part, what, 1, TB_MAX_DIM, &value, err) != TB_OK) {
      return err->status;
    }
    dims[count++] = (size_t)value;
    if (x == NULL) {
      break;
    }
    start = x + 1;
  }
  if (count < 2) {
    return tb_fail(err, TB_ERR_USAGE,
                   "shape '%s' must be MxN (or MxNxK for gemm), for example 37x769", text);
  }
  out->m = dims[0];
  out->n = dims[1];
  out->k = dims[2];
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

void tb_shape_format(struct tb_shape shape, char *buf, size_t size) {
  if (shape.k > 0) {
    snprintf(buf, size, "%zux%zux%zu", shape.m, shape.n, shape.k);
  } else {
    snprintf(buf, size, "%zux%zu", shape.m, shape.n);
  }
}
