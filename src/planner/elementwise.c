#include "planner/elementwise.h"

void tb_plan_elementwise(enum tb_op op, size_t m, size_t n, struct tb_elementwise_plan *plan) {
  plan->op = op;
  plan->m = m;
  plan->n = n;
  plan->elements_per_thread = TB_ELEMENTWISE_VECTOR;
  plan->threads_per_block = TB_ELEMENTWISE_THREADS;
  plan->threads_per_row = (n + TB_ELEMENTWISE_VECTOR - 1) / TB_ELEMENTWISE_VECTOR;
  unsigned long long threads = (unsigned long long)m * plan->threads_per_row;
  plan->thread_blocks = (threads + TB_ELEMENTWISE_THREADS - 1) / TB_ELEMENTWISE_THREADS;
  plan->rule = "fixed: each thread handles 4 consecutive elements of one row";
}
