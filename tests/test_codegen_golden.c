/* Golden SHA-256 of every generated source over a matrix of plans.
 *
 * Each entry of the matrix below is planned and generated exactly as the
 * CUDA provider's plan step and prepare do for that case
 * (src/backends/cuda/cuda_provider.c, src/planner/exec_plan.c), the
 * source's bytes hashed with tb_sha256_buffer, and the hash compared with
 * tests/golden/codegen_sources.sha256 (one line per source: a label naming
 * the entry, then the SHA-256). Any changed byte of any kernel, and any label
 * missing from or extra in the golden file, fails the test; every differing
 * label is listed, not just the first. No GPU, no NVRTC: codegen is pure C.
 *
 * The matrix (labels read op/shape/view/...):
 *   row reductions: sum, softmax, rmsnorm, layernorm x reference, candidate,
 *     automatic x packed, strided x scripts/gpu.sh's ALL_SHAPES and
 *     EXTRA_SHAPES (register rows of several s and p, block streaming, split
 *     rows, cluster rows cached and streamed, subwarp rows at 1x1 and 3x5)
 *     x profiles calibrated-2, calibrated, analytic x the H200's limits ("h200": what `run`
 *     plans with on the H200) and no limits ("nolimits": what `tilebench
 *     plan` uses without a GPU);
 *     "<op>/<m>x<n>/<view>/automatic/<profile>/<limits>"
 *   register rows forced to each (s, p) of the enumeration the H200 accepts,
 *     for packed m = 64 and n = 1024, 8192, 40000 (the register-rows emitter
 *     at every s and p, chosen by the planner or not; the view only changes
 *     SX, pinned above): "<op>/64x<n>/packed/s<S>p<P>/h200"
 *   elementwise add, gelu_add x views x the same shapes: "add/<m>x<n>/<view>"
 *   gemm: simt, tensor, tensor-3xtf32 x shapes x views x targets cc90 (the
 *     H200: 132 SMs, wgmma) and cc80 (132 SMs, no wgmma: the two differ in
 *     the capability only) x the planner's rule and user blocks (--gemm-block)
 *     the planner accepts for that realization and target (a refused one is
 *     no entry); loads 4 or 1 floats wide as the view and shape allow;
 *     shapes with m = 1 or n = 1 plan matrix-vector kernels under simt and
 *     tensor-3xtf32 with the rule (rows, columns; k split or whole);
 *     "gemm/<m>x<n>x<k>/<view>/<realization>/<rule|M,N,K>/<target>"
 * The test also asserts that the matrix reaches every mapping and every gemm
 * kernel kind, so shrinking it cannot silently drop one.
 *
 * Regenerating: with TB_GOLDEN_UPDATE=1 in the environment the test writes
 * the golden file (the path of the compile definition TB_GOLDEN_FILE, or
 * argv[1]) instead of comparing, and says so. Do that only when a change of
 * bytes is intended and its GPU A/B (no case slower) is in evidence/; the
 * commit that changes this file names that evidence.
 *     TB_GOLDEN_UPDATE=1 ./build/tests/test_codegen_golden
 *
 * Dumping: with TB_GOLDEN_DUMP=<directory> every generated source is also
 * written there as <label>.cu ('/' in the label written '+'), for
 * tools/codegen-equivalence/, which compiles the sources of two generators
 * with NVRTC and compares what comes out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "planner/exec_plan.h"
#include "provenance/hash.h"
#include "test_support.h"

#define LABEL_SIZE 112

static const char *golden_path; /* argv[1], else TB_GOLDEN_FILE */

/* ---- the matrix's entries ---------------------------------------------- */

struct entry {
  char label[LABEL_SIZE];
  char sha256[TB_SHA256_HEX_LEN];
  size_t order; /* position in the matrix or the file */
};

struct entries {
  struct entry *items;
  size_t count, cap;
};

static struct entries generated; /* in matrix order */

