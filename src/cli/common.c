#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"

int tb_cli_fail(const struct tb_error *err) {
  fprintf(stderr, "tilebench: %s\n", err->message[0] ? err->message : "failed");
  return tb_exit_code(err->status == TB_OK ? TB_ERR_RUN : err->status);
}

enum tb_status tb_parse_positive(const char *text, const char *what, double max, double *out,
                                 struct tb_error *err) {
  errno = 0;
  char *end = NULL;
  double value = strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !isfinite(value)) {
    return tb_fail(err, TB_ERR_USAGE, "%s: '%s' is not a number", what, text);
  }
  if (!(value > 0.0) || value > max) {
    return tb_fail(err, TB_ERR_USAGE, "%s: %s is outside (0, %g]", what, text, max);
  }
  *out = value;
  return TB_OK;
}
