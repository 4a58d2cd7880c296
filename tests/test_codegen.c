/* The code generator over a matrix of plans (every variant of the seed
 * shapes, odd, long and few-row shapes, both input views), as planned for
 * the H200: deterministic bytes, barrier sites as planned, the right
 * reduction helpers, and - where NVRTC is installed - every distinct kernel
 * compiles for sm_90 with no local-memory spills. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/nvrtc.h"
#include "codegen/codegen.h"
#include "test_support.h"

/* the seed shapes, odd and long ones; few long rows in clusters of 3 (100x8195)
 * and in clusters of 16 whose chunks stream (10x500000) or stay in shared
 * memory (8x262144); rows no register candidate holds, in clusters of 2
 * (200x40000) and 16 (150x393216) with their chunks in shared memory; very short rows
 * (subwarp rows: 4 lanes a row with 5 or 8 elements each, 16-byte groups at
 * n = 32 and 16, one lane a row, 2 lanes with 6, a tail block of 1 row) */
static const size_t shapes[][2] = {
    {37, 769},    {1024, 1024},  {16384, 257},  {4096, 1024},  {17, 257},
    {64, 4096},   {8, 65536},    {200, 40000},  {1, 1},        {3, 5},
    {2, 1000000}, {32768, 8192}, {100, 8195},   {10, 500000},  {65536, 17},
    {4096, 17},   {100, 1},      {37, 32},      {5, 3},        {1000, 12},
    {65537, 16},  {8, 262144},   {150, 393216}, {16, 4194304}, {1, 1000000},
};
#define SHAPES (sizeof shapes / sizeof shapes[0])

static char seen[2048][65];
static size_t seen_count, compiled;

static int already_compiled(const char *sha) {
  for (size_t i = 0; i < seen_count; ++i) {
    if (strcmp(seen[i], sha) == 0) {
      return 1;
    }
  }
  if (seen_count < 2048) {
    snprintf(seen[seen_count++], 65, "%s", sha);
  }
  return 0;
}

static void compile_without_spills(const struct tb_generated *g, const char *what) {
#ifdef TB_SANITIZED_BUILD
  return; /* NVRTC is exercised by the plain build; ASan would only see its internals */
#endif
  if (already_compiled(g->sha256)) {
    return;
  }
  struct tb_compiled c;
  struct tb_error err = {0};
  enum tb_status st = tb_nvrtc_compile(g->source, g->arch_specific ? "sm_90a" : "sm_90", &c, &err);
  if (st == TB_ERR_UNAVAILABLE) {
    return; /* counted below: the test says how many it compiled */
  }
  if (st != TB_OK) {
    print_error("%s: %s\n", what, err.message);
  }
  assert_int_equal(st, TB_OK);
  if (c.spill_store_bytes != 0 || c.spill_load_bytes != 0) {
    print_error("%s spills (%ld B stores, %ld B loads):\n%s\n", what, c.spill_store_bytes,
                c.spill_load_bytes, c.log);
  }
  assert_int_equal(c.spill_store_bytes, 0); /* -1 (no ptxas report) fails too */
  assert_int_equal(c.spill_load_bytes, 0);
  assert_true(c.cubin_size > 0);
  compiled++;
  tb_compiled_free(&c);
}

static unsigned planned_barriers(const struct tb_plan *plan) {
  switch (plan->mapping) {
  case TB_MAPPING_REGISTER_ROWS: return plan->selected.barrier_sites;
  case TB_MAPPING_SUBWARP_ROWS: return plan->subwarp.barrier_sites;
  default: return plan->stream.barrier_sites;
  }
}

/* Subwarp rows: the plan's lanes, slots and rows in the text; 16-byte groups
 * exactly when every lane's elements are whole groups in rows whose stride
 * keeps them aligned; one launch of the planned blocks; no shared memory. */
