/* Replies of the PyTorch worker, checked before the harness uses them: the
 * worker is another process running code the harness does not control, so
 * every field is checked for presence, type and range (docs/torch-worker.md).
 * A reply that fails a check is the provider's failure, with a message. */
#ifndef TB_PROVIDERS_WORKER_REPLY_H
#define TB_PROVIDERS_WORKER_REPLY_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

/* Parses one reply line to the request `cmd` ("hello" for the handshake)
 * that asked for `calls` calls (device and host samples). On success
 * *reply holds a checked reply. A well-formed reply with ok = false is the
 * worker's own failure: TB_ERR_RUN (TB_ERR_UNAVAILABLE for hello) with its
 * message, and *reply is kept (the caller frees it: the worker can go on).
 * Anything else fails with *reply NULL: the worker broke the protocol. */
enum tb_status tb_worker_reply_parse(const char *line, size_t length, const char *cmd,
                                     long long calls, json_t **reply, struct tb_error *err);

#endif
