#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"

int tb_cli_fail(const struct tb_error *err) {
  fprintf(stderr, "tilebench: %s\n", err->message[0] ? err->message : "failed");
  return tb_exit_code(err->status == TB_OK ? TB_ERR_RUN : err->status);
}

int tb_cli_help_or_misuse(int opt, const char *usage) {
  fputs(usage, opt == 'h' ? stdout : stderr);
  return opt == 'h' ? 0 : 2;
}
