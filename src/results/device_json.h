/* The record's "device" object (docs/results-schema.md) from the typed
 * device phase (results/device_result.h). */
#ifndef TB_RESULTS_DEVICE_JSON_H
#define TB_RESULTS_DEVICE_JSON_H

#include <jansson.h>

#include "results/device_result.h"

json_t *tb_device_result_to_json(const struct tb_device_result *d);

#endif
