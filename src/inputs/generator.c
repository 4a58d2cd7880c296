#include "inputs/generator.h"

#include <string.h>

uint64_t tb_splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

uint64_t tb_generator_stream(unsigned long long seed, const char *role, size_t m, size_t n) {
  uint64_t h = tb_splitmix64((uint64_t)seed);
  for (const char *p = role; *p; ++p) {
    h = tb_splitmix64(h ^ (uint64_t)(unsigned char)*p);
  }
  h = tb_splitmix64(h ^ (uint64_t)m);
  return tb_splitmix64(h ^ ((uint64_t)n << 1));
}

float tb_generator_uniform(uint64_t stream, uint64_t index, float lo, float hi) {
  uint64_t bits = tb_splitmix64(stream + index * 0xD1B54A32D192ED03ULL);
  double unit = (double)(bits >> 40) / (double)(1ULL << 24); /* [0, 1) */
  return (float)((double)lo + ((double)hi - (double)lo) * unit);
}

void tb_generator_range(const char *role, float *lo, float *hi) {
  if (strcmp(role, "weight") == 0) { /* scales near 1, as trained norms have */
    *lo = 0.5f;
    *hi = 1.5f;
  } else if (strcmp(role, "bias") == 0) {
    *lo = -0.5f;
    *hi = 0.5f;
  } else { /* activations: wide enough that softmax needs its max subtraction */
    *lo = -4.0f;
    *hi = 4.0f;
  }
}