static void check_subwarp_source(const struct tb_plan *plan, const struct tb_case *c,
                                 const struct tb_generated *g) {
  const struct tb_subwarp_facts *f = &plan->subwarp;
  char text[128];
  bool vec4 = c->shape.n % (4 * f->lanes) == 0 && c->view.row_stride % 4 == 0;
  snprintf(text, sizeof text,
           "#define LANES %u\n#define V %u\n#define ROWS %u\n#define THREADS %u\n"
           "#define VEC4 %d\n",
           f->lanes, f->slots, f->rows_per_block, f->threads_per_block, vec4);
  assert_non_null(strstr(g->source, text));
  assert_int_equal(f->lanes * f->slots >= c->shape.n, true);
  assert_int_equal(f->lanes * (f->slots - 1) < c->shape.n, true); /* the last slot is used */
  assert_int_equal(g->kernels[0].threads_per_block, f->threads_per_block);
  assert_int_equal(g->kernels[0].blocks, f->thread_blocks);
  assert_true((unsigned long long)f->thread_blocks * f->rows_per_block >= c->shape.m);
  assert_int_equal(g->kernels[0].static_shared_bytes, 0);
  assert_null(strstr(g->source, "__shared__"));
}

static void check_reduction(enum tb_op op, size_t m, size_t n, enum tb_view_kind view,
                            enum tb_variant variant) {
  struct tb_case c = {.op = tb_op_info(op),
                      .shape = {m, n, 0},
                      .view = tb_view_for(view, n),
                      .provider = "native",
                      .planned = true,
                      .variant = variant};
  struct tb_device_limits h200 = tb_device_limits_h200();
  struct tb_plan plan;
  struct tb_error err = {0};
  assert_int_equal(tb_plan_reduction(op, m, n, variant, &h200, "analytic", &plan, &err), TB_OK);
  struct tb_generated g1, g2;
  assert_int_equal(tb_codegen_reduction(&plan, &c, &g1, &err), TB_OK);
  assert_int_equal(tb_codegen_reduction(&plan, &c, &g2, &err), TB_OK);
  assert_string_equal(g1.source, g2.source);
  assert_string_equal(g1.sha256, g2.sha256);
  assert_int_equal(g1.barrier_sites, planned_barriers(&plan));
  assert_non_null(strstr(g1.source, "__shfl_xor_sync"));
  assert_int_equal(strstr(g1.source, "tb_warp_max") != NULL, op == TB_OP_SOFTMAX);
  assert_int_equal(g1.kernel_count, plan.stream.launches > 1 ? 2 : 1);
  /* split rows of one value a row: one launch, a counter a row after the statistics */
  bool last_merges = plan.mapping == TB_MAPPING_SPLIT_ROW && plan.stream.launches == 1;
  assert_int_equal(last_merges, plan.mapping == TB_MAPPING_SPLIT_ROW && op == TB_OP_SUM);
  if (plan.mapping == TB_MAPPING_SPLIT_ROW) {
    size_t statistics = m * plan.stream.blocks_per_row * tb_stat_words(op);
    assert_int_equal(g1.workspace_floats, statistics + (last_merges ? m : 0));
    assert_string_equal(g1.kernels[0].name, last_merges ? "tb_main" : "tb_partials");
  }
  /* very short rows of automatic plans share warps; everything else keeps its mapping */
  bool subwarp = variant == TB_VARIANT_AUTOMATIC && n <= TB_SUBWARP_MAX_ROW;
  assert_int_equal(plan.mapping == TB_MAPPING_SUBWARP_ROWS, subwarp);
  if (subwarp) {
    check_subwarp_source(&plan, &c, &g1);
  }
  /* a cluster row fixes its cluster in the source and needs Hopper for it */
  char dims[48];
  snprintf(dims, sizeof dims, "__cluster_dims__(%u, 1, 1)", plan.stream.cluster_blocks);
  bool clustered = plan.mapping == TB_MAPPING_CLUSTER_ROW;
  assert_int_equal(strstr(g1.source, "__cluster_dims__") != NULL, clustered);
  if (clustered) {
    assert_non_null(strstr(g1.source, dims));
    assert_int_equal(g1.kernels[0].cluster_blocks, plan.stream.blocks_per_row);
    assert_int_equal(g1.kernels[0].blocks, m * plan.stream.blocks_per_row);
    assert_int_equal(g1.min_cc_major, 9);
  }
  /* a chunk kept in shared memory: said in the source (a persistent row keeps every chunk
   * there), given to the launch */
  unsigned cache = plan.stream.cache_shared_bytes;
  bool persistent = plan.mapping == TB_MAPPING_PERSISTENT_ROW;
  assert_int_equal(strstr(g1.source, "#define CHUNK_SHARED 1") != NULL, cache > 0 && !persistent);
  assert_int_equal(g1.kernels[0].dynamic_shared_bytes, cache);
  if (cache > 0) {
    assert_true(clustered || persistent);
    assert_int_equal(cache,
                     persistent ? TB_PERSISTENT_SHARED_BYTES : plan.stream.chunk_elements * 4);
    assert_int_equal(plan.stream.memory_passes, 1);
  }
  /* a persistent row: every block resident (a cooperative launch), its groups' counters and
   * two rows of statistics in the workspace */
  assert_int_equal(g1.kernels[0].cooperative, persistent);
  if (persistent) {
    assert_int_equal(g1.kernels[0].blocks, plan.stream.thread_blocks);
    assert_true(g1.kernels[0].blocks <= TB_PERSISTENT_BLOCKS_PER_SM * h200.multiprocessors);
    assert_int_equal(g1.workspace_floats,
                     plan.stream.row_groups *
                         (2 + 2 * plan.stream.blocks_per_row * tb_stat_words(op)));
    char groups[48];
    snprintf(groups, sizeof groups, "#define ROW_GROUPS %uLL", plan.stream.row_groups);
    assert_non_null(strstr(g1.source, groups));
    /* the weight and bias copied with the chunk where every group takes one row and the ring
     * holds them: the norms' rows of 10^6 (4 or 8 groups a thread, 3 slots each at most), not
     * 10x500000 (19 groups) nor 16x4194304 (16 turns) */
    bool ahead = tb_op_info(op)->has_weight && n == 1000000;
    assert_int_equal(strstr(g1.source, "#define PARAMS_AHEAD 1") != NULL, ahead);
  }
  /* register rows of one warp a row and at most 4 groups a lane take a misaligned row's
   * elements one at a time across the lanes, where the view may misalign rows: rows of 257
   * (3 in 4 misaligned), not of 1024 */
  if (plan.mapping == TB_MAPPING_REGISTER_ROWS) {
    bool misaligned = c.view.row_stride % 4 != 0 || c.view.offset % 4 != 0;
    bool fallback =
        plan.selected.subgroups == 1 && (plan.selected.slots + 3) / 4 <= 4 && misaligned;
    assert_int_equal(strstr(g1.source, "#define CONTIGUOUS_FALLBACK 1\n") != NULL, fallback);
    assert_int_equal(strstr(g1.source, "#define CONTIGUOUS_FALLBACK 0\n") != NULL, !fallback);
    if (variant == TB_VARIANT_REFERENCE && view == TB_VIEW_PACKED && (n == 257 || n == 1024)) {
      assert_int_equal(fallback, n == 257); /* reference: s1p8, one warp a row */
    }
  }
  char what[128];
  snprintf(what, sizeof what, "%s %zux%zu %s %s", tb_op_info(op)->name, m, n, tb_view_name(view),
           tb_variant_name(variant));
  compile_without_spills(&g1, what);
  tb_generated_free(&g1);
  tb_generated_free(&g2);
}

