/* The user provider on the CUDA backend: a user's kernel library
 * (include/tilebench/kernel.h) called with device pointers into the shared
 * device base's rotating buffer sets and its stream, every input and output
 * between guard zones, with the defences' primitives as device copies.
 * Compiled with the CUDA headers; not yet run on a GPU (docs/user-kernels.md). */
#ifndef TB_BACKENDS_CUDA_USER_CUDA_PROVIDER_H
#define TB_BACKENDS_CUDA_USER_CUDA_PROVIDER_H

#include "providers/provider.h"

enum tb_status tb_cuda_user_provider_create(const char *library, struct tb_provider **out,
                                            struct tb_error *err);

#endif
