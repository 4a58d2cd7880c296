#include "core/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void tb_strbuf_printf(struct tb_strbuf *b, const char *fmt, ...) {
  if (b->failed) {
    return;
  }
  for (;;) {
    va_list args;
    va_start(args, fmt);
    size_t room = b->cap - b->len;
    int need = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, args);
    va_end(args);
    if (need < 0) {
      b->failed = 1;
      return;
    }
    if ((size_t)need < room) {
      b->len += (size_t)need;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 1024;
    while (cap - b->len <= (size_t)need) {
      cap *= 2;
    }
    char *bigger = realloc(b->data, cap);
    if (bigger == NULL) {
      b->failed = 1;
      return;
    }
    b->data = bigger;
    b->cap = cap;
  }
}

char *tb_strbuf_take(struct tb_strbuf *b) {
  char *text = b->failed ? NULL : b->data;
  if (b->failed) {
    free(b->data);
  }
  if (text == NULL && !b->failed) {
    text = calloc(1, 1);
  }
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
  return text;
}
