/* GEMM plans: how C = A.B maps onto thread blocks, for each realization.
 * One documented rule per realization (docs/gemm.md), no search; recorded
 * like the reduction plans so an independent program can re-derive them. */
#ifndef TB_PLANNER_GEMM_H
#define TB_PLANNER_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "cases/case_params.h"
#include "core/error.h"

/* A gemm with m == 1 or n == 1 under an fp32 realization is a
 * matrix-vector product, memory-bound: its own kernels stream the matrix
 * operand once (gemv.h, docs/gemm.md). */
enum tb_gemv_kind {
  TB_GEMV_NONE = 0, /* a tiled gemm */
  TB_GEMV_COLUMNS,  /* m == 1: y = x.B, a thread per vector_width columns of B */
  TB_GEMV_ROWS,     /* n == 1: y = A.x, a warp per row of A */
};

/* "columns", "rows" (the plan record's `gemv`), NULL for TB_GEMV_NONE. */
const char *tb_gemv_kind_name(enum tb_gemv_kind kind);

struct tb_gemm_plan {
  size_t m, n, k;
  enum tb_realization realization;
  /* output tile of a block; k per pipeline step (matrix-vector: k_chunk, the
   * k a block covers) */
  unsigned block_m, block_n, block_k;
  /* simt: outputs per thread (thread_m x thread_n); tensor: the warp tile;
   * matrix-vector columns: 1 x vector_width, rows: 0 (a warp per output) */
  unsigned thread_m, thread_n;
  /* mma.sync: warps over the block tile; matrix-vector rows: 8 x 1, a warp
   * per row (simt, wgmma, columns: 0) */
  unsigned warps_m, warps_n;
  unsigned warpgroups; /* wgmma: warpgroups of 128 threads, along m (along n with tensor maps) */
  /* wgmma: A and B copied by TMA straight from the inputs in one launch (A's
   * tiles swizzled for wgmma, B's read into the registers wgmma takes its
   * first operand from: C^T = B^T A^T), else packed by a first launch */
  bool tensor_maps;
  /* blocks an SM is meant to hold (__launch_bounds__' minimum: the registers
   * ptxas may give a thread) */
  unsigned blocks_per_multiprocessor;
  char instruction[32]; /* what multiplies: "fma", "mma.sync.m16n8k8", "wgmma.m64n256k8" */
  unsigned threads;
  unsigned stages;        /* tiles in flight through shared memory */
  unsigned barrier_sites; /* __syncthreads() in the kernel's source */
  /* floats per global load of B and store of the output (tiled), or of the
   * matrix (matrix-vector): 4 where those rows start on 16 bytes */
  unsigned vector_width;
  unsigned
      a_vector_width; /* tiled: floats per global load of A, 4 where its rows start on 16 bytes */
  unsigned long long grid_m, grid_n, blocks;
  unsigned shared_bytes;          /* per block, all stages */
  unsigned long long waves;       /* ceil(blocks / multiprocessors) */
  unsigned launches;              /* kernels a call launches: 2 with wgmma's packing or a split k */
  unsigned long long pack_blocks; /* wgmma: blocks of the packing launch */
  /* wgmma: the packed, TF32-rounded operands; a split k: the partial sums */
  unsigned long long workspace_floats;
  unsigned multiprocessors;
  /* matrix-vector plans, and the single-launch wgmma kernel's grids under a
   * wave (else k_splits 1, k_chunk k, combine_blocks 0): k is cut into
   * k_splits chunks of k_chunk, one block each (a tile's); with more than
   * one, the first launch writes every chunk's partial sums to the workspace
   * and a second of combine_blocks adds them in chunk order */
  enum tb_gemv_kind gemv;
  unsigned long long k_splits, k_chunk, combine_blocks;
  bool block_from_user; /* --gemm-block, not the rule */
  const char *rule;
};

/* The device a plan is for: its multiprocessors, and whether it runs
 * Hopper's warpgroup MMA (wgmma: compute capability exactly 9.0, code for
 * sm_90a). */
struct tb_gemm_target {
  unsigned multiprocessors;
  bool warpgroup_mma;
  bool tensor_maps; /* the driver encodes TMA tensor maps (cuTensorMapEncodeTiled) */
};

/* The H200: 132 multiprocessors, wgmma (what `tilebench plan` describes). */
struct tb_gemm_target tb_gemm_target_h200(void);

/* Which operands' rows start on 16 bytes: A's where k, its leading dimension
 * and the view offset are multiples of 4 floats; B's where n, its leading
 * dimension and the offset are, or B is one contiguous column (n and its
 * leading dimension 1). Each operand is loaded 4 floats at once where its own
 * rows are aligned: a k of 13 leaves B's loads and the output's stores wide. */
struct tb_gemm_alignment {
  bool a_rows, b_rows;
};
/* The single-launch wgmma kernel's split of k (gemm.c, split_k): chunks of
 * at least this many k tiles, so each keeps its pipeline's stages filling */
#define TB_GEMM_SPLIT_MIN_TILES 4
/* ... and two chunks only where each keeps at least this many k tiles: 1024^3
 * in two of 16 ran 1.03x the time of k whole, 1024x1024x4096 in two of 64
 * 0.80x (evidence/2026-12-07-h100-gemm-wgmma-split-k) */
#define TB_GEMM_SPLIT_PAIR_MIN_TILES 64
#define TB_GEMM_ALIGNED ((struct tb_gemm_alignment){true, true})
#define TB_GEMM_UNALIGNED ((struct tb_gemm_alignment){false, false})

/* Plans C (m x n) = A (m x k) . B (k x n), `align` as above (the tiled
 * kernels load B 4 floats at once only where n is a multiple of 4 too).
 * m == 1 or n == 1 under simt or tensor-3xtf32 without a
 * user block is planned as a matrix-vector product (gemv.h). A user block
 * (non-zero) replaces the rule's tile, within the shapes the generator
 * supports; TB_ERR_USAGE otherwise. */
enum tb_status tb_plan_gemm(size_t m, size_t n, size_t k, enum tb_realization realization,
                            struct tb_gemm_block user, struct tb_gemm_target target,
                            struct tb_gemm_alignment align, struct tb_gemm_plan *p,
                            struct tb_error *err);

#endif
