/* tilebench audit: runs the independent audit program (tools/audit), which
 * shares no statistics or planner code with this binary: it is written
 * apart, in Python's standard library, and re-derives every figure. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"

#ifndef TB_SOURCE_DIR
#define TB_SOURCE_DIR "."
#endif

#define TB_AUDIT_SCRIPT "tools/audit/tilebench_audit.py"

int tb_cmd_audit(int argc, char **argv) {
  char script[PATH_MAX];
  snprintf(script, sizeof script, "%s/%s", TB_SOURCE_DIR, TB_AUDIT_SCRIPT);
  if (access(script, R_OK) != 0) {
    fprintf(stderr,
            "tilebench: the audit program %s is missing (run it directly from a checkout: "
            "python3 %s DIR...)\n",
            script, TB_AUDIT_SCRIPT);
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
