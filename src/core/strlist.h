/* Comma-separated option lists ("softmax,rmsnorm"). */
#ifndef TB_CORE_STRLIST_H
#define TB_CORE_STRLIST_H

#include <stddef.h>

#include "core/error.h"

struct tb_strlist {
  char **items;
  size_t count;
};

/* Splits text at commas; empty items ("a,,b", "", "a,") are refused. */
enum tb_status tb_strlist_split(const char *text, const char *what, struct tb_strlist *out,
                                struct tb_error *err);
void tb_strlist_free(struct tb_strlist *list);

#endif
