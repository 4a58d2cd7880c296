/* Compiled modules keyed by the SHA-256 of their source: a plan that
 * generates the same bytes is compiled and loaded once per run. */
#ifndef TB_BACKENDS_CUDA_MODULE_CACHE_H
#define TB_BACKENDS_CUDA_MODULE_CACHE_H

#include "backends/cuda/driver.h"
#include "codegen/codegen.h"
#include "providers/provider_details.h"

#define TB_MODULE_CACHE_SIZE 512

struct tb_module_entry {
  char sha256[65];
  CUmodule module;
  struct tb_compile_facts compile; /* options, NVRTC version, compile/load ms, ptxas report */
};

struct tb_module_cache {
  struct tb_module_entry entries[TB_MODULE_CACHE_SIZE];
  unsigned count;
};

/* The module of `g` for arch "sm_XY": from the cache, or compiled with NVRTC
 * and loaded. *hit says which. */
enum tb_status tb_module_get(const struct tb_cuda *cu, struct tb_module_cache *cache,
                             const struct tb_generated *g, const char *arch,
                             const struct tb_module_entry **entry, int *hit, struct tb_error *err);
void tb_module_cache_clear(const struct tb_cuda *cu, struct tb_module_cache *cache);

#endif
