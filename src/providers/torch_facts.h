/* The torch worker's replies (JSON: input the client parses) read into the
 * typed provider details the measurement layer keeps. */
#ifndef TB_PROVIDERS_TORCH_FACTS_H
#define TB_PROVIDERS_TORCH_FACTS_H

#include <jansson.h>

#include "providers/provider_details.h"

/* The handshake (`hello`, may be NULL) and the current case's prepare reply
 * (may be NULL) as torch details; a field the worker left out stays absent,
 * one it sent as null stays null. */
void tb_torch_details_read(const json_t *hello, const json_t *prepared, bool torch_compile,
                           struct tb_provider_details *out);

/* The user-python provider's load_callable reply (NULL: none) added to
 * torch details already read. */
void tb_torch_callable_read(const json_t *loaded, struct tb_provider_details *out);

#endif
