/* One campaign timing a GPU at a time (docs/campaigns.md): a CUDA run holds an
 * exclusive flock(2) on a file named by its GPU's UUID for as long as it runs,
 * so a second campaign started on the same GPU, from any shell or Slurm task,
 * is refused instead of timing against it. The kernel drops the lock when the
 * process ends, however it ends: no stale lock survives a crash. */
#ifndef TB_CLI_GPU_LOCK_H
#define TB_CLI_GPU_LOCK_H

#include "core/error.h"

/* The folder of the lock files: $TILEBENCH_LOCK_DIR, else /tmp. */
const char *tb_gpu_lock_dir(void);

/* Takes the lock of the GPU with this UUID (held until the process exits);
 * TB_ERR_USAGE naming the holder's pid when another process holds it,
 * TB_ERR_SYSTEM when the lock file cannot be opened. */
enum tb_status tb_gpu_lock_acquire(const char *uuid, struct tb_error *err);

#endif
