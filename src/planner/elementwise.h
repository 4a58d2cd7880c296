/* The fixed plan of the elementwise operations (add, gelu_add): no search,
 * one documented rule by size, recorded like the reduction plans. */
#ifndef TB_PLANNER_ELEMENTWISE_H
#define TB_PLANNER_ELEMENTWISE_H

#include <stdbool.h>
#include <stddef.h>

#include "cases/ops.h"

#define TB_ELEMENTWISE_VECTOR 4 /* consecutive elements of one row per thread */
#define TB_ELEMENTWISE_THREADS 256
/* Up to this many elements in all, one element a thread in blocks of
 * TB_ELEMENTWISE_SCALAR_THREADS: such a kernel is one memory round trip and
 * its time is latency, which float4 groups lengthened on the H100
 * (docs/planner.md, "Elementwise"). */
#define TB_ELEMENTWISE_SCALAR_MAX 8192
#define TB_ELEMENTWISE_SCALAR_THREADS 128

struct tb_elementwise_plan {
  enum tb_op op;
  size_t m, n;
  /* packed rows are one contiguous run of m*n floats: the kernel walks it as
   * a single row, so every 4-float group is 16-byte aligned whatever n is */
  bool flat;
  size_t rows, cols;            /* what the kernel walks: 1 x m*n when flat, else m x n */
  unsigned elements_per_thread; /* 1, or TB_ELEMENTWISE_VECTOR consecutive ones */
  unsigned threads_per_block;
  unsigned long long threads_per_row; /* ceil(cols / elements_per_thread) */
  unsigned long long thread_blocks;   /* ceil(rows * threads_per_row / threads_per_block) */
  const char *rule;
};

/* packed: the inputs' rows are contiguous (row stride n, no offset). */
void tb_plan_elementwise(enum tb_op op, size_t m, size_t n, bool packed,
                         struct tb_elementwise_plan *plan);

#endif
