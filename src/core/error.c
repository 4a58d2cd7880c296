#include "core/error.h"

#include <stdio.h>

enum tb_status tb_fail(struct tb_error *err, enum tb_status status, const char *fmt, ...) {
  if (err == NULL || err->status != TB_OK) {
    return status;
  }
  err->status = status;
  va_list args;
  va_start(args, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, args);
  va_end(args);
  return status;
}

void tb_error_clear(struct tb_error *err) {
  err->status = TB_OK;
  err->message[0] = '\0';
}

int tb_exit_code(enum tb_status status) {
  switch (status) {
  case TB_OK: return 0;
  case TB_ERR_USAGE:
  case TB_ERR_INPUT: return 2;
  default: return 1;
  }
}
