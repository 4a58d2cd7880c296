/* A user's CUDA source kernel (--kernel X.cu, docs/user-kernels.md): the
 * file (resolved path, SHA-256, its text, archived with the run like a
 * generated kernel) and its launch description (--launch). What the CLI
 * checks before a run and the CUDA source provider compiles. Pure C: NVRTC
 * and the driver are the provider's. */
#ifndef TB_BACKENDS_USER_SOURCE_H
#define TB_BACKENDS_USER_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "backends/launch_spec.h"
#include "cases/ops.h"
#include "cases/shape.h"
#include "core/error.h"

/* The audit reads archived sources of at most 4 MiB; a user's kernel is a
 * few kB, so a larger file is refused rather than archived half. */
#define TB_USER_SOURCE_MAX_BYTES (4u << 20)

struct tb_user_source {
  char path[4096];     /* realpath of the file given */
  char file_name[256]; /* its last component */
  char sha256[65];     /* of the bytes read, which are the bytes compiled */
  char *text;          /* NUL-terminated */
  size_t size;
  struct tb_launch_spec launch;
};

/* Whether --kernel names a CUDA source (ends in .cu) rather than a library. */
bool tb_user_source_is_cu(const char *path);

/* Reads and hashes `path` and parses `launch` (a description or @file).
 * TB_ERR_USAGE naming what is wrong: no such file, too large, not text, a
 * bad launch description. */
enum tb_status tb_user_source_open(const char *path, const char *launch, struct tb_user_source *src,
                                   struct tb_error *err);

/* TB_ERR_USAGE naming the first operation of `ops` the source has no entry
 * point for (the name tb_user_<op> does not occur in it; gemm: not in the
 * ABI). Whether it really is an extern "C" __global__ function is NVRTC's
 * to say when the provider compiles it. */
enum tb_status tb_user_source_check_ops(const struct tb_user_source *src,
                                        const struct tb_op_info *const *ops, size_t count,
                                        struct tb_error *err);

/* The launch description evaluated for every shape: TB_ERR_USAGE naming the
 * first shape and dimension CUDA cannot launch. */
enum tb_status tb_user_source_check_shapes(const struct tb_user_source *src,
                                           const struct tb_shape *shapes, size_t count,
                                           struct tb_error *err);

void tb_user_source_close(struct tb_user_source *src);

#endif
