/* Shards of a campaign (docs/campaigns.md): the campaign's units, each one
 * case of the campaign (op/shape/view) with every record measured on it
 * (every provider, variant, realization and replay round), are dealt to N
 * shards, so that everything a case pairs (a replay's two variants, native
 * against a framework, the alternating provider order) stays in one
 * process. The assignment is deterministic and independent of the machine:
 * units sorted by expected cost (largest first), ties by the FNV-1a hash of
 * the unit's key, then by the key; each goes to the shard with the least
 * cost so far (the lowest index among equals). The audit re-derives it
 * (tools/audit, audit_shard_assignment). */
#ifndef TB_CASES_SHARD_H
#define TB_CASES_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* The most shards a campaign is dealt to. */
#define TB_SHARD_MAX 4096

/* What a measured record is taken to cost beyond the bytes it moves: its
 * warm-up and timed phases are bounded in time, not in bytes
 * (docs/campaigns.md, "Expected cost"). */
#define TB_SHARD_RECORD_OVERHEAD_BYTES ((uint64_t)4 << 20)

/* The cost model as the results record it. */
#define TB_SHARD_COST_MODEL "runs x (minimal_bytes + 4194304)"

/* The longest unit key: op/MxN[xK]/view. */
#define TB_SHARD_KEY_SIZE 160

/* One unit: its key (op/MxN[xK]/view, the first three segments of the ids
 * of its records), its expected cost and the ids of its records in one
 * round (every provider and variant or realization). */
struct tb_shard_unit {
  char key[TB_SHARD_KEY_SIZE];
  uint64_t cost;
  char **records;
  size_t record_count;
};

/* Frees each unit's records and the array itself. */
void tb_shard_units_free(struct tb_shard_unit *units, size_t count);

/* The most a cost may be: exact as a JSON integer (jansson's and the audit's). */
#define TB_SHARD_COST_MAX ((uint64_t)INT64_MAX)

/* runs x (minimal_bytes + TB_SHARD_RECORD_OVERHEAD_BYTES), at most
 * TB_SHARD_COST_MAX. */
uint64_t tb_shard_cost(double minimal_bytes, size_t runs);

/* 64-bit FNV-1a of text. */
uint64_t tb_shard_hash(const char *text);

/* shard_of[u] in [0, shards) for each of the count units. TB_ERR_USAGE when
 * shards is 0, above TB_SHARD_MAX or above count (a shard with nothing to
 * measure); TB_ERR_SYSTEM when memory runs out. */
enum tb_status tb_shard_assign(const struct tb_shard_unit *units, size_t count, unsigned shards,
                               unsigned *shard_of, struct tb_error *err);

/* "I/N" with 0 <= I < N <= TB_SHARD_MAX, digits only. */
enum tb_status tb_shard_parse(const char *text, unsigned *index, unsigned *count,
                              struct tb_error *err);

#endif
