/* The poison pattern written over every output before a validated run: a
 * quiet NaN with a recognisable payload, so "unwritten" can be told from
 * "computed NaN" (oracle/validate.h counts it). */
#ifndef TB_INPUTS_POISON_H
#define TB_INPUTS_POISON_H

#include <stdbool.h>
#include <stddef.h>

#define TB_POISON_BITS 0x7FC0DEADu
/* A finite value (1.2587...) written over the outputs before every timed
 * batch when no wrong answer of the case's own kind is at hand (measure/
 * case_runner.c): not the poison, so a kernel that computes only over a
 * poisoned output is not told that a batch started. */
#define TB_DECOY_BITS 0x3FA11CE5u

void tb_poison(float *data, size_t count);
void tb_decoy_fill(float *data, size_t count);
bool tb_is_poison(float value);

#endif
