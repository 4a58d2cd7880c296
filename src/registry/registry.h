/* The providers by name: the one place that knows every backend and
 * composes them (above providers/ and backends/; measure/ and cli/ use it). */
#ifndef TB_REGISTRY_REGISTRY_H
#define TB_REGISTRY_REGISTRY_H

#include <stdbool.h>

#include "core/error.h"
#include "providers/provider.h"

/* Creates a provider by name for the chosen backend. */
enum tb_status tb_provider_create(const char *name, const char *backend, struct tb_provider **out,
                                  struct tb_error *err);
/* The user provider over the kernel library at `library`
 * (include/tilebench/kernel.h), on the CPU or (built with the CUDA headers)
 * the CUDA backend. */
enum tb_status tb_user_provider_create(const char *library, const char *backend,
                                       struct tb_provider **out, struct tb_error *err);
/* The user provider over a CUDA source kernel (--kernel X.cu) launched as
 * `launch` describes (a description or @file; docs/user-kernels.md); the
 * CUDA backend only. */
enum tb_status tb_user_source_provider_create(const char *source, const char *launch,
                                              const char *backend, struct tb_provider **out,
                                              struct tb_error *err);
void tb_provider_destroy(struct tb_provider *p);

/* Whether the named provider runs the planner's variants of row reductions. */
bool tb_provider_plans(const char *name);

/* Whether a provider of that name exists. */
bool tb_provider_known(const char *name);

/* "native,torch,torch-compile,cublas,user" for help and error messages. */
const char *tb_provider_names(void);

#endif
