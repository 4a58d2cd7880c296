/* The fixed plan of the elementwise operations (add, gelu_add): no search,
 * one documented rule, recorded like the reduction plans. */
#ifndef TB_PLANNER_ELEMENTWISE_H
#define TB_PLANNER_ELEMENTWISE_H

#include <stddef.h>

#include "cases/ops.h"

#define TB_ELEMENTWISE_VECTOR 4 /* consecutive elements of one row per thread */
#define TB_ELEMENTWISE_THREADS 256

struct tb_elementwise_plan {
  enum tb_op op;
  size_t m, n;
  unsigned elements_per_thread;
  unsigned threads_per_block;
  unsigned long long threads_per_row; /* ceil(n / 4) */
  unsigned long long thread_blocks;   /* ceil(m * threads_per_row / threads_per_block) */
  const char *rule;
};

void tb_plan_elementwise(enum tb_op op, size_t m, size_t n, struct tb_elementwise_plan *plan);

#endif