/* What the matrix reached (asserted non-zero at the end). */
static struct {
  size_t mapping[TB_MAPPING_PERSISTENT_ROW + 1]; /* by enum tb_mapping */
  size_t cluster_cached, cluster_streamed;
  size_t s1_packed, s1_single, s_small, s_large; /* s = 1 with p > 1 / p = 1, 2..16, > 16 */
  size_t elementwise;
  size_t simt_wide, simt_narrow; /* outputs per thread along n >= 4, < 4 */
  size_t mma_sync, mma_sync_3xtf32, wgmma_128, wgmma_256;
  size_t gemv_rows, gemv_columns, gemv_split, gemv_whole; /* k split in 2 launches, or not */
  size_t vw4, vw1, vw_mixed, small_k, wide_offsets, user_blocks, refused_blocks;
  size_t duplicates;
} reached;

/* TB_GOLDEN_DUMP (see the top comment): the source as <dir>/<label>.cu. */
static void dump_source(const char *label, const char *source) {
  const char *dir = getenv("TB_GOLDEN_DUMP");
  if (dir == NULL || dir[0] == '\0') {
    return;
  }
  char path[4096];
  int len = snprintf(path, sizeof path, "%s/%s.cu", dir, label);
  assert_true(len > 0 && (size_t)len < sizeof path);
  for (char *p = path + strlen(dir) + 1; *p; ++p) {
    *p = *p == '/' ? '+' : *p;
  }
  FILE *f = fopen(path, "w");
  bool written = f != NULL && fputs(source, f) >= 0;
  if (f != NULL && fclose(f) != 0) {
    written = false;
  }
  if (!written) {
    print_error("cannot write %s: %s\n", path, strerror(errno));
    fail();
  }
}

static void add_entry(const char *label, const struct tb_generated *g) {
  dump_source(label, g->source);
  char sha[TB_SHA256_HEX_LEN];
  tb_sha256_buffer(g->source, strlen(g->source), sha);
  if (strcmp(sha, g->sha256) != 0) {
    print_error("%s: the generator records sha256 %s for a source whose bytes hash to %s\n", label,
                g->sha256, sha);
    fail();
  }
  assert_true(strlen(label) < LABEL_SIZE);
  assert_null(strchr(label, ' '));
  if (generated.count == generated.cap) {
    generated.cap = generated.cap ? 2 * generated.cap : 1024;
    generated.items = realloc(generated.items, generated.cap * sizeof *generated.items);
    assert_non_null(generated.items);
  }
  struct entry *e = &generated.items[generated.count];
  snprintf(e->label, sizeof e->label, "%s", label);
  memcpy(e->sha256, sha, sizeof e->sha256);
  e->order = generated.count++;
}

static int by_label(const void *a, const void *b) {
  return strcmp(((const struct entry *)a)->label, ((const struct entry *)b)->label);
}

/* by label, then by position: qsort is not stable */
static int by_label_then_order(const void *a, const void *b) {
  const struct entry *x = a, *y = b;
  int c = strcmp(x->label, y->label);
  return c != 0 ? c : (x->order > y->order) - (x->order < y->order);
}

static int by_order(const void *a, const void *b) {
  const struct entry *x = a, *y = b;
  return (x->order > y->order) - (x->order < y->order);
}

/* ---- row reductions ---------------------------------------------------- */

/* scripts/gpu.sh: ALL_SHAPES, then EXTRA_SHAPES */
static const size_t shapes[][2] = {
    {17, 257},     {37, 769},     {64, 4096},    {1024, 1024}, {16384, 257}, {4096, 1024},
    {32768, 8192}, {8192, 32768}, {262144, 257}, {8, 65536},   {1, 1},       {3, 5},
    {200, 40000},  {2, 1000000},  {64, 258},     {100, 8195},  {10, 500000},
};
#define SHAPES (sizeof shapes / sizeof shapes[0])

static const char *const profiles[] = {TB_PLANNER_PROFILE_CALIBRATED_2,
                                       TB_PLANNER_PROFILE_CALIBRATED, TB_PLANNER_PROFILE_ANALYTIC};

static struct tb_case reduction_case(enum tb_op op, size_t m, size_t n, enum tb_view_kind view,
                                     enum tb_variant variant, const char *profile) {
  struct tb_case c = {.op = tb_op_info(op),
                      .shape = {m, n, 0},
                      .view = tb_view_for(view, n),
                      .provider = "native",
                      .planned = true,
                      .variant = variant,
                      .profile = profile};
  return c;
}

static void count_register_rows(const struct tb_candidate *s) {
  if (s->subgroups == 1) {
    ++*(s->packing > 1 ? &reached.s1_packed : &reached.s1_single);
  } else {
    ++*(s->subgroups <= 16 ? &reached.s_small : &reached.s_large);
  }
}

