/* The poison pattern written over every output before a validated run: a
 * quiet NaN with a recognisable payload, so "unwritten" can be told from
 * "computed NaN" (oracle/validate.h counts it). */
#ifndef TB_INPUTS_POISON_H
#define TB_INPUTS_POISON_H

#include <stdbool.h>
#include <stddef.h>

#define TB_POISON_BITS 0x7FC0DEADu

void tb_poison(float *data, size_t count);
bool tb_is_poison(float value);

#endif
