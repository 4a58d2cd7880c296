/* Pieces shared by the GEMM generators (gemm.c, gemm_tensor.c,
 * gemm_wgmma.c, gemv.c), defined in gemm_parts.c. */
#ifndef TB_CODEGEN_GEMM_PARTS_H
#define TB_CODEGEN_GEMM_PARTS_H

#include <stdbool.h>

#include "codegen/codegen.h"
#include "core/strbuf.h"

/* The leading dimensions of A and B in a case's view. */
struct tb_gemm_strides {
  size_t a, b;
};

/* The header comment "gemm MxNxK (leading dimensions SA, SB), <plan>" and the
 * #defines of the case (M, N, K, SA, SB), for every gemm generator (the
 * matrix-vector one too); returns the leading dimensions. */
struct tb_gemm_strides tb_emit_gemm_case(struct tb_strbuf *b, const struct tb_case *c,
                                         const char *plan);

/* Header comment and the #defines of the case and tile (M, N, K, SA, SB, BM,
 * BN, BK, THREADS, VW, VW_A, TILE_OFFSET); returns the leading dimensions. */
struct tb_gemm_strides tb_emit_gemm_constants(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                                              const struct tb_case *c);

/* The helpers copy_async (16 bytes, or 4 when VW is 1; zero-fill past the
 * matrix) and load_stage (one stage's A tile, BM x BK at row stride
 * AS_STRIDE, and B tile, BK x BN at BS_STRIDE, then a cp.async group). */
void tb_emit_gemm_stage_loader(struct tb_strbuf *b);

/* The kernel body's STAGES-deep cp.async pipeline up to the multiply: the
 * block's tile (bm, bn), the prologue, and the loop over k tiles opened with
 * stage_a and stage_b pointing at this tile in shared memory. The caller
 * emits the multiply and closes the loop with "  }". */
void tb_emit_gemm_pipeline_open(struct tb_strbuf *b);

/* The accumulator pair v0, v1 into out at (row, col) and (row, col + 1),
 * guarded by N: one 8-byte store when rows are 16-byte aligned. */
void tb_emit_gemm_store_pair(struct tb_strbuf *b, const struct tb_gemm_plan *plan, int indent);

/* wgmma (gemm_wgmma.c): mma_k8, one warpgroup's k8 step of m64n{n}k8 TF32,
 * B by descriptor and the first operand by descriptor or, a_in_registers,
 * from the thread's four-register fragment; and the helpers both wgmma
 * kernels synchronise with (expect_bytes, wait_phase, descriptor, hold). */
void tb_emit_wgmma_step(struct tb_strbuf *b, unsigned n, bool a_in_registers);
void tb_emit_wgmma_sync_helpers(struct tb_strbuf *b);

/* Records the plan's main kernel `tb_main` (its shared memory dynamic: the
 * tiles can exceed the 48 KiB static limit), last of its launches (a
 * packing launch, recorded by the caller, goes first), the workspace and
 * the compute capability, and finishes g. */
enum tb_status tb_gemm_finish(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                              struct tb_generated *g, struct tb_error *err);

#endif