static void generate_reduction(const char *label, const struct tb_plan *plan,
                               const struct tb_case *c) {
  struct tb_generated g;
  struct tb_error err = {0};
  if (tb_codegen_reduction(plan, c, &g, &err) != TB_OK) {
    print_error("%s: %s\n", label, err.message);
    fail();
  }
  add_entry(label, &g);
  tb_generated_free(&g);
}

static void reductions(void) {
  const struct tb_device_limits h200 = tb_device_limits_h200();
  const struct tb_device_limits none = tb_device_limits_default();
  const struct {
    const char *name;
    const struct tb_device_limits *limits;
  } limits[] = {{"h200", &h200}, {"nolimits", &none}};
  for (int op = 0; op < TB_OP_COUNT; ++op) {
    if (!tb_op_info((enum tb_op)op)->is_row_reduction) {
      continue;
    }
    for (size_t s = 0; s < SHAPES; ++s) {
      for (int view = 0; view < TB_VIEW_COUNT; ++view) {
        for (int v = 0; v < TB_VARIANT_COUNT; ++v) {
          for (size_t p = 0; p < sizeof profiles / sizeof profiles[0]; ++p) {
            for (size_t l = 0; l < sizeof limits / sizeof limits[0]; ++l) {
              size_t m = shapes[s][0], n = shapes[s][1];
              struct tb_case c = reduction_case((enum tb_op)op, m, n, (enum tb_view_kind)view,
                                                (enum tb_variant)v, profiles[p]);
              struct tb_plan plan;
              struct tb_error err = {0};
              assert_int_equal(tb_plan_reduction(c.op->op, m, n, c.variant, limits[l].limits,
                                                 c.profile, &plan, &err),
                               TB_OK);
              char label[LABEL_SIZE];
              snprintf(label, sizeof label, "%s/%zux%zu/%s/%s/%s/%s", c.op->name, m, n,
                       tb_view_name(c.view.kind), tb_variant_name(c.variant), c.profile,
                       limits[l].name);
              generate_reduction(label, &plan, &c);
              reached.mapping[plan.mapping]++;
              if (plan.mapping == TB_MAPPING_REGISTER_ROWS) {
                count_register_rows(&plan.selected);
              }
              if (plan.mapping == TB_MAPPING_CLUSTER_ROW) {
                ++*(tb_cluster_chunk_cached(&plan.stream) ? &reached.cluster_cached
                                                          : &reached.cluster_streamed);
              }
            }
          }
        }
      }
    }
  }
}

/* Every register-rows candidate the H200 accepts, forced as the plan (as
 * test_codegen.c's register rule check does): the emitter at every s and p. */
static void forced_register_rows(void) {
  const size_t lengths[] = {1024, 8192, 40000};
  const struct tb_device_limits h200 = tb_device_limits_h200();
  for (int op = 0; op < TB_OP_COUNT; ++op) {
    if (!tb_op_info((enum tb_op)op)->is_row_reduction) {
      continue;
    }
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
      size_t n = lengths[i];
      struct tb_case c = reduction_case((enum tb_op)op, 64, n, TB_VIEW_PACKED, TB_VARIANT_AUTOMATIC,
                                        TB_PLANNER_PROFILE_ANALYTIC);
      struct tb_plan plan;
      struct tb_error err = {0};
      assert_int_equal(
          tb_plan_reduction(c.op->op, 64, n, TB_VARIANT_AUTOMATIC, &h200, c.profile, &plan, &err),
          TB_OK);
      for (unsigned k = 0; k < plan.candidate_count; ++k) {
        const struct tb_candidate *cand = &plan.candidates[k];
        if (cand->rejected) {
          continue;
        }
        plan.mapping = TB_MAPPING_REGISTER_ROWS;
        plan.selected = *cand;
        plan.chosen = (int)k;
        char label[LABEL_SIZE];
        snprintf(label, sizeof label, "%s/64x%zu/packed/s%up%u/h200", c.op->name, n,
                 cand->subgroups, cand->packing);
        generate_reduction(label, &plan, &c);
        count_register_rows(cand);
      }
    }
  }
}

/* ---- elementwise ------------------------------------------------------- */

