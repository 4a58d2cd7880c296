/* The user provider on the CPU backend: a user's kernel library
 * (include/tilebench/kernel.h, docs/user-kernels.md) called on host copies
 * of the case's inputs, every input and the output between guard zones, so
 * the measurement layer's defences can check what the calls touched. */
#ifndef TB_BACKENDS_CPU_USER_PROVIDER_H
#define TB_BACKENDS_CPU_USER_PROVIDER_H

#include "providers/provider.h"

/* Loads the library at `path` (refused as tb_user_library_open refuses). */
enum tb_status tb_cpu_user_provider_create(const char *path, struct tb_provider **out,
                                           struct tb_error *err);

#endif
