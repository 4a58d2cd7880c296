/* Row-reduction kernels from plans (docs/method.md §7 mappings).
 *
 * The kernels are CUDA templates (src/codegen/kernels/, .cuh files embedded at
 * build time): one operator per row operation (its statistics, merge, finish
 * and output) and one template per mapping (its loops, reductions and
 * launches). This file only chooses them and writes the plan's facts as
 * constants ahead of their text:
 *
 *   header, prelude      what the kernel is; TB_INF, tb_aligned16
 *   constants            M, N, SX, EPS; the mapping's (widths, threads, ...)
 *   row_common.cuh       warp sum, loads, stores, output groups
 *   barrier sites        one block barrier per site of the plan
 *   <operator>.cuh       e.g. softmax.cuh, then `using tb_row_op = ...`
 *   [streaming.cuh]      streamed statistics (all mappings but register rows)
 *   <mapping>.cuh        the kernels: tb_main, or tb_partials and tb_finish
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/templates.h"

/* ---- the operators ------------------------------------------------------ */

struct row_operator {
  enum tb_op op;
  const char *type;     /* the operator's struct in its template */
  const char *template; /* its text */
  double eps;           /* EPS of the operation (cases/ops.h), 0: none */
  /* reduction sites of its register-row passes (register_passes in the
   * template; each a block barrier when a row spans warps): what the
   * template does, checked against the planner's count by test_codegen */
  unsigned register_reductions;
};

static const struct row_operator row_operators[] = {
    {TB_OP_SUM, "tb_sum", tb_kernel_sum, 0.0, 1},
    {TB_OP_SOFTMAX, "tb_softmax", tb_kernel_softmax, 0.0, 2},
    {TB_OP_RMSNORM, "tb_rmsnorm", tb_kernel_rmsnorm, TB_RMSNORM_EPS, 1},
    {TB_OP_LAYERNORM, "tb_layernorm", tb_kernel_layernorm, TB_LAYERNORM_EPS, 2},
};

static const struct row_operator *row_operator_of(enum tb_op op) {
  for (size_t i = 0; i < sizeof row_operators / sizeof row_operators[0]; ++i) {
    if (row_operators[i].op == op) {
      return &row_operators[i];
    }
  }
  return NULL;
}

/* EPS as a float literal: the fewest digits that give the same float. */
static void emit_eps(struct tb_strbuf *b, double eps) {
  char text[32];
  for (int digits = 1; digits <= 9; ++digits) {
    snprintf(text, sizeof text, "%.*g", digits, eps);
    if ((float)strtod(text, NULL) == (float)eps) {
      break;
    }
  }
  tb_strbuf_printf(b, "#define EPS %sf\n", text);
}

/* The case's constants. N unsuffixed: an int wherever it fits, so the
 * per-element masks `e + i < N` compare 32-bit indices (a 64-bit compare is
 * two ALU instructions, and the short-row softmax is instruction-bound). */
static void emit_case_constants(struct tb_strbuf *b, const struct tb_case *c,
                                const struct row_operator *op) {
  tb_strbuf_printf(b, "#define M %zuLL\n#define N %zu\n#define SX %zuLL\n", c->shape.m, c->shape.n,
                   c->view.row_stride);
  if (op->eps != 0.0) {
    emit_eps(b, op->eps);
  }
}

/* ---- the mappings: their constants, barrier sites and launches ---------- */

/* Rows of at most this many groups a lane, in blocks of at most 384 threads
 * (170 registers a thread to spare), load their weight and bias with the row,
 * so the output does not wait for them after the reductions. ptxas (sm_90)
 * over s = 9..32, G = 1..4 and several n each: at most 79 registers up to
 * 384 threads and no spills; at 416 rmsnorm G = 4 spilled 4 bytes (at 48
 * registers), at 928 and beyond layernorm G = 4 spilled at 64 (docs/planner.md). */
#define PREFETCH_GROUPS 4
#define PREFETCH_THREADS 384

/* The split row's second launch (row outputs): one block per chunk. */
#define SPLIT_FINISH_THREADS 256

static unsigned register_groups(const struct tb_candidate *cand) {
  return (cand->slots + 3) / 4;
}

/* CONTIGUOUS_FALLBACK (register_rows.cuh): one warp a row (no block barrier
 * for a row's two code paths to part at) of at most FALLBACK_GROUPS groups a
 * lane (both paths in one kernel: at 7, softmax 37x769 s1p8 spilled) where
 * the view may leave rows misaligned (16-byte aligned allocations: a stride
 * or first-row offset not a multiple of 4). */
