/* The user provider for a CUDA source kernel (--kernel X.cu --launch ...,
 * docs/user-kernels.md): the source compiled by NVRTC for device 0 once per
 * campaign, one extern "C" __global__ tb_user_<op> per operation launched
 * with the grid, block and dynamic shared memory its launch description
 * gives for the case's shape, on the shared device base's stream and
 * rotating, guarded buffer sets: the same device phase, batch modes and
 * defences as the shared-library CUDA user provider. Not yet run on a GPU. */
#ifndef TB_BACKENDS_CUDA_USER_NVRTC_PROVIDER_H
#define TB_BACKENDS_CUDA_USER_NVRTC_PROVIDER_H

#include "providers/provider.h"

/* A compile error or a missing NVRTC fails creation with the reason (the
 * log included), so the provider's cases are recorded invalid with it. */
enum tb_status tb_cuda_user_source_provider_create(const char *source_path, const char *launch,
                                                   struct tb_provider **out, struct tb_error *err);

#endif
