/* The record's "device" object (docs/results-schema.md) from the typed
 * device phase (results/device_result.h). */
#ifndef TB_RESULTS_DEVICE_JSON_H
#define TB_RESULTS_DEVICE_JSON_H

#include <jansson.h>

#include "results/device_result.h"

json_t *tb_device_result_to_json(const struct tb_device_result *d);

/* A phase's stopping record (schema 6, docs/method.md §2.6): the rule's
 * parameters, what it did and its not_converged flag, enough for the audit
 * to re-derive the decision; host.stopping and device.throughput.stopping. */
json_t *tb_stopping_json(const struct tb_stopping_rule *rule, const struct tb_stopping_outcome *o);

#endif