#define FALLBACK_GROUPS 4

static bool register_rows_contiguous_fallback(const struct tb_candidate *cand,
                                              const struct tb_case *c) {
  bool misaligned = c->view.row_stride % 4 != 0 || c->view.offset % 4 != 0;
  return cand->subgroups == 1 && register_groups(cand) <= FALLBACK_GROUPS && misaligned;
}

static void register_rows_constants(struct tb_strbuf *b, const struct tb_plan *plan,
                                    const struct tb_case *c) {
  const struct tb_candidate *cand = &plan->selected;
  unsigned groups = register_groups(cand);
  bool prefetch =
      c->op->has_weight && groups <= PREFETCH_GROUPS && cand->threads <= PREFETCH_THREADS;
  tb_strbuf_printf(b,
                   "#define S %u\n#define P %u\n#define WIDTH %u\n#define G %u\n"
                   "#define THREADS %u\n#define PREFETCH %d\n#define CONTIGUOUS_FALLBACK %d\n",
                   cand->subgroups, cand->packing, cand->width, groups, cand->threads, prefetch,
                   register_rows_contiguous_fallback(cand, c));
}

/* VEC4: rows of whole groups of 4 for every lane (n a multiple of 4 * lanes,
 * so the groups dealt round-robin fill the same V slots as the elements
 * dealt one at a time) whose stride keeps them 16-byte aligned alike: loaded
 * and stored 16 bytes at once. */
static void subwarp_rows_constants(struct tb_strbuf *b, const struct tb_plan *plan,
                                   const struct tb_case *c) {
  const struct tb_subwarp_facts *f = &plan->subwarp;
  bool vec4 = c->shape.n % (4ULL * f->lanes) == 0 && c->view.row_stride % 4 == 0;
  tb_strbuf_printf(b,
                   "#define LANES %u\n#define V %u\n#define ROWS %u\n#define THREADS %u\n"
                   "#define VEC4 %d\n",
                   f->lanes, f->slots, f->rows_per_block, f->threads_per_block, vec4);
}

static void block_streaming_constants(struct tb_strbuf *b, const struct tb_plan *plan,
                                      const struct tb_case *c) {
  (void)c;
  tb_strbuf_printf(b, "#define THREADS %u\n", plan->stream.threads_per_block);
}

static void chunk_constants(struct tb_strbuf *b, const struct tb_stream_facts *f) {
  tb_strbuf_printf(b, "#define K %uLL\n#define CHUNK %lluLL\n#define THREADS %u\n",
                   f->blocks_per_row, f->chunk_elements, f->threads_per_block);
}

/* ROW_OUTPUT: two launches (a row output); else one, whose last block of a
 * row merges it. */
static void split_row_constants(struct tb_strbuf *b, const struct tb_plan *plan,
                                const struct tb_case *c) {
  chunk_constants(b, &plan->stream);
  tb_strbuf_printf(b, "#define ROW_OUTPUT %d\n", !c->op->output_is_vector);
  if (!c->op->output_is_vector) {
    tb_strbuf_printf(b, "#define FINISH_THREADS %u\n", SPLIT_FINISH_THREADS);
  }
}

/* Whether every thread of a cluster row whose chunk is in registers holds
 * ITERS full groups of its row: then every merge of statistics joins equal
 * counts (layernorm.cuh, EVEN_COUNTS). */
static bool cluster_counts_even(const struct tb_stream_facts *f, const struct tb_case *c,
                                unsigned long long iters) {
  return f->chunk_elements == 4ULL * iters * f->threads_per_block &&
         f->chunk_elements * f->blocks_per_row == c->shape.n;
}

/* ITERS only for a chunk in registers: the audit reads its presence as the
 * plan's one memory pass. PREFETCH only for a chunk in registers of an
 * operation with a weight (rmsnorm, layernorm) of at most PREFETCH_GROUPS
 * groups a thread, as register rows, in a grid of at most one block a
 * multiprocessor: the weight and bias groups are loaded with the chunk,
 * before the row's statistics are exchanged, so the output does not wait for
 * them after that.
 * With more blocks than multiprocessors another block's work hides that
 * wait, and the early loads only delay the reduction: on the H200 the
 * prefetch took layernorm 8x65536 (128 blocks) from 7.87 to 7.35 us and made
 * 64x8192 and 100x8195 (256 and 300 blocks) 6 to 14 % slower
 * (evidence/2026-12-01-h200-param-prefetch-cluster). Absent elsewhere: the
 * other cluster rows' constants are unchanged. */
