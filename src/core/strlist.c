#include "core/strlist.h"

#include <stdlib.h>
#include <string.h>

enum tb_status tb_strlist_split(const char *text, const char *what, struct tb_strlist *out,
                                struct tb_error *err) {
  out->items = NULL;
  out->count = 0;
  size_t capacity = 1;
  for (const char *p = text; *p; ++p) {
    capacity += (*p == ',');
  }
  out->items = calloc(capacity, sizeof *out->items);
  if (out->items == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory while parsing %s", what);
  }
  const char *start = text;
  for (;;) {
    const char *end = strchr(start, ',');
    size_t len = end ? (size_t)(end - start) : strlen(start);
    if (len == 0) {
      tb_strlist_free(out);
      return tb_fail(err, TB_ERR_USAGE, "%s: empty item in list '%s'", what, text);
    }
    char *item = malloc(len + 1);
    if (item == NULL) {
      tb_strlist_free(out);
      return tb_fail(err, TB_ERR_SYSTEM, "out of memory while parsing %s", what);
    }
    memcpy(item, start, len);
    item[len] = '\0';
    out->items[out->count++] = item;
    if (end == NULL) {
      break;
    }
    start = end + 1;
  }
  return TB_OK;
}

void tb_strlist_free(struct tb_strlist *list) {
  for (size_t i = 0; i < list->count; ++i) {
    free(list->items[i]);
  }
  free(list->items);
  list->items = NULL;
  list->count = 0;
}