static void reductions(void **state) {
  for (int op = 0; op < TB_OP_COUNT; ++op) {
    if (!tb_op_info((enum tb_op)op)->is_row_reduction) {
      continue;
    }
    for (size_t s = 0; s < SHAPES; ++s) {
      for (int view = 0; view < TB_VIEW_COUNT; ++view) {
        for (int v = 0; v < TB_VARIANT_COUNT; ++v) {
          check_reduction((enum tb_op)op, shapes[s][0], shapes[s][1], (enum tb_view_kind)view,
                          (enum tb_variant)v);
        }
      }
    }
  }
}

/* Fixed candidates sSpP go through the fixed variants' plan and the same
 * generator: s warps a row and p rows a block give 32*s*p threads and
 * ceil(m/p) blocks; a rejected one (s4p32: 4096 threads) streams each row. */
static void fixed_candidates(void **state) {
  const unsigned fixed[][2] = {{4, 2}, {2, 2}, {3, 3}, {16, 1}, {1, 3}, {4, 32}};
  const size_t rows[][2] = {{4096, 1024}, {37, 769}};
  struct tb_device_limits h200 = tb_device_limits_h200();
  for (int op = 0; op < TB_OP_COUNT; ++op) {
    if (!tb_op_info((enum tb_op)op)->is_row_reduction) {
      continue;
    }
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; ++r) {
      for (size_t f = 0; f < sizeof fixed / sizeof fixed[0]; ++f) {
        enum tb_variant v = tb_variant_fixed(fixed[f][0], fixed[f][1]);
        if (r == 0 && f % 2 == 0) { /* NVRTC for some, within the test's time */
          check_reduction((enum tb_op)op, rows[r][0], rows[r][1], TB_VIEW_STRIDED, v);
        }
        struct tb_case c = {.op = tb_op_info((enum tb_op)op),
                            .shape = {rows[r][0], rows[r][1], 0},
                            .view = tb_view_for(TB_VIEW_STRIDED, rows[r][1]),
                            .provider = "native",
                            .planned = true,
                            .variant = v};
        struct tb_plan plan;
        struct tb_error err = {0};
        assert_int_equal(
            tb_plan_reduction(c.op->op, c.shape.m, c.shape.n, v, &h200, "analytic", &plan, &err),
            TB_OK);
        struct tb_generated g;
        assert_int_equal(tb_codegen_reduction(&plan, &c, &g, &err), TB_OK);
        if (plan.fixed.rejected) {
          assert_int_equal(plan.mapping, TB_MAPPING_BLOCK_STREAMING);
          assert_int_equal(g.kernels[0].threads_per_block, TB_STREAM_THREADS);
        } else {
          assert_int_equal(plan.mapping, TB_MAPPING_REGISTER_ROWS);
          assert_int_equal(g.kernels[0].threads_per_block, 32 * fixed[f][0] * fixed[f][1]);
          assert_int_equal(g.kernels[0].blocks, (rows[r][0] + fixed[f][1] - 1) / fixed[f][1]);
        }
        assert_non_null(strstr(g.source, tb_variant_name(v)));
        tb_generated_free(&g);
      }
    }
  }
}

