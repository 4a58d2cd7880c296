#include "planner/elementwise.h"

#define TB_TEXT(x) #x
#define TB_NUMBER_TEXT(x) TB_TEXT(x)
#define SCALAR_MAX TB_NUMBER_TEXT(TB_ELEMENTWISE_SCALAR_MAX)

void tb_plan_elementwise(enum tb_op op, size_t m, size_t n, bool packed,
                         struct tb_elementwise_plan *plan) {
  plan->op = op;
  plan->m = m;
  plan->n = n;
  plan->flat = packed;
  plan->rows = packed ? 1 : m;
  plan->cols = packed ? m * n : n;
  const bool scalar = (unsigned long long)m * n <= TB_ELEMENTWISE_SCALAR_MAX;
  plan->elements_per_thread = scalar ? 1 : TB_ELEMENTWISE_VECTOR;
  plan->threads_per_block = scalar ? TB_ELEMENTWISE_SCALAR_THREADS : TB_ELEMENTWISE_THREADS;
  plan->threads_per_row = (plan->cols + plan->elements_per_thread - 1) / plan->elements_per_thread;
  unsigned long long threads = (unsigned long long)plan->rows * plan->threads_per_row;
  plan->thread_blocks = (threads + plan->threads_per_block - 1) / plan->threads_per_block;
  if (scalar) {
    plan->rule = packed ? "by size: at most " SCALAR_MAX " elements, packed rows walked as one "
                          "row of m*n; each thread handles 1 element"
                        : "by size: at most " SCALAR_MAX " elements; each thread handles 1 "
                          "element of one row";
  } else {
    plan->rule = packed ? "by size: over " SCALAR_MAX " elements, packed rows walked as one row "
                          "of m*n; each thread handles 4 consecutive elements"
                        : "by size: over " SCALAR_MAX " elements; each thread handles 4 "
                          "consecutive elements of one row";
  }
}
