#include "backends/user_library.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provenance/hash.h"

/* dlsym's void * becomes a function pointer through memcpy: ISO C leaves
 * the cast undefined (and -Wpedantic says so). */
static void read_declarations(struct tb_user_library *lib) {
  uint32_t (*abi)(void) = NULL;
  uint32_t (*flags)(void) = NULL;
  const char *(*describe)(void) = NULL;
  void *s = dlsym(lib->handle, "tb_user_kernel_abi_version");
  memcpy(&abi, &s, sizeof s);
  s = dlsym(lib->handle, "tb_user_kernel_flags");
  memcpy(&flags, &s, sizeof s);
  s = dlsym(lib->handle, "tb_user_kernel_description");
  memcpy(&describe, &s, sizeof s);
  lib->abi_declared = abi != NULL;
  lib->abi_version = abi != NULL ? abi() : 1;
  lib->accepts_strided = flags != NULL && (flags() & TB_KERNEL_ACCEPTS_STRIDED_ROWS) != 0;
  const char *text = describe != NULL ? describe() : NULL;
  snprintf(lib->description, sizeof lib->description, "%s", text != NULL ? text : "");
  for (int op = 0; op < TB_OP_COUNT; ++op) {
    const struct tb_op_info *info = tb_op_info((enum tb_op)op);
    char name[64];
    snprintf(name, sizeof name, "tb_user_%s", info->name);
    s = info->is_matmul ? NULL : dlsym(lib->handle, name); /* gemm: not in ABI 1 */
    memcpy(&lib->fns[op], &s, sizeof s);
  }
}

enum tb_status tb_user_library_open(const char *path, struct tb_user_library *lib,
                                    struct tb_error *err) {
  memset(lib, 0, sizeof *lib);
  char resolved[PATH_MAX];
  if (realpath(path, resolved) == NULL) {
    return tb_fail(err, TB_ERR_USAGE, "--kernel %s: no such file (give the path of a .so)", path);
  }
  snprintf(lib->path, sizeof lib->path, "%s", resolved);
  const char *slash = strrchr(resolved, '/');
  /* a longer name is cut: the digest, not the name, identifies the file */
  snprintf(lib->file_name, sizeof lib->file_name, "%.255s", slash != NULL ? slash + 1 : resolved);
  struct tb_error hash_err = {0};
  if (tb_sha256_file(resolved, lib->sha256, &hash_err) != TB_OK) {
    return tb_fail(err, TB_ERR_USAGE, "--kernel %s: %s", path, hash_err.message);
  }
  /* the resolved path, so dlopen loads the file just hashed, never one
   * found on the library search path under the same name */
  lib->handle = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == NULL) {
    return tb_fail(err, TB_ERR_USAGE, "--kernel %s: cannot load it: %s", path, dlerror());
  }
  read_declarations(lib);
  if (lib->abi_version != TB_KERNEL_ABI_VERSION) {
    enum tb_status st =
        tb_fail(err, TB_ERR_USAGE,
                "--kernel %s declares kernel ABI %u (tb_user_kernel_abi_version); this "
                "tilebench speaks ABI %d: rebuild it against this include/tilebench/kernel.h",
                path, lib->abi_version, TB_KERNEL_ABI_VERSION);
    tb_user_library_close(lib);
    return st;
  }
  return TB_OK;
}

enum tb_status tb_user_library_check_ops(const struct tb_user_library *lib,
                                         const struct tb_op_info *const *ops, size_t count,
                                         struct tb_error *err) {
  for (size_t i = 0; i < count; ++i) {
    if (ops[i]->is_matmul) {
      return tb_fail(err, TB_ERR_USAGE,
                     "--kernel: gemm is not in kernel ABI %d; leave it out of --ops "
                     "(for example --ops softmax)",
                     TB_KERNEL_ABI_VERSION);
    }
    if (lib->fns[ops[i]->op] == NULL) {
      return tb_fail(err, TB_ERR_USAGE,
                     "--kernel %s exports no tb_user_%s: leave %s out of --ops, or add the "
                     "function (include/tilebench/kernel.h)",
                     lib->file_name, ops[i]->name, ops[i]->name);
    }
  }
  return TB_OK;
}

enum tb_status tb_user_library_accepts(const struct tb_user_library *lib, const struct tb_case *c,
                                       const struct tb_case_data *data, struct tb_error *err) {
  if (c->op->is_matmul || lib->fns[c->op->op] == NULL) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "%s exports no tb_user_%s", lib->file_name,
                   c->op->name);
  }
  if (c->view.kind != TB_VIEW_PACKED && !lib->accepts_strided) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "refused: %s declares packed rows only (no TB_KERNEL_ACCEPTS_STRIDED_ROWS in "
                   "tb_user_kernel_flags), so its %s view is not measured; run it with "
                   "--input-views packed",
                   lib->file_name, tb_view_name(c->view.kind));
  }
  if (c->op->has_second_matrix && data->inputs[1].row_stride != data->inputs[0].row_stride) {
    return tb_fail(err, TB_ERR_RUN, "kernel ABI %d has one row stride for x and y",
                   TB_KERNEL_ABI_VERSION);
  }
  return TB_OK;
}

void tb_user_kernel_args_init(const struct tb_case *c, const struct tb_case_data *data,
                              struct tb_kernel_args *a) {
  memset(a, 0, sizeof *a);
  a->abi_version = TB_KERNEL_ABI_VERSION;
  a->struct_size = sizeof *a;
  a->m = (int64_t)c->shape.m;
  a->n = (int64_t)c->shape.n;
  a->row_stride = (int64_t)data->inputs[0].row_stride;
  if (c->op->has_weight) {
    a->eps = (float)(c->op->op == TB_OP_RMSNORM ? TB_RMSNORM_EPS : TB_LAYERNORM_EPS);
  }
}

void tb_user_library_details(const struct tb_user_library *lib, const char *symbol,
                             struct tb_provider_details *out) {
  memset(out, 0, sizeof *out);
  out->kind = TB_DETAILS_USER;
  struct tb_user_details *d = &out->as.user;
  snprintf(d->library, sizeof d->library, "%s", lib->path);
  snprintf(d->file_name, sizeof d->file_name, "%s", lib->file_name);
  snprintf(d->sha256, sizeof d->sha256, "%s", lib->sha256);
  snprintf(d->symbol, sizeof d->symbol, "%s", symbol);
  snprintf(d->description, sizeof d->description, "%s", lib->description);
  d->abi_version = lib->abi_version;
  d->abi_declared = lib->abi_declared;
  d->accepts_strided = lib->accepts_strided;
}

void tb_user_library_close(struct tb_user_library *lib) {
  if (lib->handle != NULL) {
    dlclose(lib->handle);
  }
  memset(lib, 0, sizeof *lib);
}
