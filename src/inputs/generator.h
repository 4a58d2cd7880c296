/* The seeded input generator (documented in docs/inputs.md).
 *
 * Counter-based: the value of element k of tensor `role` in a case of shape
 * m x n is a pure function of (seed, role, m, n, k), so every provider, every
 * run, every input view and every order of cases sees identical values. */
#ifndef TB_INPUTS_GENERATOR_H
#define TB_INPUTS_GENERATOR_H

#include <stddef.h>
#include <stdint.h>

uint64_t tb_splitmix64(uint64_t x);

/* Stream key for one tensor of one case. */
uint64_t tb_generator_stream(unsigned long long seed, const char *role, size_t m, size_t n);

/* Uniform in [lo, hi) with 24 random bits (exact in fp32). */
float tb_generator_uniform(uint64_t stream, uint64_t index, float lo, float hi);

/* Value ranges per role: realistic magnitudes, never all zeros. */
void tb_generator_range(const char *role, float *lo, float *hi);

#endif
