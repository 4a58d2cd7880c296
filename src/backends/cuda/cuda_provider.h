/* The native provider on the CUDA backend: plan -> generated CUDA C ->
 * NVRTC -> module (cached by the source's SHA-256) -> launches on the shared
 * device's stream (cuda_device.h) over device-resident inputs. */
#ifndef TB_BACKENDS_CUDA_PROVIDER_H
#define TB_BACKENDS_CUDA_PROVIDER_H

#include "providers/provider.h"

/* TB_ERR_UNAVAILABLE (with the reason) without a usable GPU. */
enum tb_status tb_cuda_native_provider_create(struct tb_provider **out, struct tb_error *err);

#endif
