#include "backends/cuda/module_cache.h"

#include <stdio.h>
#include <string.h>

#include "backends/cuda/nvrtc.h"
#include "core/clock.h"

enum tb_status tb_module_get(const struct tb_cuda *cu, struct tb_module_cache *cache,
                             const struct tb_generated *g, const char *arch,
                             const struct tb_module_entry **entry, int *hit, struct tb_error *err) {
  for (unsigned i = 0; i < cache->count; ++i) {
    if (strcmp(cache->entries[i].sha256, g->sha256) == 0) {
      *entry = &cache->entries[i];
      *hit = 1;
      return TB_OK;
    }
  }
  *hit = 0;
  if (cache->count == TB_MODULE_CACHE_SIZE) {
    return tb_fail(err, TB_ERR_RUN, "more than %d distinct kernels in one run",
                   TB_MODULE_CACHE_SIZE);
  }
  struct tb_compiled compiled;
  if (tb_nvrtc_compile(g->source, arch, &compiled, err) != TB_OK) {
    return err->status;
  }
  struct tb_module_entry *e = &cache->entries[cache->count];
  int64_t start = tb_monotonic_ns();
  CUresult rc = cu->cuModuleLoadData(&e->module, compiled.cubin);
  double load_ms = (double)(tb_monotonic_ns() - start) / 1e6;
  if (rc != CUDA_SUCCESS) {
    tb_compiled_free(&compiled);
    return tb_cuda_fail(err, "cuModuleLoadData", rc);
  }
  snprintf(e->sha256, sizeof e->sha256, "%s", g->sha256);
  tb_compiled_facts(&compiled, load_ms, &e->compile);
  tb_compiled_free(&compiled);
  cache->count++;
  *entry = e;
  return TB_OK;
}

void tb_module_cache_clear(const struct tb_cuda *cu, struct tb_module_cache *cache) {
  for (unsigned i = 0; i < cache->count; ++i) {
    cu->cuModuleUnload(cache->entries[i].module);
  }
  cache->count = 0;
}