static void cluster_row_constants(struct tb_strbuf *b, const struct tb_plan *plan,
                                  const struct tb_case *c) {
  const struct tb_stream_facts *f = &plan->stream;
  bool cached = tb_cluster_chunk_cached(f);
  chunk_constants(b, f);
  tb_strbuf_printf(b, "#define CHUNK_CACHED %d\n", cached);
  if (f->cache_shared_bytes > 0) {
    tb_strbuf_printf(b, "#define CHUNK_SHARED 1\n");
  }
  if (cached) {
    unsigned long long iters =
        (f->chunk_elements + 4ULL * f->threads_per_block - 1) / (4ULL * f->threads_per_block);
    tb_strbuf_printf(b, "#define ITERS %llu\n", iters);
    if (cluster_counts_even(f, c, iters)) {
      tb_strbuf_printf(b, "#define EVEN_COUNTS 1\n");
    }
    if (c->op->has_weight && iters <= PREFETCH_GROUPS &&
        f->thread_blocks <= plan->limits.multiprocessors) {
      tb_strbuf_printf(b, "#define PREFETCH 1\n");
    }
  }
  /* literal in the text: the backend and the audit read the cluster from it */
  tb_strbuf_printf(b, "#define TB_CLUSTER_DIMS __cluster_dims__(%u, 1, 1)\n", f->cluster_blocks);
}

/* ROW_GROUPS: groups of K blocks, a row a group at a time; GROUPS groups of
 * 4 a thread in a ring of RING; the row's reads and writes streamed past L2,
 * which keeps the weight and bias every row reads. PARAMS_AHEAD where every
 * group takes one row and the ring holds the weight and bias groups beside
 * the chunk's: they are copied with the chunk, before the exchange. */
static void persistent_row_constants(struct tb_strbuf *b, const struct tb_plan *plan,
                                     const struct tb_case *c) {
  const struct tb_stream_facts *f = &plan->stream;
  unsigned long long groups =
      (f->chunk_elements + 4ULL * f->threads_per_block - 1) / (4ULL * f->threads_per_block);
  unsigned ring = f->cache_shared_bytes / (16U * f->threads_per_block);
  unsigned params = (c->op->has_weight ? 1 : 0) + (c->op->has_bias ? 1 : 0);
  chunk_constants(b, f);
  tb_strbuf_printf(b,
                   "#define ROW_GROUPS %uLL\n#define GROUPS %llu\n#define RING %u\n"
                   "#define STREAMED_ONCE 1\n#define STREAMING_STORES 1\n",
                   f->row_groups, groups, ring);
  if (params > 0 && f->row_groups >= c->shape.m && groups * (1 + params) <= ring) {
    tb_strbuf_printf(b, "#define PARAMS_AHEAD 1\n");
  }
}

/* Block barriers each template has: register rows one per reduction of the
 * row when it spans warps; the streaming mappings one for the block's
 * statistics (cluster rows no more: the row's statistics come counted on an
 * mbarrier every thread waits on), persistent rows more (their template says
 * which). tests/test_codegen.c checks these against the plan's counts. */
static unsigned register_rows_barriers(const struct tb_plan *plan, const struct row_operator *op) {
  return plan->selected.subgroups > 1 ? op->register_reductions : 0;
}

static unsigned no_barrier(const struct tb_plan *plan, const struct row_operator *op) {
  (void)plan, (void)op;
  return 0;
}

static unsigned one_barrier(const struct tb_plan *plan, const struct row_operator *op) {
  (void)plan, (void)op;
  return 1;
}

static unsigned three_barriers(const struct tb_plan *plan, const struct row_operator *op) {
  (void)plan, (void)op;
  return 3;
}

/* As many as the plan counted (split rows: one, three where the last block
 * merges). */
static unsigned planned_barriers(const struct tb_plan *plan, const struct row_operator *op) {
  (void)op;
  return plan->stream.barrier_sites;
}

static void launch(struct tb_kernel_spec *k, const char *name, unsigned threads,
                   unsigned long long blocks, unsigned shared_bytes) {
  snprintf(k->name, sizeof k->name, "%s", name);
  k->threads_per_block = threads;
  k->blocks = blocks;
  k->static_shared_bytes = shared_bytes;
}

