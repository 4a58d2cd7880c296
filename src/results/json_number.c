#include "results/json_number.h"

#include <math.h>

json_t *tb_json_number(double value) {
  return isfinite(value) ? json_real(value) : json_null();
}
