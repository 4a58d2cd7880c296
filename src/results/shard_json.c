#include "results/shard_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/strbuf.h"

json_t *tb_shard_units_json(const struct tb_shard_unit *units, size_t count,
                            const unsigned *shard_of) {
  json_t *list = json_array();
  for (size_t u = 0; u < count; ++u) {
    json_t *records = json_array();
    for (size_t r = 0; r < units[u].record_count; ++r) {
      json_array_append_new(records, json_string(units[u].records[r]));
    }
    json_array_append_new(list, json_pack("{s:s, s:I, s:I, s:o}", "key", units[u].key, "cost",
                                          (json_int_t)units[u].cost, "shard",
                                          (json_int_t)shard_of[u], "records", records));
  }
  return list;
}

bool tb_shard_campaign_sha256(const json_t *units, char hex[TB_SHA256_HEX_LEN]) {
  if (!json_is_array(units)) {
    return false;
  }
  struct tb_strbuf b = {0};
  size_t i, r;
  const json_t *unit, *record;
  bool ok = true;
  json_array_foreach(units, i, unit) {
    const json_t *key = json_object_get(unit, "key"), *cost = json_object_get(unit, "cost");
    const json_t *records = json_object_get(unit, "records");
    if (!json_is_string(key) || !json_is_integer(cost) || !json_is_array(records)) {
      ok = false;
      break;
    }
    tb_strbuf_printf(&b, "%s\t%" PRId64 "\t", json_string_value(key),
                     (int64_t)json_integer_value(cost));
    json_array_foreach(records, r, record) {
      ok = ok && json_is_string(record);
      tb_strbuf_printf(&b, "%s%s", r ? "," : "", ok ? json_string_value(record) : "");
    }
    tb_strbuf_printf(&b, "\n");
  }
  size_t len = b.len;
  char *text = tb_strbuf_take(&b);
  ok = ok && (text != NULL || len == 0);
  if (ok) {
    tb_sha256_buffer(text ? text : "", len, hex);
  }
  free(text);
  return ok;
}
