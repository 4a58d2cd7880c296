#include "backends/cuda/cublas.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/dlfind.h"

/* The few cuBLAS v2 entry points used, declared here so the build needs no
 * cuBLAS headers (values from cublas_api.h, CUDA 13). */
typedef void *cublas_handle;
enum { CUBLAS_OP_N = 0, CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3 };

struct tb_cublas {
  void *library;
  char path[PATH_MAX];
  cublas_handle handle;
  int version;
  int math_mode;
  int (*create)(cublas_handle *);
  int (*destroy)(cublas_handle);
  int (*set_stream)(cublas_handle, CUstream);
  int (*set_math_mode)(cublas_handle, int);
  int (*get_version)(cublas_handle, int *);
  int (*sgemm)(cublas_handle, int, int, int, int, int, const float *, const float *, int,
               const float *, int, const float *, float *, int);
  int (*set_workspace)(cublas_handle, void *, size_t); /* optional */
};

static int bind(struct tb_cublas *c) {
  *(void **)&c->create = dlsym(c->library, "cublasCreate_v2");
  *(void **)&c->destroy = dlsym(c->library, "cublasDestroy_v2");
  *(void **)&c->set_stream = dlsym(c->library, "cublasSetStream_v2");
  *(void **)&c->set_math_mode = dlsym(c->library, "cublasSetMathMode");
  *(void **)&c->get_version = dlsym(c->library, "cublasGetVersion_v2");
  *(void **)&c->sgemm = dlsym(c->library, "cublasSgemm_v2");
  *(void **)&c->set_workspace = dlsym(c->library, "cublasSetWorkspace_v2");
  return c->create && c->destroy && c->set_stream && c->set_math_mode && c->get_version && c->sgemm;
}

enum tb_status tb_cublas_open(CUstream stream, struct tb_cublas **out, struct tb_error *err) {
  *out = NULL;
  struct tb_cublas *c = calloc(1, sizeof *c);
  if (c == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory loading cuBLAS");
  }
  c->library = tb_dlopen_cuda_library("libcublas.so.13", c->path, sizeof c->path);
  if (c->library == NULL || !bind(c)) {
    tb_cublas_close(c);
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "cuBLAS not found (libcublas.so.13 with cublasSgemm_v2): install the CUDA 13 "
                   "cuBLAS library or put it on LD_LIBRARY_PATH");
  }
  int rc = c->create(&c->handle);
  if (rc == 0) {
    rc = c->set_stream(c->handle, stream);
  }
  if (rc == 0) {
    rc = c->get_version(c->handle, &c->version);
  }
  if (rc != 0) {
    tb_cublas_close(c);
    return tb_fail(err, TB_ERR_RUN, "cuBLAS setup (handle, stream) failed: status %d", rc);
  }
  *out = c;
  return tb_cublas_set_realization(c, TB_REALIZATION_SIMT, err);
}

enum tb_status tb_cublas_set_realization(struct tb_cublas *c, enum tb_realization r,
                                         struct tb_error *err) {
  int mode = tb_realization_is_tf32(r) ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  int rc = c->set_math_mode(c->handle, mode);
  if (rc != 0) {
    return tb_fail(err, TB_ERR_RUN, "cublasSetMathMode(%d) failed: status %d", mode, rc);
  }
  c->math_mode = mode;
  return TB_OK;
}

enum tb_status tb_cublas_set_workspace(struct tb_cublas *c, CUdeviceptr workspace, size_t bytes,
                                       struct tb_error *err) {
  if (c->set_workspace == NULL) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "cuBLAS lacks cublasSetWorkspace_v2");
  }
  int rc = c->set_workspace(c->handle, (void *)(uintptr_t)workspace, bytes);
  return rc == 0 ? TB_OK : tb_fail(err, TB_ERR_RUN, "cublasSetWorkspace_v2 failed: status %d", rc);
}

int tb_cublas_gemm(struct tb_cublas *c, size_t m, size_t n, size_t k, CUdeviceptr a, size_t sa,
                   CUdeviceptr b, size_t sb, CUdeviceptr out) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || sa > INT_MAX || sb > INT_MAX) {
    return 7; /* CUBLAS_STATUS_INVALID_VALUE: the 32-bit API cannot take it */
  }
  const float one = 1.0f, zero = 0.0f;
  /* column-major view of row-major data: out^T (n x m) = b^T (n x k) . a^T (k x m) */
  return c->sgemm(c->handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
                  (const float *)(uintptr_t)b, (int)sb, (const float *)(uintptr_t)a, (int)sa, &zero,
                  (float *)(uintptr_t)out, (int)n);
}

void tb_cublas_facts(const struct tb_cublas *c, struct tb_cublas_details *out) {
  bool tf32 = c->math_mode == CUBLAS_TF32_TENSOR_OP_MATH;
  snprintf(out->library, sizeof out->library, "%s", c->path);
  out->version = c->version;
  out->call = "cublasSgemm_v2 (transposed product of row-major data)";
  out->math_mode = tf32 ? "CUBLAS_TF32_TENSOR_OP_MATH" : "CUBLAS_DEFAULT_MATH";
  out->precision = tf32 ? "tf32" : "fp32";
  const char *override = getenv("NVIDIA_TF32_OVERRIDE");
  out->has_tf32_override = override != NULL;
  snprintf(out->tf32_override, sizeof out->tf32_override, "%s", override ? override : "");
}

void tb_cublas_close(struct tb_cublas *c) {
  if (c == NULL) {
    return;
  }
  if (c->handle != NULL && c->destroy != NULL) {
    c->destroy(c->handle);
  }
  /* the library stays loaded: its static runtime may run at process exit */
  free(c);
}
