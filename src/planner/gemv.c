#include "planner/gemv.h"

#include <stdint.h>
#include <stdio.h>

const char *tb_gemv_kind_name(enum tb_gemv_kind kind) {
  switch (kind) {
  case TB_GEMV_COLUMNS: return "columns";
  case TB_GEMV_ROWS: return "rows";
  case TB_GEMV_NONE: break;
  }
  return NULL;
}

bool tb_gemv_applies(size_t m, size_t n) {
  return m == 1 || n == 1;
}

static unsigned long long ceil_div(unsigned long long a, unsigned long long b) {
  return (a + b - 1) / b;
}

/* The k split: none where the outputs' blocks (`grid`) already give every
 * multiprocessor one; else chunks of whole granules (at least
 * TB_GEMV_MIN_GRANULES) so that about TB_GEMV_BLOCKS_PER_SM blocks an SM
 * stream the matrix: one block an SM keeps too few loads in flight to reach
 * copy bandwidth (1x4096x4096 has 4 column blocks for 132 SMs). */
static void split_k(struct tb_gemm_plan *p, unsigned long long grid, unsigned granule) {
  unsigned long long chunk = p->k;
  if (grid < p->multiprocessors) {
    unsigned long long wanted = ceil_div(TB_GEMV_BLOCKS_PER_SM * p->multiprocessors, grid);
    chunk = ceil_div(ceil_div(p->k, wanted), granule) * granule;
    if (chunk < TB_GEMV_MIN_GRANULES * granule) {
      chunk = TB_GEMV_MIN_GRANULES * granule;
    }
  }
  p->k_chunk = chunk < p->k ? chunk : p->k;
  p->k_splits = ceil_div(p->k, p->k_chunk);
}

/* n == 1: warp w of a block reduces row 8 * block + w of A against the
 * vector (B's column), each lane vector_width consecutive k at a time (a
 * warp's load one contiguous stretch of the row), then a shuffle tree. */
static void rows_shape(struct tb_gemm_plan *p) {
  p->gemv = TB_GEMV_ROWS;
  p->block_m = TB_GEMV_ROWS_PER_BLOCK;
  p->block_n = 1;
  p->warps_m = TB_GEMV_ROWS_PER_BLOCK;
  p->warps_n = 1;
  p->grid_m = ceil_div(p->m, p->block_m);
  p->grid_n = 1;
  split_k(p, p->grid_m, 32 * p->vector_width); /* a granule: one load of the warp */
}

/* m == 1: thread t of a block owns vector_width consecutive columns of B
 * and walks its chunk of rows, a warp's load one contiguous 128 or 512
 * bytes of a row of B; x[k] is the same address for all (a broadcast). */
static void columns_shape(struct tb_gemm_plan *p) {
  p->gemv = TB_GEMV_COLUMNS;
  p->block_m = 1;
  p->block_n = TB_GEMV_THREADS * p->vector_width;
  p->thread_m = 1;
  p->thread_n = p->vector_width;
  p->grid_m = 1;
  p->grid_n = ceil_div(p->n, p->block_n);
  split_k(p, p->grid_n, TB_GEMV_COLUMN_GRANULE);
}

void tb_plan_gemv(struct tb_gemm_plan *p, bool aligned) {
  p->vector_width = aligned ? 4 : 1;
  p->threads = TB_GEMV_THREADS;
  snprintf(p->instruction, sizeof p->instruction, "fma");
  if (p->n == 1) {
    rows_shape(p);
  } else {
    columns_shape(p);
  }
  /* the tile's k is the chunk; a whole k past 2^32 - 1 (16 GiB of one row or
   * column) saturates it, k_chunk keeps the value */
  p->block_k = p->k_chunk < UINT32_MAX ? (unsigned)p->k_chunk : UINT32_MAX;
  p->blocks = p->grid_m * p->grid_n * p->k_splits;
  p->waves = ceil_div(p->blocks, p->multiprocessors);
  /* no shared memory, no barrier: loads go straight to registers, a row's
   * sum is a warp's shuffles */
  p->stages = 0;
  p->shared_bytes = 0;
  p->barrier_sites = 0;
  /* __launch_bounds__' minimum: the split's target, 64 registers a thread */
  p->blocks_per_multiprocessor = TB_GEMV_BLOCKS_PER_SM;
  unsigned long long outputs = p->gemv == TB_GEMV_ROWS ? p->m : p->n;
  p->launches = p->k_splits > 1 ? 2 : 1;
  p->workspace_floats = p->k_splits > 1 ? p->k_splits * outputs : 0;
  p->combine_blocks = p->k_splits > 1 ? ceil_div(outputs, TB_GEMV_COMBINE_THREADS) : 0;
  p->rule = "matrix-vector (m = 1 or n = 1, fp32 realizations): n = 1: a warp per row of A, 8 "
            "rows a block; else a thread per vector_width columns of B, 256 threads; where the "
            "grid has fewer blocks than multiprocessors, k is split into chunks of whole "
            "granules (32 x vector_width values of a row of A, or 4 rows of B; at least 4) "
            "for about 4 blocks an SM, and a second launch adds the chunks' partial sums in "
            "chunk order";
}