/* The planner's register rule (cached floats + the op's overhead <= the
 * budget) is a claim about ptxas: every register-row candidate it accepts on
 * the H200, for long rows where the budget binds, compiles without spills. */
static void register_rule_holds(void **state) {
  const size_t long_rows[] = {8192, 12289, 20000, 32768, 40000};
  struct tb_device_limits h200 = tb_device_limits_h200();
  for (int op = 0; op < TB_OP_COUNT; ++op) {
    if (!tb_op_info((enum tb_op)op)->is_row_reduction) {
      continue;
    }
    for (size_t i = 0; i < sizeof long_rows / sizeof long_rows[0]; ++i) {
      size_t n = long_rows[i];
      struct tb_case c = {.op = tb_op_info((enum tb_op)op),
                          .shape = {64, n, 0},
                          .view = tb_view_for(TB_VIEW_PACKED, n),
                          .provider = "native",
                          .planned = true,
                          .variant = TB_VARIANT_AUTOMATIC};
      struct tb_plan plan;
      struct tb_error err = {0};
      assert_int_equal(tb_plan_reduction((enum tb_op)op, 64, n, TB_VARIANT_AUTOMATIC, &h200,
                                         "analytic", &plan, &err),
                       TB_OK);
      for (unsigned k = 0; k < plan.candidate_count; ++k) {
        if (plan.candidates[k].rejected || plan.candidates[k].packing != 1) {
          continue;
        }
        plan.mapping = TB_MAPPING_REGISTER_ROWS;
        plan.selected = plan.candidates[k];
        struct tb_generated g;
        assert_int_equal(tb_codegen_reduction(&plan, &c, &g, &err), TB_OK);
        char what[96];
        snprintf(what, sizeof what, "%s 64x%zu s=%u (accepted by the register rule)", c.op->name, n,
                 plan.candidates[k].subgroups);
        compile_without_spills(&g, what);
        tb_generated_free(&g);
      }
    }
  }
}

