/* Provenance of a run (docs/method.md §5): what ran, from which source, where.
 * Each capture returns a JSON object for the results file. */
#ifndef TB_PROVENANCE_PROVENANCE_H
#define TB_PROVENANCE_PROVENANCE_H

#include <jansson.h>

/* git commit, dirty flag and SHA-256 of `git diff HEAD` of the source tree
 * this binary was built from; null fields with a reason when unavailable. */
json_t *tb_capture_git(void);

/* SHA-256 of the executable and every shared library mapped into it. */
json_t *tb_capture_artifacts(void);

/* OS, kernel, CPU model, logical CPUs, affinity. */
json_t *tb_capture_host(void);

/* Thread- and CUDA-related environment variables (null when unset). */
json_t *tb_capture_thread_env(void);

/* Processes using the most CPU over a short window, and the load average,
 * to show background load at the start and end of a run. */
json_t *tb_capture_busy_processes(void);

#endif
