/* Source-emitting helpers shared by the generators. */
#ifndef TB_CODEGEN_EMIT_H
#define TB_CODEGEN_EMIT_H

#include "codegen/codegen.h"
#include "core/strbuf.h"

/* Header comment and the helpers `op` uses: a warp sum for every row
 * reduction, a max reduction and the online-softmax merge only for softmax,
 * the Welford merge only for layernorm. */
void tb_emit_prelude(struct tb_strbuf *b, const char *what, enum tb_op op);
/* `extern "C" __global__` signature line of a kernel taking the uniform
 * arguments; min_blocks > 0 tells ptxas how many blocks share an SM (so it
 * may use the registers they leave), 0 leaves it to ptxas. */
void tb_emit_signature(struct tb_strbuf *b, const char *name, unsigned threads,
                       unsigned min_blocks);
/* The same for a kernel launched in clusters of `cluster` blocks along x
 * (__cluster_dims__: the grid's x must be a multiple of it), at least one
 * block per SM. */
void tb_emit_cluster_signature(struct tb_strbuf *b, const char *name, unsigned threads,
                               unsigned cluster);
/* Finishes g from the text: hash, barrier count, contract. */
enum tb_status tb_emit_finish(struct tb_strbuf *b, struct tb_generated *g, struct tb_error *err);

#endif