static void elementwise(void **state) {
  for (size_t s = 0; s < SHAPES; ++s) {
    for (int view = 0; view < TB_VIEW_COUNT; ++view) {
      for (int op = TB_OP_ADD; op <= TB_OP_GELU_ADD; ++op) {
        struct tb_case c = {.op = tb_op_info((enum tb_op)op),
                            .shape = {shapes[s][0], shapes[s][1], 0},
                            .view = tb_view_for((enum tb_view_kind)view, shapes[s][1]),
                            .provider = "native",
                            .variant = TB_VARIANT_AUTOMATIC};
        struct tb_elementwise_plan plan;
        tb_plan_elementwise(c.op->op, c.shape.m, c.shape.n, view == TB_VIEW_PACKED, &plan);
        /* up to 8192 elements one a thread, else 4; packed: one row of m*n, so
         * ceil(m*n/4) threads in all */
        const size_t per = c.shape.m * c.shape.n <= 8192 ? 1 : 4;
        assert_int_equal(plan.elements_per_thread, per);
        assert_int_equal(plan.threads_per_block, per == 1 ? 128 : 256);
        assert_int_equal(plan.threads_per_row * plan.rows,
                         view == TB_VIEW_PACKED ? (c.shape.m * c.shape.n + per - 1) / per
                                                : c.shape.m * ((c.shape.n + per - 1) / per));
        assert_int_equal(plan.thread_blocks,
                         (plan.threads_per_row * plan.rows + plan.threads_per_block - 1) /
                             plan.threads_per_block);
        struct tb_generated g;
        struct tb_error err = {0};
        assert_int_equal(tb_codegen_elementwise(&plan, &c, &g, &err), TB_OK);
        assert_int_equal(g.barrier_sites, 0);
        assert_null(strstr(g.source, "__shfl_xor_sync"));
        assert_int_equal(strstr(g.source, "erff") != NULL, op == TB_OP_GELU_ADD);
        /* 32-bit indices and no float4 groups in the scalar plan, 64-bit and
         * float4 groups in the vector plan */
        assert_int_equal(strstr(g.source, "const unsigned t =") != NULL, per == 1);
        assert_int_equal(strstr(g.source, "const long long t =") != NULL, per == 4);
        assert_int_equal(strstr(g.source, "float4") != NULL, per == 4);
        compile_without_spills(&g, c.op->name);
        tb_generated_free(&g);
      }
    }
  }
  printf(
      "compiled %zu distinct kernels with NVRTC for sm_90 (0 when NVRTC is absent or under ASan)\n",
      compiled);
}

/* gemm: odd sizes in every dimension, both views (leading dimensions k+3,
 * n+3), every realization, on devices with and without wgmma; the tile
 * follows the planner's rule. */
/* A native gemm case of the planner's rule (no user block). */
static struct tb_case gemm_case(size_t m, size_t n, size_t k, enum tb_view_kind view,
                                enum tb_realization r) {
  struct tb_case c = {.op = tb_op_info(TB_OP_GEMM),
                      .shape = {m, n, k},
                      .view = tb_view_for(view, n),
                      .provider = "native",
                      .variant = TB_VARIANT_AUTOMATIC,
                      .realization = r};
  return c;
}

/* The rule's plan of case c for target (planned as the CUDA provider's plan step does). */
static struct tb_gemm_plan rule_plan(const struct tb_case *c, struct tb_gemm_target target,
                                     struct tb_gemm_alignment aligned) {
  struct tb_gemm_plan plan;
  struct tb_error err = {0};
  struct tb_gemm_block rule = {0, 0, 0};
  assert_int_equal(tb_plan_gemm(c->shape.m, c->shape.n, c->shape.k, c->realization, rule, target,
                                aligned, &plan, &err),
                   TB_OK);
  return plan;
}

