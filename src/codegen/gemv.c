/* The matrix-vector gemm kernels (plans with a gemv kind, planner/gemv.h):
 * the constants of the case and the plan, then kernels/gemv.cuh: tb_main
 * (rows or columns, as the plan says) and, when k is split, tb_combine, the
 * second launch that adds the chunks' partial sums in chunk order. */
#include <stdio.h>

#include "codegen/emit.h"
#include "codegen/gemm.h"
#include "codegen/gemm_parts.h"
#include "codegen/templates.h"
#include "planner/gemv.h"

static unsigned long long outputs_of(const struct tb_gemm_plan *plan) {
  return plan->gemv == TB_GEMV_ROWS ? plan->m : plan->n;
}

static void emit_constants(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                           const struct tb_case *c) {
  char kind[120];
  snprintf(kind, sizeof kind, "%s matrix-vector (%s), %u-float loads, k in %llu chunk(s) of %llu",
           tb_realization_name(plan->realization), tb_gemv_kind_name(plan->gemv),
           plan->vector_width, plan->k_splits, plan->k_chunk);
  tb_emit_gemm_case(b, c, kind);
  unsigned long long grid_out = plan->gemv == TB_GEMV_ROWS ? plan->grid_m : plan->grid_n;
  tb_strbuf_printf(b,
                   "#define GEMV_ROWS %d\n#define VW %u\n#define THREADS %u\n"
                   "#define MIN_BLOCKS %u\n#define GRID_OUT %lluLL\n#define KCHUNK %lluLL\n"
                   "#define SPLITS %llu\n#define OUTPUTS %lluLL\n#define COMBINE_THREADS %u\n",
                   plan->gemv == TB_GEMV_ROWS, plan->vector_width, plan->threads,
                   plan->blocks_per_multiprocessor, grid_out, plan->k_chunk, plan->k_splits,
                   outputs_of(plan), TB_GEMV_COMBINE_THREADS);
}

static void record_kernel(struct tb_kernel_spec *spec, const char *name, unsigned threads,
                          unsigned long long blocks) {
  snprintf(spec->name, sizeof spec->name, "%s", name);
  spec->threads_per_block = threads;
  spec->blocks = blocks;
}

enum tb_status tb_codegen_gemv(const struct tb_gemm_plan *plan, const struct tb_case *c,
                               struct tb_generated *g, struct tb_error *err) {
  struct tb_strbuf b = {0};
  emit_constants(&b, plan, c);
  tb_strbuf_printf(&b, "%s", tb_kernel_gemv);
  record_kernel(&g->kernels[0], "tb_main", plan->threads, plan->blocks);
  if (plan->launches > 1) {
    tb_strbuf_printf(&b, "%s", tb_kernel_gemv_combine);
    record_kernel(&g->kernels[1], "tb_combine", TB_GEMV_COMBINE_THREADS, plan->combine_blocks);
  }
  g->kernel_count = plan->launches;
  g->workspace_floats = plan->workspace_floats;
  /* tb_emit_finish's contract: warp shuffles and __launch_bounds__ (7.0);
   * no cp.async, no tensor cores */
  return tb_emit_finish(&b, g, err);
}
