/* Guard zones: a buffer allocated with a fixed bit pattern before and after
 * it, checked after the calls, so a kernel that writes outside its output
 * (or into an input) is caught even when its output is right
 * (docs/method.md §8). The pattern is a NaN whose payload differs from the
 * poison pattern's. */
#ifndef TB_INPUTS_GUARD_H
#define TB_INPUTS_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define TB_GUARD_BITS 0x7FA11CE5u
/* Elements of pattern on each side: 4 KiB, past any vector store's reach
 * and past a whole row of the small shapes. */
#define TB_GUARD_ELEMS 1024u

/* Writes the pattern over one zone of TB_GUARD_ELEMS elements (a host copy
 * for a device's zones, too). */
void tb_guard_fill(float *zone);
/* The first element of a zone that lost the pattern, or -1. */
long long tb_guard_first_damage(const float *zone);

struct tb_guarded {
  float *base; /* the allocation: guard, data, guard */
  float *data; /* `count` elements the caller uses */
  size_t count;
};

/* Allocates count elements between two guard zones (data zeroed); false
 * when memory ran out. */
bool tb_guarded_alloc(struct tb_guarded *g, size_t count);
void tb_guarded_free(struct tb_guarded *g);

/* Whether both zones still hold the pattern; when not, *offset is the
 * first damaged element relative to data[0] (negative: before it). */
bool tb_guarded_intact(const struct tb_guarded *g, long long *offset);

/* Copies the data out to dst, or over it from src: `count` must be the
 * buffer's own (TB_ERR_RUN otherwise, nothing copied). */
enum tb_status tb_guarded_read(const struct tb_guarded *g, float *dst, size_t count,
                               struct tb_error *err);
enum tb_status tb_guarded_write(struct tb_guarded *g, const float *src, size_t count,
                                struct tb_error *err);

#endif