static void gemm_kernels(void **state) {
  const size_t gemm_shapes[][3] = {{32, 32, 32},  {127, 193, 61},    {4096, 4096, 4096},
                                   {1, 1, 1},     {2048, 1536, 512}, {1999, 2999, 37},
                                   {256, 512, 13}};
  for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; ++s) {
    for (int view = 0; view < TB_VIEW_COUNT * 2; ++view) {
      struct tb_gemm_target target = {132, view >= TB_VIEW_COUNT, false};
      for (int r = 0; r < TB_REALIZATION_COUNT; ++r) {
        size_t m = gemm_shapes[s][0], n = gemm_shapes[s][1], k = gemm_shapes[s][2];
        struct tb_case c =
            gemm_case(m, n, k, (enum tb_view_kind)(view % TB_VIEW_COUNT), (enum tb_realization)r);
        bool packed = c.view.kind == TB_VIEW_PACKED;
        struct tb_gemm_alignment aligned = {packed && k % 4 == 0, packed && n % 4 == 0};
        struct tb_gemm_plan plan = rule_plan(&c, target, aligned);
        struct tb_error err = {0};
        if (plan.gemv != TB_GEMV_NONE) { /* 1x1x1, every realization: gemv_kernels below */
          assert_true(m == 1 && n == 1);
          continue;
        }
        /* each operand as wide as its own rows allow: k = 13 keeps B's loads wide */
        assert_int_equal(plan.vector_width, aligned.b_rows ? 4 : 1);
        assert_int_equal(plan.a_vector_width, aligned.a_rows ? 4 : 1);
        assert_int_equal(plan.blocks, ((m + plan.block_m - 1) / plan.block_m) *
                                          ((n + plan.block_n - 1) / plan.block_n));
        struct tb_generated g;
        assert_int_equal(tb_codegen_gemm(&plan, &c, &g, &err), TB_OK);
        bool wgmma = plan.warpgroups != 0;
        /* wgmma: the large tensor tiles past small k on a device that has it, only */
        assert_int_equal(wgmma, target.warpgroup_mma && r == TB_REALIZATION_TENSOR && k > 48 &&
                                    ((m + 127) / 128) * ((n + 127) / 128) >= 132);
        assert_int_equal(g.barrier_sites, plan.barrier_sites);
        assert_int_equal(g.barrier_sites, wgmma ? 3 : 1);
        assert_int_equal(g.kernel_count, plan.launches);
        assert_int_equal(g.workspace_floats, plan.workspace_floats);
        assert_int_equal(strstr(g.source, "mma.sync") != NULL, r != TB_REALIZATION_SIMT && !wgmma);
        assert_int_equal(strstr(g.source, "wgmma.mma_async") != NULL, wgmma);
        assert_int_equal(strstr(g.source, "a_lo") != NULL, r == TB_REALIZATION_TENSOR_3XTF32);
        assert_int_equal(g.min_cc_major, wgmma ? 9 : 8); /* wgmma (sm_90a); cp.async */
        assert_int_equal(g.arch_specific, wgmma);
        char what[96];
        snprintf(what, sizeof what, "gemm %zux%zux%zu %s %s %s", m, n, k, tb_view_name(c.view.kind),
                 tb_realization_name(c.realization), plan.instruction);
        compile_without_spills(&g, what);
        tb_generated_free(&g);
      }
    }
  }
}

/* The matrix-vector kernels (m = 1 or n = 1, every realization): rows for
 * n = 1, columns otherwise, k whole (one launch) or split (tb_main then
 * tb_combine over the workspace), both views; no barrier, no tensor core,
 * and every source compiles for sm_90 without spills. */
static void gemv_kernels(void **state) {
  const size_t gemv_shapes[][3] = {{1, 4096, 4096}, {4096, 1, 4096}, {1, 300, 257}, {257, 1, 300},
                                   {1, 1, 64},      {1, 1, 1},       {1, 1, 4096},  {3, 1, 5},
                                   {1, 5, 3},       {2, 1, 70000}};
  for (size_t s = 0; s < sizeof gemv_shapes / sizeof gemv_shapes[0]; ++s) {
    for (int view = 0; view < TB_VIEW_COUNT; ++view) {
      for (int r = 0; r < TB_REALIZATION_COUNT; ++r) {
        size_t m = gemv_shapes[s][0], n = gemv_shapes[s][1], k = gemv_shapes[s][2];
        struct tb_case c = gemm_case(m, n, k, (enum tb_view_kind)view, (enum tb_realization)r);
        /* the plan step's test: packed, k % 4 == 0, n % 4 == 0 or n == 1 */
        bool aligned = view == TB_VIEW_PACKED && k % 4 == 0 && (n % 4 == 0 || n == 1);
        struct tb_gemm_plan plan =
            rule_plan(&c, tb_gemm_target_h200(), aligned ? TB_GEMM_ALIGNED : TB_GEMM_UNALIGNED);
        struct tb_error err = {0};
        assert_int_equal(plan.gemv, n == 1 ? TB_GEMV_ROWS : TB_GEMV_COLUMNS);
        assert_int_equal(plan.vector_width, aligned ? 4 : 1);
        struct tb_generated g;
        assert_int_equal(tb_codegen_gemm(&plan, &c, &g, &err), TB_OK);
        bool split = plan.k_splits > 1;
        assert_int_equal(g.kernel_count, split ? 2 : 1);
        assert_int_equal(g.kernel_count, plan.launches);
        assert_string_equal(g.kernels[0].name, "tb_main");
        assert_int_equal(g.kernels[0].blocks, plan.blocks);
        assert_int_equal(g.kernels[0].threads_per_block, plan.threads);
        if (split) {
          assert_string_equal(g.kernels[1].name, "tb_combine");
          assert_int_equal(g.kernels[1].blocks, plan.combine_blocks);
        }
        assert_int_equal(g.workspace_floats, plan.workspace_floats);
        assert_int_equal(strstr(g.source, "tb_combine(") != NULL, split); /* the kernel itself */
        assert_int_equal(g.barrier_sites, 0);
        assert_int_equal(g.max_dynamic_shared_bytes + g.max_static_shared_bytes, 0);
        assert_null(strstr(g.source, "mma"));
        assert_null(strstr(g.source, "atomicAdd")); /* partials added in a fixed order */
        assert_int_equal(g.min_cc_major, 7);        /* shuffles; no cp.async */
        assert_false(g.arch_specific);
        char what[96];
        snprintf(what, sizeof what, "gemm %zux%zux%zu %s %s matrix-vector", m, n, k,
                 tb_view_name(c.view.kind), tb_realization_name(c.realization));
        compile_without_spills(&g, what);
        tb_generated_free(&g);
      }
    }
  }
}

