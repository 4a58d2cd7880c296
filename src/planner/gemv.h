/* The matrix-vector rule of the gemm planner (docs/gemm.md, "Matrix-vector
 * plans"): m == 1 or n == 1 makes C = A.B a product of a matrix and a
 * vector, memory-bound (2 FLOPs a matrix element), so its plan streams the
 * matrix once with coalesced loads and spreads k over blocks where the
 * outputs alone leave multiprocessors idle. Used by tb_plan_gemm (gemm.c). */
#ifndef TB_PLANNER_GEMV_H
#define TB_PLANNER_GEMV_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/gemm.h"

#define TB_GEMV_THREADS 256         /* threads of a block, both kernels */
#define TB_GEMV_ROWS_PER_BLOCK 8    /* n == 1: a warp per row of A */
#define TB_GEMV_BLOCKS_PER_SM 4     /* what a split aims at: 32 warps of loads an SM */
#define TB_GEMV_MIN_GRANULES 4      /* the shortest chunk of k a split gives a block */
#define TB_GEMV_COLUMN_GRANULE 4    /* m == 1: rows of B a chunk is a multiple of */
#define TB_GEMV_COMBINE_THREADS 256 /* the second launch: a thread per output */

/* Whether the rule plans (m, n, k) as a matrix-vector product: m or n is 1,
 * whatever the realization. A product of fp32 FMAs meets every realization's
 * accuracy contract, TF32's too, and there is no tile to feed a tensor core:
 * cuBLAS, allowed TF32, runs the same kernel as without it at 1x4096x4096
 * and 4096x1x4096 (docs/gemm.md, "Matrix-vector plans"). */
bool tb_gemv_applies(size_t m, size_t n);

/* Fills the plan's facts (p's m, n, k, realization and multiprocessors set):
 * the kind (rows when n == 1, else columns), its block, grid, k split,
 * launches and workspace. `aligned` as for tb_plan_gemm: 4-float loads of
 * the matrix (and, for rows, of the contiguous vector) where it holds. */
void tb_plan_gemv(struct tb_gemm_plan *p, bool aligned);

#endif
