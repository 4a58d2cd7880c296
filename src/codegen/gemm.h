/* The GEMM generators tb_codegen_gemm (gemm.c) hands a plan to besides its
 * own SIMT one (tensor cores, matrix-vector);
 * what they share with the SIMT generator is in gemm_parts.h. */
#ifndef TB_CODEGEN_GEMM_H
#define TB_CODEGEN_GEMM_H

#include "codegen/codegen.h"

/* The Hopper tensor-core kernel (wgmma, TF32): plans with warpgroups. */
enum tb_status tb_codegen_gemm_wgmma(const struct tb_gemm_plan *plan, const struct tb_case *c,
                                     struct tb_generated *g, struct tb_error *err);

/* The single-launch wgmma kernel: plans with warpgroups and tensor_maps
 * (A and B copied by TMA straight from the inputs). */
enum tb_status tb_codegen_gemm_wgmma_tma(const struct tb_gemm_plan *plan, const struct tb_case *c,
                                         struct tb_generated *g, struct tb_error *err);

/* The mma.sync tensor-core kernel (TF32, or 3xTF32 when the plan says so). */
enum tb_status tb_codegen_gemm_tensor(const struct tb_gemm_plan *plan, const struct tb_case *c,
                                      struct tb_generated *g, struct tb_error *err);

/* The matrix-vector kernels: plans with a gemv kind (planner/gemv.h). */
enum tb_status tb_codegen_gemv(const struct tb_gemm_plan *plan, const struct tb_case *c,
                               struct tb_generated *g, struct tb_error *err);

#endif