/* Tile offsets are 32-bit unless a tile spans 2^31 floats of A or B: a
 * 70-million-long k (32-row tiles of A span 2.24e9 floats) takes 64-bit ones,
 * and the kernel still compiles without spills. */
static void gemm_wide_tile_offsets(void **state) {
  for (int r = 0; r < TB_REALIZATION_COUNT; ++r) {
    const size_t sizes[][3] = {{64, 64, 70000000}, {64, 64, 4096}};
    for (size_t i = 0; i < 2; ++i) {
      size_t m = sizes[i][0], n = sizes[i][1], k = sizes[i][2];
      struct tb_case c = gemm_case(m, n, k, TB_VIEW_PACKED, (enum tb_realization)r);
      struct tb_gemm_plan plan = rule_plan(&c, tb_gemm_target_h200(), TB_GEMM_ALIGNED);
      struct tb_error err = {0};
      struct tb_generated g;
      assert_int_equal(tb_codegen_gemm(&plan, &c, &g, &err), TB_OK);
      bool wide = (unsigned long long)plan.block_m * k >= (1ULL << 31);
      assert_int_equal(wide, i == 0);
      assert_non_null(
          strstr(g.source, wide ? "#define TILE_OFFSET long long" : "#define TILE_OFFSET int"));
      compile_without_spills(&g, wide ? "gemm 64x64x70000000" : "gemm 64x64x4096");
      tb_generated_free(&g);
    }
  }
}

/* The single-launch wgmma kernel under a wave splits k: tb_main over every
 * tile's chunks writes partial tiles to the workspace, tb_combine adds them;
 * a grid of a wave keeps k whole and one launch. */
static void gemm_split_k(void **state) {
  const size_t sizes[][3] = {{128, 128, 1024}, {1024, 1024, 4096}, {2048, 1024, 512}};
  for (size_t i = 0; i < 3; ++i) {
    struct tb_case c =
        gemm_case(sizes[i][0], sizes[i][1], sizes[i][2], TB_VIEW_PACKED, TB_REALIZATION_TENSOR);
    struct tb_gemm_plan plan = rule_plan(&c, tb_gemm_target_h200(), TB_GEMM_ALIGNED);
    struct tb_error err = {0};
    struct tb_generated g;
    assert_true(plan.tensor_maps);
    assert_int_equal(tb_codegen_gemm(&plan, &c, &g, &err), TB_OK);
    bool split = i < 2;
    assert_int_equal(plan.k_splits > 1, split);
    assert_int_equal(g.kernel_count, split ? 2 : 1);
    assert_string_equal(g.kernels[0].name, "tb_main");
    assert_int_equal(g.kernels[0].threads_per_block, 384);
    assert_int_equal(g.kernels[0].blocks, plan.blocks);
    assert_int_equal(strstr(g.source, "tb_combine") != NULL, split);
    assert_int_equal(strstr(g.source, "part[row * N + col]") != NULL, split);
    assert_int_equal(g.workspace_floats, split ? plan.k_splits * c.shape.m * c.shape.n : 0);
    if (split) {
      assert_string_equal(g.kernels[1].name, "tb_combine");
      assert_int_equal(g.kernels[1].threads_per_block, 256);
      assert_int_equal(g.kernels[1].blocks, plan.combine_blocks);
    }
    compile_without_spills(&g, "gemm tensor, tensor maps, k split or whole");
    tb_generated_free(&g);
  }
}

/* Every SIMT tile --gemm-block accepts compiles without spills; the ones it
 * refuses are refused before any code exists. */
