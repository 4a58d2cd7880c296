/* Shapes ("37x769") and input views. */
#ifndef TB_CASES_SHAPE_H
#define TB_CASES_SHAPE_H

#include <stddef.h>

#include "core/error.h"

struct tb_shape {
  size_t m; /* rows (of the output) */
  size_t n; /* elements per row (of the output) */
  size_t k; /* gemm's inner dimension ("MxNxK"); 0 for the other operations */
};

/* Largest dimension accepted; the memory check refuses what cannot fit. */
#define TB_MAX_DIM ((size_t)1 << 31)

/* Parses "MxN" or, for gemm, "MxNxK", each >= 1 in decimal; refuses signs,
 * spaces, overflow. */
enum tb_status tb_shape_parse(const char *text, struct tb_shape *out, struct tb_error *err);
/* "MxN", or "MxNxK" when k is set: the form tb_shape_parse reads. */
void tb_shape_format(struct tb_shape shape, char *buf, size_t size);

/* How the input matrices are laid out in memory.
 * packed:  row stride = n, starting at element 0 of its allocation.
 * strided: row stride = n + TB_STRIDED_PAD and a start offset of
 *          TB_STRIDED_OFFSET elements, so no kernel can assume packed rows or
 *          16-byte-aligned row starts. Padding is filled with NaN: a kernel
 *          that reads it produces NaN, which validation catches. */
enum tb_view_kind { TB_VIEW_PACKED, TB_VIEW_STRIDED, TB_VIEW_COUNT };

#define TB_STRIDED_PAD 3
#define TB_STRIDED_OFFSET 1

struct tb_view {
  enum tb_view_kind kind;
  size_t row_stride; /* elements between row starts */
  size_t offset;     /* elements before the first row */
};

const char *tb_view_name(enum tb_view_kind kind);
enum tb_status tb_view_kind_parse(const char *text, enum tb_view_kind *out, struct tb_error *err);
struct tb_view tb_view_for(enum tb_view_kind kind, size_t n);

#endif
