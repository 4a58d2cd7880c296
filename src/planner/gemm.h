/* GEMM plans: how C = A.B maps onto thread blocks, for each realization.
 * One documented rule per realization (docs/gemm.md), no search; recorded
 * like the reduction plans so an independent program can re-derive them. */
#ifndef TB_PLANNER_GEMM_H
#define TB_PLANNER_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "cases/case_params.h"
#include "core/error.h"

struct tb_gemm_plan {
  size_t m, n, k;
  enum tb_realization realization;
  unsigned block_m, block_n, block_k; /* output tile of a block; k per pipeline step */
  /* simt: outputs per thread (thread_m x thread_n); tensor: the warp tile */
  unsigned thread_m, thread_n;
  unsigned warps_m, warps_n; /* mma.sync: warps over the block tile (simt, wgmma: 0) */
  unsigned warpgroups;       /* wgmma: warpgroups of 128 threads along m (else 0) */
  /* blocks an SM is meant to hold (__launch_bounds__' minimum: the registers
   * ptxas may give a thread) */
  unsigned blocks_per_multiprocessor;
  char instruction[32]; /* what multiplies: "fma", "mma.sync.m16n8k8", "wgmma.m64n256k8" */
  unsigned threads;
  unsigned stages;        /* tiles in flight through shared memory */
  unsigned barrier_sites; /* __syncthreads() in the kernel's source */
  unsigned vector_width;  /* floats per global load: 4 when every row start is 16-byte aligned */
  unsigned long long grid_m, grid_n, blocks;
  unsigned shared_bytes;               /* per block, all stages */
  unsigned long long waves;            /* ceil(blocks / multiprocessors) */
  unsigned launches;                   /* kernels a call launches: 2 with wgmma's packing */
  unsigned long long pack_blocks;      /* wgmma: blocks of the packing launch */
  unsigned long long workspace_floats; /* wgmma: the packed, TF32-rounded operands */
  unsigned multiprocessors;
  bool block_from_user; /* --gemm-block, not the rule */
  const char *rule;
};

/* The device a plan is for: its multiprocessors, and whether it runs
 * Hopper's warpgroup MMA (wgmma: compute capability exactly 9.0, code for
 * sm_90a). */
struct tb_gemm_target {
  unsigned multiprocessors;
  bool warpgroup_mma;
};

/* The H200: 132 multiprocessors, wgmma (what `tilebench plan` describes). */
struct tb_gemm_target tb_gemm_target_h200(void);

/* Plans C (m x n) = A (m x k) . B (k x n). `aligned`: both operands' rows
 * start on 16 bytes (k, n, both leading dimensions and the view offset are
 * multiples of 4). A user block (non-zero) replaces the rule's, within the
 * shapes the generator supports; TB_ERR_USAGE otherwise. */
enum tb_status tb_plan_gemm(size_t m, size_t n, size_t k, enum tb_realization realization,
                            struct tb_gemm_block user, struct tb_gemm_target target, bool aligned,
                            struct tb_gemm_plan *p, struct tb_error *err);

#endif
