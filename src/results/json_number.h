/* Numbers in the results' JSON, shared by every record (results.h,
 * plan_json.h) and by the layers above that build JSON of their own. */
#ifndef TB_RESULTS_JSON_NUMBER_H
#define TB_RESULTS_JSON_NUMBER_H

#include <jansson.h>

/* JSON number, or null for NaN and infinities (JSON has neither). */
json_t *tb_json_number(double value);

#endif
