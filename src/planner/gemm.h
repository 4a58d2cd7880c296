/* The SIMT GEMM plan: one documented rule (no search yet), recorded like the
 * reduction plans so an independent program can re-derive it. */
#ifndef TB_PLANNER_GEMM_H
#define TB_PLANNER_GEMM_H

#include <stddef.h>

#define TB_GEMM_BLOCK_M 64
#define TB_GEMM_BLOCK_N 64
#define TB_GEMM_BLOCK_K 16
#define TB_GEMM_THREAD_M 4 /* outputs per thread: 4 x 4 in registers */
#define TB_GEMM_THREAD_N 4

struct tb_gemm_plan {
  size_t m, n, k;
  unsigned block_m, block_n, block_k;
  unsigned thread_m, thread_n;
  unsigned threads; /* (block_m / thread_m) * (block_n / thread_n) */
  unsigned long long grid_m, grid_n, blocks;
  unsigned shared_bytes;    /* a and b tiles, one padding column each */
  unsigned long long waves; /* ceil(blocks / multiprocessors) */
  unsigned multiprocessors;
  const char *rule;
};

void tb_plan_gemm(size_t m, size_t n, size_t k, unsigned multiprocessors, struct tb_gemm_plan *p);

#endif
