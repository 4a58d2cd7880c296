/* Code generator: plan -> CUDA C source, deterministic (the same plan and
 * case give the same bytes and so the same SHA-256). The source is what runs
 * and what is archived under sources/<sha256>.cu. No GPU needed. */
#ifndef TB_CODEGEN_CODEGEN_H
#define TB_CODEGEN_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>

#include "cases/case.h"
#include "core/error.h"
#include "planner/elementwise.h"
#include "planner/gemm.h"
#include "planner/planner.h"

#define TB_MAX_KERNELS 2

/* Every generated kernel takes the same arguments, unused ones NULL:
 *   (const float *x, const float *y, const float *weight, const float *bias,
 *    float *out, float *workspace)
 * x and y point at element [0,0] of their views (the offset applied). */
struct tb_kernel_spec {
  char name[32];
  unsigned threads_per_block;
  unsigned long long blocks;
  unsigned static_shared_bytes;
  unsigned dynamic_shared_bytes; /* requested at launch (beyond the 48 KiB static limit) */
  unsigned cluster_blocks;       /* blocks per cluster fixed in the source, 0 without */
  /* the share of L1 the kernel asks to be shared memory, in per cent (the
   * driver's carveout hint); 0: no hint */
  unsigned shared_carveout_percent;
  /* launched cooperatively: every block resident at once or no launch (the
   * blocks of a persistent row wait for each other) */
  bool cooperative;
};

/* A TMA tensor map a kernel takes by value after the uniform arguments: a
 * 2-D view of one operand (rows of `inner` floats, `row_stride` floats
 * apart) copied into shared memory a box at a time, zeros past its edges.
 * The backend encodes one per buffer set (the operand's address is in it). */
struct tb_tensor_map_spec {
  bool of_y;                      /* y's view (B), else x's (A) */
  unsigned long long inner, rows; /* the view's extents, in floats and rows */
  unsigned long long row_stride;  /* floats from a row to the next */
  unsigned box_inner, box_rows;   /* what one copy moves */
  bool swizzle_128;               /* 128-byte swizzle (wgmma's layout), else none */
  bool tf32;                      /* TFLOAT32 data type, else FLOAT32 */
};
#define TB_MAX_TENSOR_MAPS 2

struct tb_generated {
  char *source;
  char sha256[65];
  unsigned kernel_count; /* launched in order for one call */
  struct tb_kernel_spec kernels[TB_MAX_KERNELS];
  unsigned barrier_sites;  /* __syncthreads() sites in the source */
  size_t workspace_floats; /* device scratch the kernels need */
  /* capability contract: what a device must offer to run the kernels */
  int min_cc_major, min_cc_minor;
  /* code for the architecture-specific target (sm_90a): runs on exactly
   * min_cc, not on newer devices */
  bool arch_specific;
  unsigned max_threads_per_block;
  unsigned max_static_shared_bytes;
  unsigned max_dynamic_shared_bytes;
  /* the tensor maps every kernel of the call takes, in parameter order */
  unsigned tensor_map_count;
  struct tb_tensor_map_spec tensor_maps[TB_MAX_TENSOR_MAPS];
};

/* Row reductions from a plan; the case gives the view (row stride). */
enum tb_status tb_codegen_reduction(const struct tb_plan *plan, const struct tb_case *c,
                                    struct tb_generated *out, struct tb_error *err);
/* add and gelu_add. */
enum tb_status tb_codegen_elementwise(const struct tb_elementwise_plan *plan,
                                      const struct tb_case *c, struct tb_generated *out,
                                      struct tb_error *err);
/* gemm from its plan: SIMT or tensor cores, as the plan's realization says. */
enum tb_status tb_codegen_gemm(const struct tb_gemm_plan *plan, const struct tb_case *c,
                               struct tb_generated *out, struct tb_error *err);
void tb_generated_free(struct tb_generated *g);

#endif
