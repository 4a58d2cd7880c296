#include "planner/gemm.h"

void tb_plan_gemm(size_t m, size_t n, size_t k, unsigned multiprocessors, struct tb_gemm_plan *p) {
  p->m = m;
  p->n = n;
  p->k = k;
  p->block_m = TB_GEMM_BLOCK_M;
  p->block_n = TB_GEMM_BLOCK_N;
  p->block_k = TB_GEMM_BLOCK_K;
  p->thread_m = TB_GEMM_THREAD_M;
  p->thread_n = TB_GEMM_THREAD_N;
  p->threads = (p->block_m / p->thread_m) * (p->block_n / p->thread_n);
  p->grid_m = (m + p->block_m - 1) / p->block_m;
  p->grid_n = (n + p->block_n - 1) / p->block_n;
  p->blocks = p->grid_m * p->grid_n;
  p->shared_bytes = 4 * p->block_k * ((p->block_m + 1) + (p->block_n + 1));
  p->multiprocessors = multiprocessors;
  p->waves = (p->blocks + multiprocessors - 1) / multiprocessors;
  p->rule = "fixed SIMT tiling: 64x64 output tiles, k in steps of 16 through shared memory, "
            "4x4 outputs per thread";
}