static void elementwise(void) {
  for (int op = TB_OP_ADD; op <= TB_OP_GELU_ADD; ++op) {
    for (size_t s = 0; s < SHAPES; ++s) {
      for (int view = 0; view < TB_VIEW_COUNT; ++view) {
        size_t m = shapes[s][0], n = shapes[s][1];
        struct tb_case c = {.op = tb_op_info((enum tb_op)op),
                            .shape = {m, n, 0},
                            .view = tb_view_for((enum tb_view_kind)view, n),
                            .provider = "native",
                            .variant = TB_VARIANT_AUTOMATIC};
        struct tb_elementwise_plan plan;
        tb_plan_elementwise(c.op->op, m, n, c.view.kind == TB_VIEW_PACKED, &plan);
        struct tb_generated g;
        struct tb_error err = {0};
        char label[LABEL_SIZE];
        snprintf(label, sizeof label, "%s/%zux%zu/%s", c.op->name, m, n, tb_view_name(c.view.kind));
        if (tb_codegen_elementwise(&plan, &c, &g, &err) != TB_OK) {
          print_error("%s: %s\n", label, err.message);
          fail();
        }
        add_entry(label, &g);
        tb_generated_free(&g);
        reached.elementwise++;
      }
    }
  }
}

/* ---- gemm -------------------------------------------------------------- */

static void count_gemm(const struct tb_gemm_plan *plan, const struct tb_case *c) {
  if (plan->gemv != TB_GEMV_NONE) {
    ++*(plan->gemv == TB_GEMV_ROWS ? &reached.gemv_rows : &reached.gemv_columns);
    ++*(plan->k_splits > 1 ? &reached.gemv_split : &reached.gemv_whole);
  } else if (plan->warpgroups != 0) {
    ++*(plan->block_n == 256 ? &reached.wgmma_256 : &reached.wgmma_128);
  } else if (plan->realization == TB_REALIZATION_SIMT) {
    ++*(plan->thread_n >= 4 ? &reached.simt_wide : &reached.simt_narrow);
  } else {
    ++*(plan->realization == TB_REALIZATION_TENSOR_3XTF32 ? &reached.mma_sync_3xtf32
                                                          : &reached.mma_sync);
  }
  ++*(plan->vector_width == 4 ? &reached.vw4 : &reached.vw1);
  reached.vw_mixed += plan->a_vector_width == 1 && plan->vector_width == 4; /* k % 4 != 0 */
  reached.small_k += !plan->block_from_user && c->shape.k <= 48;
  size_t sa = tb_view_for(c->view.kind, c->shape.k).row_stride;
  size_t sb = tb_view_for(c->view.kind, c->shape.n).row_stride;
  if ((unsigned long long)plan->block_m * sa >= (1ULL << 31) ||
      (unsigned long long)plan->block_k * sb >= (1ULL << 31)) {
    reached.wide_offsets++;
  }
  reached.user_blocks += plan->block_from_user;
}

