/* The files that travel with the tilebench executable, found relative to
 * the executable itself so a build tree, an installed prefix or a copied
 * bundle all work without the source tree:
 *
 *   build tree (build/src/)       installed (<prefix>/bin/)
 *   python/tilebench/             ../share/tilebench/python/tilebench/
 *   audit/tilebench_audit.py      ../share/tilebench/audit/tilebench_audit.py
 *   libtilebench_timing.so.2      ../lib/libtilebench_timing.so.2
 *
 * An environment variable overrides each (for development). */
#ifndef TB_CORE_RESOURCES_H
#define TB_CORE_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

enum tb_resource {
  TB_RESOURCE_PYTHON,     /* the directory holding the `tilebench` Python package */
  TB_RESOURCE_AUDIT,      /* the audit program */
  TB_RESOURCE_TIMING_LIB, /* libtilebench_timing.so.2 */
  TB_RESOURCE_PLOT,       /* the plotting program (tools/plot) */
};

/* The resource's path in out, or TB_ERR_UNAVAILABLE with every place
 * tried in the message. */
enum tb_status tb_resource_path(enum tb_resource which, char *out, size_t size,
                                struct tb_error *err);

/* The directory of the running executable (symbolic links resolved). */
enum tb_status tb_self_dir(char *out, size_t size, struct tb_error *err);

/* Whether this executable runs from the build tree it was built in, so the
 * source tree it was built from (TB_SOURCE_DIR) is its own. */
bool tb_running_from_build_tree(void);

#endif
