/* Pairing records across variants, realizations and providers: a case id is
 * `op/shape/view/provider[/variant|/realization]`, and what pairs two
 * records is the id without its last segment. */
#ifndef TB_STATS_CASE_KEY_H
#define TB_STATS_CASE_KEY_H

#include <stddef.h>

/* `id` without its last '/'-segment ("softmax/37x769/packed/native/reference"
 * -> "softmax/37x769/packed/native"), or the whole id when it has no '/';
 * truncated to size - 1 bytes. Returns key. */
char *tb_case_base_key(const char *id, char *key, size_t size);

/* The campaign unit a record belongs to (cases/shard.h): the id's first
 * three segments, op/shape/view ("softmax/37x769/packed/native/reference"
 * -> "softmax/37x769/packed"); truncated to size - 1 bytes. Returns key. */
char *tb_case_unit_key(const char *id, char *key, size_t size);

#endif
