#include "inputs/poison.h"

#include <stdint.h>
#include <string.h>

void tb_poison(float *data, size_t count) {
  uint32_t bits = TB_POISON_BITS;
  for (size_t i = 0; i < count; ++i) {
    memcpy(&data[i], &bits, sizeof bits);
  }
}

void tb_decoy_fill(float *data, size_t count) {
  uint32_t bits = TB_DECOY_BITS;
  for (size_t i = 0; i < count; ++i) {
    memcpy(&data[i], &bits, sizeof bits);
  }
}

bool tb_is_poison(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits == TB_POISON_BITS;
}
