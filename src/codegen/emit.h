/* Source-emitting helpers shared by the generators. */
#ifndef TB_CODEGEN_EMIT_H
#define TB_CODEGEN_EMIT_H

#include "codegen/codegen.h"
#include "core/strbuf.h"

/* Header comment naming `what`, then kernels/prelude.cuh (TB_INF,
 * tb_aligned16). `op` is unused: the helpers of the row reductions moved to
 * their templates (kernels/); the gemm generators still pass it. */
void tb_emit_prelude(struct tb_strbuf *b, const char *what, enum tb_op op);
/* `extern "C" __global__` signature line of a kernel taking the uniform
 * arguments; min_blocks > 0 tells ptxas how many blocks share an SM (so it
 * may use the registers they leave), 0 leaves it to ptxas. */
void tb_emit_signature(struct tb_strbuf *b, const char *name, unsigned threads,
                       unsigned min_blocks);
/* The same, then two TMA tensor maps by value (map_a, map_b: A's and B's,
 * tb_generated's tensor_maps) of the type tb_tensor_map the source defines. */
void tb_emit_signature_with_maps(struct tb_strbuf *b, const char *name, unsigned threads,
                                 unsigned min_blocks);
/* Finishes g from the text: hash, barrier count, contract. */
enum tb_status tb_emit_finish(struct tb_strbuf *b, struct tb_generated *g, struct tb_error *err);

#endif