static void gemm(void) {
  /* the brief's set, a k long enough for 64-bit tile offsets, and
   * matrix-vector products (m = 1, n = 1, both; k split or whole) */
  static const size_t gemm_shapes[][3] = {
      {32, 32, 32},       {128, 128, 128}, {127, 193, 61},     {1999, 2999, 37}, {2048, 1536, 40},
      {4096, 4096, 4096}, {1, 4096, 4096}, {64, 64, 70000000}, {4096, 1, 4096},  {257, 1, 300},
      {1, 300, 257},      {1, 1, 64},      {1, 1, 4096},       {4096, 4096, 13},
  };
  /* {0,0,0}: the planner's rule; the rest as --gemm-block M,N,K */
  static const struct tb_gemm_block blocks[] = {
      {0, 0, 0},    {128, 128, 32}, {128, 256, 32}, {64, 64, 16},
      {32, 32, 32}, {128, 64, 32},  {64, 128, 16},
  };
  /* the native CUDA plan step: wgmma where the compute capability is exactly 9.0 */
  static const struct {
    const char *name;
    struct tb_gemm_target target;
  } targets[] = {
      {"cc90", {132, true, false}}, {"cc90-tma", {132, true, true}}, {"cc80", {132, false, false}}};
  for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; ++s) {
    for (int view = 0; view < TB_VIEW_COUNT; ++view) {
      for (int r = 0; r < TB_REALIZATION_COUNT; ++r) {
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; ++b) {
          for (size_t t = 0; t < sizeof targets / sizeof targets[0]; ++t) {
            size_t m = gemm_shapes[s][0], n = gemm_shapes[s][1], k = gemm_shapes[s][2];
            struct tb_case c = {.op = tb_op_info(TB_OP_GEMM),
                                .shape = {m, n, k},
                                .view = tb_view_for((enum tb_view_kind)view, n),
                                .provider = "native",
                                .variant = TB_VARIANT_AUTOMATIC,
                                .realization = (enum tb_realization)r,
                                .gemm_block = blocks[b]};
            struct tb_gemm_alignment aligned = tb_gemm_operands_alignment(&c); /* the plan step's */
            struct tb_gemm_plan plan;
            struct tb_error err = {0};
            if (tb_plan_gemm(m, n, k, c.realization, c.gemm_block, targets[t].target, aligned,
                             &plan, &err) != TB_OK) {
              assert_int_not_equal(blocks[b].m, 0); /* only a user block may be refused */
              reached.refused_blocks++;
              continue;
            }
            char block[40], label[LABEL_SIZE];
            if (blocks[b].m == 0) {
              snprintf(block, sizeof block, "rule");
            } else {
              snprintf(block, sizeof block, "%u,%u,%u", blocks[b].m, blocks[b].n, blocks[b].k);
            }
            snprintf(label, sizeof label, "gemm/%zux%zux%zu/%s/%s/%s/%s", m, n, k,
                     tb_view_name(c.view.kind), tb_realization_name(c.realization), block,
                     targets[t].name);
            struct tb_generated g;
            if (tb_codegen_gemm(&plan, &c, &g, &err) != TB_OK) {
              print_error("%s: %s\n", label, err.message);
              fail();
            }
            add_entry(label, &g);
            tb_generated_free(&g);
            count_gemm(&plan, &c);
          }
        }
      }
    }
  }
}

/* ---- the golden file --------------------------------------------------- */

static bool is_hex64(const char *s) {
  if (strlen(s) != 64) {
    return false;
  }
  for (; *s; ++s) {
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) {
      return false;
    }
  }
  return true;
}

/* Reads "label sha256" lines (blank lines and '#' comments skipped). */
static void read_golden(const char *path, struct entries *out) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    print_error("cannot read the golden file %s: %s (TB_GOLDEN_UPDATE=1 writes it; see the top "
                "comment of tests/test_codegen_golden.c)\n",
                path, strerror(errno));
    fail();
  }
  char line[512];
  size_t number = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    ++number;
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '\0' || line[0] == '#') {
      continue;
    }
    char label[LABEL_SIZE], sha[80], extra[2];
    if (sscanf(line, "%111s %79s %1s", label, sha, extra) != 2 || !is_hex64(sha)) {
      print_error("%s:%zu: not 'label sha256': %s\n", path, number, line);
      fclose(f);
      fail();
    }
    if (out->count == out->cap) {
      out->cap = out->cap ? 2 * out->cap : 1024;
      out->items = realloc(out->items, out->cap * sizeof *out->items);
      assert_non_null(out->items);
    }
    struct entry *e = &out->items[out->count];
    snprintf(e->label, sizeof e->label, "%s", label);
    memcpy(e->sha256, sha, sizeof e->sha256); /* 64 hex digits and the NUL */
    e->order = out->count++;
  }
  fclose(f);
}

static void write_golden(const char *path, const struct entries *list) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (f == NULL) {
    print_error("cannot write %s: %s\n", tmp, strerror(errno));
    fail();
  }
  fprintf(f,
          "# SHA-256 of each generated CUDA source: label sha256. Written by\n"
          "# tests/test_codegen_golden.c with TB_GOLDEN_UPDATE=1, only when a change of\n"
          "# bytes is intended and its GPU A/B is in evidence/ (see that file's top comment).\n");
  for (size_t i = 0; i < list->count; ++i) {
    fprintf(f, "%s %s\n", list->items[i].label, list->items[i].sha256);
  }
  if (fclose(f) != 0 || rename(tmp, path) != 0) {
    print_error("cannot write %s: %s\n", path, strerror(errno));
    remove(tmp);
    fail();
  }
}

/* Drops repeated labels, keeping the first, and returns how many it
 * dropped (each named when `what` is given); one label must always give the
 * same bytes. `list` keeps its order; `sorted` receives the same entries
 * sorted by label. */