static void gemm_user_blocks(void **state) {
  const unsigned blocks[][3] = {{128, 128, 8}, {128, 128, 16}, {128, 64, 16}, {64, 128, 16},
                                {64, 64, 16},  {32, 32, 32},   {64, 32, 32},  {128, 256, 16}};
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; ++i) {
    struct tb_case c = {.op = tb_op_info(TB_OP_GEMM),
                        .shape = {4096, 4096, 4096},
                        .view = tb_view_for(TB_VIEW_PACKED, 4096),
                        .provider = "native",
                        .variant = TB_VARIANT_AUTOMATIC};
    struct tb_gemm_block user = {blocks[i][0], blocks[i][1], blocks[i][2]};
    struct tb_gemm_plan plan;
    struct tb_error err = {0};
    assert_int_equal(tb_plan_gemm(4096, 4096, 4096, TB_REALIZATION_SIMT, user,
                                  tb_gemm_target_h200(), TB_GEMM_ALIGNED, &plan, &err),
                     TB_OK);
    assert_true(plan.block_from_user);
    assert_int_equal(plan.thread_m * plan.thread_n * plan.threads, blocks[i][0] * blocks[i][1]);
    struct tb_generated g;
    assert_int_equal(tb_codegen_gemm(&plan, &c, &g, &err), TB_OK);
    char what[64];
    snprintf(what, sizeof what, "gemm simt block %u,%u,%u", user.m, user.n, user.k);
    compile_without_spills(&g, what);
    tb_generated_free(&g);
  }
  const unsigned refused[][3] = {
      {128, 128, 4}, {96, 96, 16}, {32, 32, 16}, {256, 128, 8}, {64, 256, 32}};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    struct tb_gemm_block user = {refused[i][0], refused[i][1], refused[i][2]};
    struct tb_gemm_plan plan;
    struct tb_error err = {0};
    assert_int_equal(tb_plan_gemm(64, 64, 64, TB_REALIZATION_SIMT, user, tb_gemm_target_h200(),
                                  TB_GEMM_ALIGNED, &plan, &err),
                     TB_ERR_USAGE);
    assert_non_null(strstr(err.message, "--gemm-block"));
  }
}

/* A planned native 4x4 case of `op`, packed. */
static struct tb_case small_case(enum tb_op op) {
  return (struct tb_case){.op = tb_op_info(op),
                          .shape = {4, 4, 0},
                          .view = tb_view_for(TB_VIEW_PACKED, 4),
                          .provider = "native",
                          .planned = true,
                          .variant = TB_VARIANT_AUTOMATIC};
}

static void plan_case_mismatch_refused(void **state) {
  struct tb_case c = small_case(TB_OP_SUM);
  struct tb_plan plan;
  struct tb_error err = {0};
  assert_int_equal(
      tb_plan_reduction(TB_OP_SUM, 4, 8, TB_VARIANT_AUTOMATIC, NULL, NULL, &plan, &err), TB_OK);
  struct tb_generated g;
  assert_int_equal(tb_codegen_reduction(&plan, &c, &g, &err), TB_ERR_RUN);
}

/* A mapping the generator has no template for is an error, never another
 * mapping's kernel. */
static void unknown_mapping_refused(void **state) {
  struct tb_case c = small_case(TB_OP_SOFTMAX);
  struct tb_plan plan;
  struct tb_error err = {0};
  assert_int_equal(
      tb_plan_reduction(TB_OP_SOFTMAX, 4, 4, TB_VARIANT_AUTOMATIC, NULL, NULL, &plan, &err), TB_OK);
  plan.mapping = (enum tb_mapping)(TB_MAPPING_PERSISTENT_ROW + 1);
  struct tb_generated g;
  assert_int_equal(tb_codegen_reduction(&plan, &c, &g, &err), TB_ERR_RUN);
  assert_non_null(strstr(err.message, "mapping"));
  assert_null(g.source);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reductions),
      cmocka_unit_test(fixed_candidates),
      cmocka_unit_test(register_rule_holds),
      cmocka_unit_test(elementwise),
      cmocka_unit_test(gemm_kernels),
      cmocka_unit_test(gemv_kernels),
      cmocka_unit_test(gemm_wide_tile_offsets),
      cmocka_unit_test(gemm_split_k),
      cmocka_unit_test(gemm_user_blocks),
      cmocka_unit_test(plan_case_mismatch_refused),
      cmocka_unit_test(unknown_mapping_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
