/* The native provider on the CPU backend: our operations computed on the host
 * into a preallocated output. Synchronous, so synchronize is a no-op. */
#ifndef TB_BACKENDS_CPU_PROVIDER_H
#define TB_BACKENDS_CPU_PROVIDER_H

#include "providers/provider.h"

enum tb_status tb_cpu_native_provider_create(struct tb_provider **out, struct tb_error *err);

#endif
