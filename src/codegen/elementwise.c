/* add and gelu_add: each thread handles one element, or 4 consecutive ones,
 * of one row (of the whole matrix, when packed), as the plan says. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "codegen/emit.h"

/* One element a thread (plans of at most TB_ELEMENTWISE_SCALAR_MAX elements,
 * so every offset fits 32 bits): 32-bit indices, and a flat walk finds no
 * row, since the instructions before such a kernel's one load are on its
 * critical path. */
_Static_assert(4ULL * TB_ELEMENTWISE_SCALAR_MAX < (1ULL << 31),
               "a scalar plan's offsets, strided padding included, fit 32 bits");
static void emit_scalar_body(struct tb_strbuf *b, const struct tb_elementwise_plan *plan,
                             const char *expr) {
  tb_strbuf_printf(b,
                   "  const unsigned t = blockIdx.x * %uu + threadIdx.x;\n"
                   "  if (t >= M * TPR) return;\n"
                   "  const unsigned row = %s, e = %s;\n"
                   "  const float s = x[row * SX + e] + y[row * SX + e];\n"
                   "  out[row * N + e] = %s;\n}\n",
                   plan->threads_per_block, plan->flat ? "0u" : "t / TPR",
                   plan->flat ? "t" : "t % TPR", expr);
}

/* Four consecutive elements as float4 where the rows allow (16-byte aligned,
 * all four in the row), else one at a time. */
static void emit_vector_body(struct tb_strbuf *b, const struct tb_elementwise_plan *plan,
                             const char *expr) {
  tb_strbuf_printf(
      b,
      "  const long long t = (long long)blockIdx.x * %u + threadIdx.x;\n"
      "  if (t >= M * TPR) return;\n"
      "  const long long row = t / TPR, e = 4LL * (t %% TPR);\n"
      "  const float *ar = x + row * SX, *br = y + row * SX;\n"
      "  float *orow = out + row * N;\n"
      "  if (e + 3 < N && tb_aligned16(ar + e) && tb_aligned16(br + e) && tb_aligned16(orow + e)) "
      "{\n"
      "    const float4 a4 = *reinterpret_cast<const float4 *>(ar + e);\n"
      "    const float4 b4 = *reinterpret_cast<const float4 *>(br + e);\n"
      "    float r[4], s;\n"
      "    s = a4.x + b4.x; r[0] = %s;\n"
      "    s = a4.y + b4.y; r[1] = %s;\n"
      "    s = a4.z + b4.z; r[2] = %s;\n"
      "    s = a4.w + b4.w; r[3] = %s;\n"
      "    *reinterpret_cast<float4 *>(orow + e) = make_float4(r[0], r[1], r[2], r[3]);\n"
      "  } else {\n"
      "    for (int i = 0; i < 4 && e + i < N; ++i) {\n"
      "      const float s = ar[e + i] + br[e + i];\n"
      "      orow[e + i] = %s;\n"
      "    }\n"
      "  }\n}\n",
      plan->threads_per_block, expr, expr, expr, expr, expr);
}

enum tb_status tb_codegen_elementwise(const struct tb_elementwise_plan *plan,
                                      const struct tb_case *c, struct tb_generated *g,
                                      struct tb_error *err) {
  memset(g, 0, sizeof *g);
  struct tb_strbuf b = {0};
  char what[160];
  if (plan->m != c->shape.m || plan->n != c->shape.n ||
      plan->flat != (c->view.kind == TB_VIEW_PACKED)) {
    return tb_fail(err, TB_ERR_RUN, "elementwise plan does not belong to the case");
  }
  snprintf(what, sizeof what, "%s %zux%zu (row stride %zu), elementwise%s", c->op->name, c->shape.m,
           c->shape.n, c->view.row_stride, plan->flat ? ", walked as one row" : "");
  tb_emit_prelude(&b, what, c->op->op);
  /* M x N as the kernel walks it (1 x m*n when flat), SX its input row stride;
   * unsigned where the indices are */
  const bool scalar = plan->elements_per_thread == 1;
  const char *suffix = scalar ? "u" : "LL";
  tb_strbuf_printf(&b, "#define M %zu%s\n#define N %zu%s\n#define SX %zu%s\n#define TPR %llu%s\n",
                   plan->rows, suffix, plan->cols, suffix,
                   plan->flat ? plan->cols : c->view.row_stride, suffix, plan->threads_per_row,
                   suffix);
  tb_emit_signature(&b, "tb_main", plan->threads_per_block, 0);
  const char *expr = c->op->op == TB_OP_GELU_ADD
                         ? "0.5f * s * (1.0f + erff(s * 0.7071067811865475f))" /* exact GELU */
                         : "s";
  if (scalar) {
    emit_scalar_body(&b, plan, expr);
  } else {
    emit_vector_body(&b, plan, expr);
  }
  g->kernel_count = 1;
  snprintf(g->kernels[0].name, sizeof g->kernels[0].name, "tb_main");
  g->kernels[0].threads_per_block = plan->threads_per_block;
  g->kernels[0].blocks = plan->thread_blocks;
  return tb_emit_finish(&b, g, err);
}
