/* A user's kernel library (include/tilebench/kernel.h) opened with dlopen:
 * which file it is (resolved path, SHA-256), the ABI it declares, its flags
 * and the operations it exports; what it accepts of a case and the
 * arguments of its calls. Shared by the CLI's check before a run and the
 * user providers of both backends. */
#ifndef TB_BACKENDS_USER_LIBRARY_H
#define TB_BACKENDS_USER_LIBRARY_H

#include <stdbool.h>

#include "tilebench/kernel.h"

#include "cases/ops.h"
#include "core/error.h"
#include "inputs/tensor.h"
#include "providers/provider_details.h"

struct tb_user_library {
  void *handle;
  char path[4096];     /* realpath of the file given */
  char file_name[256]; /* its last component */
  char sha256[65];
  unsigned abi_version; /* declared, or 1 when the library does not say */
  bool abi_declared;
  bool accepts_strided;
  char description[256];
  tb_user_kernel_fn fns[TB_OP_COUNT]; /* NULL where the library lacks tb_user_<op> */
};

/* Resolves, hashes and loads `path` and reads its declarations. Refuses
 * (TB_ERR_USAGE, the message says what to change) a missing or unloadable
 * file and a library declaring another ABI version than this build's. */
enum tb_status tb_user_library_open(const char *path, struct tb_user_library *lib,
                                    struct tb_error *err);

/* TB_ERR_USAGE naming the first operation of `ops` the library does not
 * export (gemm: not in the ABI). */
enum tb_status tb_user_library_check_ops(const struct tb_user_library *lib,
                                         const struct tb_op_info *const *ops, size_t count,
                                         struct tb_error *err);

/* TB_ERR_UNAVAILABLE with the reason when the library cannot run case `c`
 * (no tb_user_<op>; packed rows only on a strided view), else TB_OK. */
enum tb_status tb_user_library_accepts(const struct tb_user_library *lib, const struct tb_case *c,
                                       const struct tb_case_data *data, struct tb_error *err);

/* The arguments every call of case `c` shares (ABI, shape, stride, eps);
 * the caller sets the pointers and the stream. */
void tb_user_kernel_args_init(const struct tb_case *c, const struct tb_case_data *data,
                              struct tb_kernel_args *a);

/* The library as provider details (kind TB_DETAILS_USER), calling `symbol`. */
void tb_user_library_details(const struct tb_user_library *lib, const char *symbol,
                             struct tb_provider_details *out);

void tb_user_library_close(struct tb_user_library *lib);

#endif
