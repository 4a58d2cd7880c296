/* A growable text buffer for reports. */
#ifndef TB_CORE_STRBUF_H
#define TB_CORE_STRBUF_H

#include <stddef.h>

struct tb_strbuf {
  char *data;
  size_t len, cap;
  int failed; /* set when memory ran out; data then holds what fit */
};

void tb_strbuf_printf(struct tb_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Returns the text (caller frees) or NULL after a failure; resets b. */
char *tb_strbuf_take(struct tb_strbuf *b);

#endif