static void register_rows_launches(struct tb_generated *g, const struct tb_plan *plan,
                                   const struct tb_case *c) {
  (void)c;
  const struct tb_candidate *cand = &plan->selected;
  g->kernel_count = 1;
  launch(&g->kernels[0], "tb_main", cand->threads, cand->thread_blocks, cand->shared_bytes);
}

static void subwarp_rows_launches(struct tb_generated *g, const struct tb_plan *plan,
                                  const struct tb_case *c) {
  (void)c;
  const struct tb_subwarp_facts *f = &plan->subwarp;
  g->kernel_count = 1;
  launch(&g->kernels[0], "tb_main", f->threads_per_block, f->thread_blocks, f->shared_bytes);
}

static void block_streaming_launches(struct tb_generated *g, const struct tb_plan *plan,
                                     const struct tb_case *c) {
  (void)c;
  const struct tb_stream_facts *f = &plan->stream;
  g->kernel_count = 1;
  launch(&g->kernels[0], "tb_main", f->threads_per_block, f->thread_blocks, f->shared_bytes);
}

/* A row output: launch 1 writes each chunk's statistics to the workspace,
 * launch 2 (a block per chunk) merges them and writes the chunk. One value a
 * row: one launch, and the workspace also holds a counter a row. */
static void split_row_launches(struct tb_generated *g, const struct tb_plan *plan,
                               const struct tb_case *c) {
  const struct tb_stream_facts *f = &plan->stream;
  size_t statistics = (size_t)c->shape.m * f->blocks_per_row * tb_stat_words(c->op->op);
  if (f->launches == 1) {
    g->kernel_count = 1;
    launch(&g->kernels[0], "tb_main", f->threads_per_block, f->thread_blocks, f->shared_bytes);
    g->workspace_floats = statistics + c->shape.m;
    return;
  }
  g->kernel_count = 2;
  launch(&g->kernels[0], "tb_partials", f->threads_per_block, f->thread_blocks, f->shared_bytes);
  launch(&g->kernels[1], "tb_finish", SPLIT_FINISH_THREADS, f->thread_blocks, 0);
  g->workspace_floats = statistics;
}

static void cluster_row_launches(struct tb_generated *g, const struct tb_plan *plan,
                                 const struct tb_case *c) {
  block_streaming_launches(g, plan, c);
  g->kernels[0].cluster_blocks = plan->stream.cluster_blocks;
  g->kernels[0].dynamic_shared_bytes = plan->stream.cache_shared_bytes;
  /* all the shared memory there is, so that two such blocks share an SM */
  g->kernels[0].shared_carveout_percent = plan->stream.cache_shared_bytes > 0 ? 100 : 0;
}

/* One cooperative launch of every resident block; the workspace holds each
 * group's 64-bit arrival counter (two floats' room) and two rows of its
 * blocks' statistics. */
static void persistent_row_launches(struct tb_generated *g, const struct tb_plan *plan,
                                    const struct tb_case *c) {
  const struct tb_stream_facts *f = &plan->stream;
  cluster_row_launches(g, plan, c);
  g->kernels[0].cooperative = true;
  g->workspace_floats =
      (size_t)f->row_groups * (2 + 2 * (size_t)f->blocks_per_row * tb_stat_words(c->op->op));
}

struct row_mapping {
  enum tb_mapping mapping;
  const char *templates[3]; /* pasted in order; NULL ends */
  void (*constants)(struct tb_strbuf *b, const struct tb_plan *plan, const struct tb_case *c);
  unsigned (*barrier_sites)(const struct tb_plan *plan, const struct row_operator *op);
  void (*launches)(struct tb_generated *g, const struct tb_plan *plan, const struct tb_case *c);
  int min_cc_major; /* beyond tb_emit_finish's; 0: none */
};

