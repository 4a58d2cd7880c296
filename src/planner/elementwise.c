#include "planner/elementwise.h"

void tb_plan_elementwise(enum tb_op op, size_t m, size_t n, bool packed,
                         struct tb_elementwise_plan *plan) {
  plan->op = op;
  plan->m = m;
  plan->n = n;
  plan->flat = packed;
  plan->rows = packed ? 1 : m;
  plan->cols = packed ? m * n : n;
  plan->elements_per_thread = TB_ELEMENTWISE_VECTOR;
  plan->threads_per_block = TB_ELEMENTWISE_THREADS;
  plan->threads_per_row = (plan->cols + TB_ELEMENTWISE_VECTOR - 1) / TB_ELEMENTWISE_VECTOR;
  unsigned long long threads = (unsigned long long)plan->rows * plan->threads_per_row;
  plan->thread_blocks = (threads + TB_ELEMENTWISE_THREADS - 1) / TB_ELEMENTWISE_THREADS;
  plan->rule = packed ? "fixed: packed rows walked as one row of m*n; each thread handles 4 "
                        "consecutive elements"
                      : "fixed: each thread handles 4 consecutive elements of one row";
}
