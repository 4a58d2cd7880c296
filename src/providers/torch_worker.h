/* The `torch` and `torch-compile` providers: PyTorch in a worker process
 * (python/tilebench/torch_worker.py) driven over a line-based JSON protocol
 * (docs/torch-worker.md). Inputs travel as the harness's own bytes (raw
 * fp32 files), so both sides compute on identical data; the output comes
 * back the same way and meets the same float64 oracle. A worker that dies,
 * hangs or answers garbage is killed, the case is invalid with the reason,
 * and the next case starts a fresh worker. */
#ifndef TB_PROVIDERS_TORCH_WORKER_H
#define TB_PROVIDERS_TORCH_WORKER_H

#include <stdbool.h>

#include "providers/provider.h"

/* Seconds a worker may take to answer: a request, and a torch.compile prepare. */
#define TB_WORKER_TIMEOUT_S 120
#define TB_WORKER_COMPILE_TIMEOUT_S 900

enum tb_status tb_torch_provider_create(bool compile, struct tb_provider **out,
                                        struct tb_error *err);

/* The user-python provider (docs/user-kernels.md): `kernel` is
 * FILE.py:FUNCTION, imported in the worker and called on the case's
 * tensors. */
enum tb_status tb_user_python_provider_create(const char *kernel, struct tb_provider **out,
                                              struct tb_error *err);

/* Splits FILE.py:FUNCTION at its last colon; a form without both parts is
 * a usage error. */
enum tb_status tb_user_python_split(const char *kernel, char *path, size_t path_size,
                                    char *function, size_t function_size, struct tb_error *err);

/* Before the run: a worker imports the file and finds the function; what
 * it refuses (an import error, no such function, not callable) is a usage
 * error. Where no worker starts (no PyTorch) nothing is checked here. */
enum tb_status tb_user_python_check(const char *kernel, struct tb_error *err);

#endif