static const struct row_mapping row_mappings[] = {
    {TB_MAPPING_REGISTER_ROWS,
     {tb_kernel_register_rows, NULL},
     register_rows_constants,
     register_rows_barriers,
     register_rows_launches,
     0},
    {TB_MAPPING_BLOCK_STREAMING,
     {tb_kernel_streaming, tb_kernel_block_streaming},
     block_streaming_constants,
     one_barrier,
     block_streaming_launches,
     0},
    {TB_MAPPING_SPLIT_ROW,
     {tb_kernel_streaming, tb_kernel_split_row},
     split_row_constants,
     planned_barriers,
     split_row_launches,
     0},
    {TB_MAPPING_CLUSTER_ROW,
     {tb_kernel_streaming, tb_kernel_shared_chunk, tb_kernel_cluster_row},
     cluster_row_constants,
     one_barrier,
     cluster_row_launches,
     9}, /* thread-block clusters and distributed shared memory */
    {TB_MAPPING_SUBWARP_ROWS,
     {tb_kernel_subwarp_rows, NULL},
     subwarp_rows_constants,
     no_barrier,
     subwarp_rows_launches,
     0},
    {TB_MAPPING_PERSISTENT_ROW,
     {tb_kernel_streaming, tb_kernel_shared_chunk, tb_kernel_persistent_row},
     persistent_row_constants,
     three_barriers,
     persistent_row_launches,
     8}, /* cp.async and ld.acquire (the planner plans it only with clusters: 9.0) */
};

static const struct row_mapping *row_mapping_of(enum tb_mapping mapping) {
  for (size_t i = 0; i < sizeof row_mappings / sizeof row_mappings[0]; ++i) {
    if (row_mappings[i].mapping == mapping) {
      return &row_mappings[i];
    }
  }
  return NULL;
}

/* ---- the source ---------------------------------------------------------- */

/* The barrier sites as specializations of row_common.cuh's tb_barrier: the
 * only block barriers in the text, one per site. */
static void emit_barrier_sites(struct tb_strbuf *b, unsigned sites) {
  if (sites > 0) {
    tb_strbuf_printf(b, "\n// The plan's barrier sites.\n");
  }
  for (unsigned site = 0; site < sites; ++site) {
    tb_strbuf_printf(b,
                     "template <> __device__ __forceinline__ void tb_barrier<%u>() { "
                     "__syncthreads(); }\n",
                     site);
  }
}

static void emit_source(struct tb_strbuf *b, const struct tb_plan *plan, const struct tb_case *c,
                        const struct row_operator *op, const struct row_mapping *mapping,
                        struct tb_generated *g) {
  char what[160];
  snprintf(what, sizeof what, "%s %zux%zu (row stride %zu), variant %s, mapping %s", c->op->name,
           c->shape.m, c->shape.n, c->view.row_stride, tb_variant_name(plan->variant),
           tb_mapping_name(plan->mapping));
  tb_emit_prelude(b, what, c->op->op);
  emit_case_constants(b, c, op);
  mapping->constants(b, plan, c);
  tb_strbuf_printf(b, "%s", tb_kernel_row_common);
  emit_barrier_sites(b, mapping->barrier_sites(plan, op));
  tb_strbuf_printf(b, "%s\nusing tb_row_op = %s;\n", op->template, op->type);
  for (size_t i = 0; i < sizeof mapping->templates / sizeof mapping->templates[0]; ++i) {
    if (mapping->templates[i] != NULL) {
      tb_strbuf_printf(b, "%s", mapping->templates[i]);
    }
  }
  mapping->launches(g, plan, c);
}

enum tb_status tb_codegen_reduction(const struct tb_plan *plan, const struct tb_case *c,
                                    struct tb_generated *out, struct tb_error *err) {
  memset(out, 0, sizeof *out);
  if (plan->op != c->op->op || plan->m != c->shape.m || plan->n != c->shape.n) {
    return tb_fail(err, TB_ERR_RUN, "plan (%zux%zu) does not belong to case %zux%zu", plan->m,
                   plan->n, c->shape.m, c->shape.n);
  }
  const struct row_operator *op = row_operator_of(c->op->op);
  if (op == NULL) {
    return tb_fail(err, TB_ERR_RUN, "no row-reduction operator for %s", c->op->name);
  }
  const struct row_mapping *mapping = row_mapping_of(plan->mapping);
  if (mapping == NULL) {
    return tb_fail(err, TB_ERR_RUN, "no row-reduction template for mapping %d", (int)plan->mapping);
  }
  struct tb_strbuf b = {0};
  emit_source(&b, plan, c, op, mapping, out);
  enum tb_status status = tb_emit_finish(&b, out, err);
  if (status == TB_OK && mapping->min_cc_major > out->min_cc_major) {
    out->min_cc_major = mapping->min_cc_major;
  }
  return status;
}
