/* The campaign's units as the results record them (docs/campaigns.md):
 * run.shard in a shard's results, run.merge in a merged file. */
#ifndef TB_RESULTS_SHARD_JSON_H
#define TB_RESULTS_SHARD_JSON_H

#include <jansson.h>
#include <stdbool.h>

#include "cases/shard.h"
#include "provenance/hash.h"

/* [{key, cost, shard, records: [id, ...]}, ...] in the campaign's order. */
json_t *tb_shard_units_json(const struct tb_shard_unit *units, size_t count,
                            const unsigned *shard_of);

/* SHA-256 of the campaign: for each unit in order the line
 * "key<TAB>cost<TAB>record,record,...<LF>" (its shard is no part of it: the
 * campaign is the same however it is dealt). False when `units` is not such
 * a list. */
bool tb_shard_campaign_sha256(const json_t *units, char hex[TB_SHA256_HEX_LEN]);

#endif
