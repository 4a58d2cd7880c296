#include "timing/last_error.h"

#include <stdio.h>

#include "tilebench/timing.h"

static char last_error[768];

int tb_timing_vfail(int code, const char *fmt, va_list args) {
  vsnprintf(last_error, sizeof last_error, fmt, args);
  return code;
}

int tb_timing_fail_text(int code, const char *message) {
  snprintf(last_error, sizeof last_error, "%s", message);
  return code;
}

void tb_timing_clear_error(void) {
  last_error[0] = '\0';
}

const char *tb_timing_last_error(void) {
  return last_error;
}
