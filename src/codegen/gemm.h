/* Pieces shared by the two GEMM generators. */
#ifndef TB_CODEGEN_GEMM_H
#define TB_CODEGEN_GEMM_H

#include <stdbool.h>

#include "codegen/codegen.h"
#include "core/strbuf.h"

/* Header comment and the #defines of the case and tile (M, N, K, SA, SB, BM,
 * BN, BK, THREADS, VW). */
void tb_emit_gemm_constants(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                            const struct tb_case *c);

/* Records the one kernel `tb_main` of the plan (its shared memory static, or
 * dynamic beyond the 48 KiB static limit) and finishes g from the text. */
enum tb_status tb_gemm_finish(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                              bool dynamic_shared, struct tb_generated *g, struct tb_error *err);

/* The tensor-core kernel (TF32, or 3xTF32 when the plan says so). */
enum tb_status tb_codegen_gemm_tensor(const struct tb_gemm_plan *plan, const struct tb_case *c,
                                      struct tb_generated *g, struct tb_error *err);

#endif
