/* The "provider_details" record of a case (docs/results-schema.md), written
 * from the typed facts a provider reported (providers/provider_details.h). */
#ifndef TB_RESULTS_PROVIDER_JSON_H
#define TB_RESULTS_PROVIDER_JSON_H

#include <jansson.h>

#include "providers/provider_details.h"

/* The record, or JSON null for TB_DETAILS_NONE. */
json_t *tb_provider_details_to_json(const struct tb_provider_details *d);

#endif
