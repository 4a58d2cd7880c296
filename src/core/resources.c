#include "core/resources.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TB_BUILD_DIR
#define TB_BUILD_DIR ""
#endif
#ifndef TB_INSTALL_LIBDIR_REL /* from the installed bindir */
#define TB_INSTALL_LIBDIR_REL "../lib"
#endif
#ifndef TB_INSTALL_DATADIR_REL
#define TB_INSTALL_DATADIR_REL "../share/tilebench"
#endif

struct resource {
  const char *env;         /* override */
  const char *relative[2]; /* under the executable's directory: build tree, installed */
  const char *what;
};

static const struct resource resources[] = {
    [TB_RESOURCE_PYTHON] = {"TILEBENCH_PYTHONPATH",
                            {"python", TB_INSTALL_DATADIR_REL "/python"},
                            "the tilebench Python package"},
    [TB_RESOURCE_AUDIT] = {"TILEBENCH_AUDIT",
                           {"audit/tilebench_audit.py",
                            TB_INSTALL_DATADIR_REL "/audit/tilebench_audit.py"},
                           "the audit program"},
    [TB_RESOURCE_TIMING_LIB] = {"TILEBENCH_TIMING_LIB",
                                {"libtilebench_timing.so.2",
                                 TB_INSTALL_LIBDIR_REL "/libtilebench_timing.so.2"},
                                "the timing library"},
    [TB_RESOURCE_PLOT] = {"TILEBENCH_PLOT",
                          {"plot/tilebench_plot.py",
                           TB_INSTALL_DATADIR_REL "/plot/tilebench_plot.py"},
                          "the plotting program"},
};

enum tb_status tb_self_dir(char *out, size_t size, struct tb_error *err) {
  char exe[PATH_MAX];
  if (realpath("/proc/self/exe", exe) == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "cannot find this executable (/proc/self/exe)");
  }
  char *slash = strrchr(exe, '/');
  *slash = '\0';
  if (snprintf(out, size, "%s", exe[0] ? exe : "/") >= (int)size) {
    return tb_fail(err, TB_ERR_SYSTEM, "the executable's path is too long");
  }
  return TB_OK;
}

/* The python package is a directory holding tilebench/__init__.py. */
static bool present(enum tb_resource which, const char *path) {
  if (which != TB_RESOURCE_PYTHON) {
    return access(path, R_OK) == 0;
  }
  char init[PATH_MAX + 32];
  snprintf(init, sizeof init, "%s/tilebench/__init__.py", path);
  return access(init, R_OK) == 0;
}

enum tb_status tb_resource_path(enum tb_resource which, char *out, size_t size,
                                struct tb_error *err) {
  const struct resource *r = &resources[which];
  const char *override = getenv(r->env);
  if (override != NULL && override[0] != '\0') {
    if (!present(which, override)) {
      return tb_fail(err, TB_ERR_UNAVAILABLE, "%s=%s: %s is not there", r->env, override, r->what);
    }
    snprintf(out, size, "%s", override);
    return TB_OK;
  }
  char dir[PATH_MAX];
  if (tb_self_dir(dir, sizeof dir, err) != TB_OK) {
    return err->status;
  }
  for (size_t i = 0; i < 2; ++i) {
    if (snprintf(out, size, "%s/%s", dir, r->relative[i]) < (int)size && present(which, out)) {
      return TB_OK;
    }
  }
  out[0] = '\0';
  return tb_fail(err, TB_ERR_UNAVAILABLE,
                 "%s is not installed beside %s/tilebench (looked for "
                 "%s/%s and %s/%s; %s names another place)",
                 r->what, dir, dir, r->relative[0], dir, r->relative[1], r->env);
}

bool tb_running_from_build_tree(void) {
  char dir[PATH_MAX], build[PATH_MAX];
  struct tb_error ignored = {0};
  if (TB_BUILD_DIR[0] == '\0' || tb_self_dir(dir, sizeof dir, &ignored) != TB_OK ||
      realpath(TB_BUILD_DIR, build) == NULL) {
    return false;
  }
  size_t len = strlen(build);
  return strncmp(dir, build, len) == 0 && (dir[len] == '/' || dir[len] == '\0');
}