static size_t dedupe(struct entries *list, struct entries *sorted, const char *what) {
  sorted->items = malloc((list->count ? list->count : 1) * sizeof *sorted->items);
  assert_non_null(sorted->items);
  memcpy(sorted->items, list->items, list->count * sizeof *list->items);
  qsort(sorted->items, list->count, sizeof *sorted->items, by_label_then_order);
  size_t kept = 0;
  for (size_t i = 0; i < list->count; ++i) {
    const struct entry *e = &sorted->items[i];
    if (kept > 0 && strcmp(sorted->items[kept - 1].label, e->label) == 0) {
      if (strcmp(sorted->items[kept - 1].sha256, e->sha256) != 0) {
        print_error("%s: one label, two hashes (%s, %s)\n", e->label,
                    sorted->items[kept - 1].sha256, e->sha256);
        fail();
      }
      if (what != NULL) {
        print_error("%s repeats a label: %s\n", what, e->label);
      }
      continue;
    }
    sorted->items[kept++] = *e;
  }
  size_t dropped = list->count - kept;
  sorted->count = sorted->cap = kept;
  memcpy(list->items, sorted->items, kept * sizeof *list->items);
  qsort(list->items, kept, sizeof *list->items, by_order);
  list->count = kept;
  return dropped;
}

static void check_coverage(void) {
  printf(
      "matrix: %zu sources (%zu repeated labels dropped); reductions: register rows %zu, block "
      "streaming %zu, split row %zu, cluster row %zu (%zu cached, %zu streamed), subwarp rows %zu, "
      "persistent row %zu; "
      "register rows s=1 p>1 %zu, s=1 p=1 %zu, s 2..16 %zu, s>16 %zu; elementwise %zu; gemm: simt "
      "%zu + %zu "
      "(thread n < 4), mma.sync tf32 %zu, 3xtf32 %zu, wgmma n128 %zu, n256 %zu, matrix-vector "
      "rows %zu, columns %zu (k split %zu, whole %zu); 4-float loads "
      "%zu, 1-float %zu, A 1 and B 4 %zu; small-k rule %zu; 64-bit tile offsets %zu; user blocks "
      "%zu (%zu refused, not entries)\n",
      generated.count, reached.duplicates, reached.mapping[TB_MAPPING_REGISTER_ROWS],
      reached.mapping[TB_MAPPING_BLOCK_STREAMING], reached.mapping[TB_MAPPING_SPLIT_ROW],
      reached.mapping[TB_MAPPING_CLUSTER_ROW], reached.cluster_cached, reached.cluster_streamed,
      reached.mapping[TB_MAPPING_SUBWARP_ROWS], reached.mapping[TB_MAPPING_PERSISTENT_ROW],
      reached.s1_packed, reached.s1_single, reached.s_small, reached.s_large, reached.elementwise,
      reached.simt_wide, reached.simt_narrow, reached.mma_sync, reached.mma_sync_3xtf32,
      reached.wgmma_128, reached.wgmma_256, reached.gemv_rows, reached.gemv_columns,
      reached.gemv_split, reached.gemv_whole, reached.vw4, reached.vw1, reached.vw_mixed,
      reached.small_k, reached.wide_offsets, reached.user_blocks, reached.refused_blocks);
  const struct {
    const char *kind;
    size_t count;
  } every[] = {
      {"register rows", reached.mapping[TB_MAPPING_REGISTER_ROWS]},
      {"block streaming", reached.mapping[TB_MAPPING_BLOCK_STREAMING]},
      {"split row", reached.mapping[TB_MAPPING_SPLIT_ROW]},
      {"cluster row, chunk in registers", reached.cluster_cached},
      {"cluster row, chunk streamed", reached.cluster_streamed},
      {"subwarp rows", reached.mapping[TB_MAPPING_SUBWARP_ROWS]},
      {"persistent row", reached.mapping[TB_MAPPING_PERSISTENT_ROW]},
      {"register rows s = 1, p > 1", reached.s1_packed},
      {"register rows s = 1, p = 1", reached.s1_single},
      {"register rows s = 2..16", reached.s_small},
      {"register rows s > 16", reached.s_large},
      {"elementwise", reached.elementwise},
      {"gemm simt", reached.simt_wide},
      {"gemm simt, fewer than 4 outputs a thread along n", reached.simt_narrow},
      {"gemm mma.sync tf32", reached.mma_sync},
      {"gemm mma.sync 3xtf32", reached.mma_sync_3xtf32},
      {"gemm wgmma m64n128k8", reached.wgmma_128},
      {"gemm wgmma m64n256k8", reached.wgmma_256},
      {"gemm matrix-vector rows (n = 1)", reached.gemv_rows},
      {"gemm matrix-vector columns (m = 1)", reached.gemv_columns},
      {"gemm matrix-vector, k split (two launches)", reached.gemv_split},
      {"gemm matrix-vector, k whole (one launch)", reached.gemv_whole},
      {"gemm 4-float loads", reached.vw4},
      {"gemm 1-float loads", reached.vw1},
      {"gemm A 1-float loads, B 4-float (k % 4 != 0)", reached.vw_mixed},
      {"gemm small-k rule (k <= 48)", reached.small_k},
      {"gemm 64-bit tile offsets", reached.wide_offsets},
      {"gemm user blocks", reached.user_blocks},
  };
  for (size_t i = 0; i < sizeof every / sizeof every[0]; ++i) {
    if (every[i].count == 0) {
      print_error("the matrix no longer reaches: %s\n", every[i].kind);
      fail();
    }
  }
}

