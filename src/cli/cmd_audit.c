/* tilebench audit: runs the independent audit program (tools/audit), which
 * shares no statistics or planner code with this binary: it is written
 * apart, in Python's standard library, and re-derives every figure. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/resources.h"

int tb_cmd_audit(int argc, char **argv) {
  char script[PATH_MAX];
  struct tb_error err = {0};
  if (tb_resource_path(TB_RESOURCE_AUDIT, script, sizeof script, &err) != TB_OK) {
    fprintf(stderr, "tilebench: %s\n", err.message);
    return 2;
  }
  char **args = calloc((size_t)argc + 2, sizeof *args);
  if (args == NULL) {
    return 1;
  }
  args[0] = "python3";
  args[1] = script;
  for (int i = 1; i < argc; ++i) {
    args[i + 1] = argv[i];
  }
  execvp("python3", args);
  fprintf(stderr, "tilebench: cannot run python3 for the audit (install the python3 package)\n");
  free(args);
  return 2;
}
