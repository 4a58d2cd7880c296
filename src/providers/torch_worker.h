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

#endif