static void sources_match_golden(void **state) {
  reductions();
  forced_register_rows();
  elementwise();
  gemm();
  struct entries sorted = {0};
  reached.duplicates = dedupe(&generated, &sorted, NULL);
  check_coverage();
  if (golden_path == NULL) {
    print_error("no golden file: build with -DTB_GOLDEN_FILE=\"...\" or pass its path\n");
    fail();
  }
  const char *update = getenv("TB_GOLDEN_UPDATE");
  if (update != NULL && strcmp(update, "1") == 0) {
    write_golden(golden_path, &generated);
    printf("TB_GOLDEN_UPDATE=1: wrote %zu labels to %s; nothing compared\n", generated.count,
           golden_path);
    free(sorted.items);
    return;
  }
  struct entries golden = {0};
  read_golden(golden_path, &golden);
  struct entries golden_sorted = {0};
  size_t golden_duplicates = dedupe(&golden, &golden_sorted, "the golden file");
  size_t changed = 0, missing = 0, extra = 0;
  /* in matrix order: changed bytes, then labels the golden file lacks */
  for (size_t i = 0; i < generated.count; ++i) {
    const struct entry *now = &generated.items[i];
    const struct entry *was = bsearch(now, golden_sorted.items, golden_sorted.count,
                                      sizeof *golden_sorted.items, by_label);
    if (was == NULL) {
      print_error("not in the golden file: %s %s\n", now->label, now->sha256);
      missing++;
    } else if (strcmp(was->sha256, now->sha256) != 0) {
      print_error("bytes changed: %s (golden %.16s..., now %.16s...)\n", now->label, was->sha256,
                  now->sha256);
      changed++;
    }
  }
  for (size_t i = 0; i < golden.count; ++i) {
    if (bsearch(&golden.items[i], sorted.items, sorted.count, sizeof *sorted.items, by_label) ==
        NULL) {
      print_error("in the golden file, no longer generated: %s\n", golden.items[i].label);
      extra++;
    }
  }
  printf("golden %s: %zu labels; generated %zu; %zu changed, %zu missing, %zu extra\n", golden_path,
         golden.count, generated.count, changed, missing, extra);
  free(golden.items);
  free(golden_sorted.items);
  free(sorted.items);
  if (changed + missing + extra + golden_duplicates > 0) {
    fail_msg("%zu sources changed, %zu labels missing from, %zu extra in and %zu repeated in %s "
             "(listed above). "
             "Keep the generated kernels byte-identical, or, only when a change of bytes is "
             "intended and its GPU A/B is in evidence/, rerun with TB_GOLDEN_UPDATE=1",
             changed, missing, extra, golden_duplicates, golden_path);
  }
}

int main(int argc, char **argv) {
#ifdef TB_GOLDEN_FILE
  golden_path = TB_GOLDEN_FILE;
#endif
  if (argc > 1) {
    golden_path = argv[1];
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sources_match_golden),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  free(generated.items);
  return failed;
}
