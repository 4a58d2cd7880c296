#include "registry/registry.h"

#include <string.h>

#include "backends/cpu/cpu_provider.h"
#include "backends/cpu/user_provider.h"
#include "providers/torch_worker.h"
#ifdef TB_HAVE_CUDA_HEADERS
#include "backends/cuda/cublas_provider.h"
#include "backends/cuda/cuda_provider.h"
#include "backends/cuda/user_cuda_provider.h"
#include "backends/cuda/user_nvrtc_provider.h"
#endif

const char *tb_provider_names(void) {
  return "native,torch,torch-compile,cublas,user,user-python";
}

bool tb_provider_known(const char *name) {
  return strcmp(name, "native") == 0 || strcmp(name, "torch") == 0 ||
         strcmp(name, "torch-compile") == 0 || strcmp(name, "cublas") == 0 ||
         strcmp(name, "user") == 0 || strcmp(name, "user-python") == 0;
}

bool tb_provider_plans(const char *name) {
  return strcmp(name, "native") == 0;
}

enum tb_status tb_provider_create(const char *name, const char *backend, struct tb_provider **out,
                                  struct tb_error *err) {
  *out = NULL;
  if (strcmp(name, "torch") == 0 || strcmp(name, "torch-compile") == 0) {
    /* PyTorch picks its own device (CUDA when it sees one), whatever --backend says */
    return tb_torch_provider_create(strcmp(name, "torch-compile") == 0, out, err);
  }
  if (strcmp(name, "cublas") == 0) {
#ifdef TB_HAVE_CUDA_HEADERS
    if (strcmp(backend, "cuda") == 0) {
      return tb_cuda_cublas_provider_create(out, err);
    }
#endif
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "the cublas provider needs the CUDA backend (this run's backend: %s)", backend);
  }
  if (strcmp(name, "user") == 0) {
    return tb_fail(err, TB_ERR_USAGE, "the user provider needs --kernel PATH (its library)");
  }
  if (strcmp(name, "user-python") == 0) {
    return tb_fail(err, TB_ERR_USAGE, "the user-python provider needs --kernel FILE.py:FUNCTION");
  }
  if (strcmp(name, "native") != 0) {
    return tb_fail(err, TB_ERR_USAGE, "unknown provider '%s' (known: %s)", name,
                   tb_provider_names());
  }
  if (strcmp(backend, "cpu") == 0) {
    return tb_cpu_native_provider_create(out, err);
  }
#ifdef TB_HAVE_CUDA_HEADERS
  if (strcmp(backend, "cuda") == 0) {
    return tb_cuda_native_provider_create(out, err);
  }
#endif
  return tb_fail(err, TB_ERR_UNAVAILABLE, "backend '%s' is not available in this build", backend);
}

enum tb_status tb_user_provider_create(const char *library, const char *backend,
                                       struct tb_provider **out, struct tb_error *err) {
  *out = NULL;
  if (library == NULL) {
    return tb_fail(err, TB_ERR_USAGE, "the user provider needs --kernel PATH (its library)");
  }
  if (strcmp(backend, "cpu") == 0) {
    return tb_cpu_user_provider_create(library, out, err);
  }
#ifdef TB_HAVE_CUDA_HEADERS
  if (strcmp(backend, "cuda") == 0) {
    return tb_cuda_user_provider_create(library, out, err);
  }
#endif
  return tb_fail(err, TB_ERR_UNAVAILABLE,
                 "the user provider has no %s backend in this build; pass --backend cpu", backend);
}

enum tb_status tb_user_source_provider_create(const char *source, const char *launch,
                                              const char *backend, struct tb_provider **out,
                                              struct tb_error *err) {
  *out = NULL;
#ifdef TB_HAVE_CUDA_HEADERS
  if (strcmp(backend, "cuda") == 0) {
    return tb_cuda_user_source_provider_create(source, launch, out, err);
  }
#endif
  return tb_fail(err, TB_ERR_UNAVAILABLE,
                 "a CUDA source kernel (--kernel %s) needs the CUDA backend; this run's is %s",
                 source, backend);
}

void tb_provider_destroy(struct tb_provider *p) {
  if (p != NULL) {
    p->ops->destroy(p);
  }
}
