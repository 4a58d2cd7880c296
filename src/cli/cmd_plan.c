/* tilebench plan: explain the execution mapping the planner picks for a shape. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cases/shape.h"
#include "cli/commands.h"
#include "planner/exec_plan.h"
#include "results/plan_json.h"

static const char usage[] =
    "usage: tilebench plan --op OP --shape MxN [--variant V] [--profile P] [--device-limits D]\n"
    "                      [--json]\n"
    "       tilebench plan --op gemm --shape MxNxK [--matrix-realization R] [--gemm-block M,N,K]\n"
    "                      [--json]\n"
    "  --op OP        sum, softmax, rmsnorm, layernorm, or gemm\n"
    "  --shape MxN    rows x elements per row (MxNxK for gemm)\n"
    "  --matrix-realization R  gemm: simt (default), tensor or tensor-3xtf32\n"
    "  --gemm-block M,N,K      gemm: a tile instead of the rule's\n"
    "  --variant V    automatic (default), reference (1 warp x 8 rows = s1p8), candidate\n"
    "                 (2 warps x 4 rows = s2p4), or sSpP: the register-rows candidate of S warps\n"
    "                 a row and P rows a block, S and P 1..32 (e.g. s4p2; the table's s and p)\n"
    "  --profile P    cost profile: calibrated-2 (default), calibrated (docs/planner.md)\n"
    "                 or analytic (docs/method.md §7)\n"
    "  --device-limits D  row reductions: the device facts to plan for: default (132\n"
    "                 SMs and nothing more: what a machine without a GPU plans) or h200 (the\n"
    "                 H200's block, shared-memory and cluster limits: what `run` plans there,\n"
    "                 cluster and persistent rows included)\n"
    "  --json         print the plan record as JSON (the form results.json stores)\n";

/* The device facts named by --device-limits; TB_ERR_USAGE for another name. */
static enum tb_status limits_named(const char *name, struct tb_device_limits *limits,
                                   struct tb_error *err) {
  if (strcmp(name, "default") == 0) {
    *limits = tb_device_limits_default();
  } else if (strcmp(name, "h200") == 0) {
    *limits = tb_device_limits_h200();
  } else {
    return tb_fail(err, TB_ERR_USAGE, "unknown device limits '%s' (default or h200)", name);
  }
  return TB_OK;
}

static void print_table(const struct tb_plan *plan) {
  printf("plan for %s %zux%zu, variant %s, profile %s\n", tb_op_info(plan->op)->name, plan->m,
         plan->n, tb_variant_name(plan->variant), plan->profile);
  printf("cost: %s\n", plan->cost_basis);
  printf("device limits: %s\n\n", plan->limits.source);
  printf("  #   s  p  width thr  slots rounds stor   score   kscore smem bar  util  blocks "
         "whole readB    gridthr  verdict\n");
  for (unsigned i = 0; i < plan->candidate_count; ++i) {
    const struct tb_candidate *c = &plan->candidates[i];
    const char *mark = (int)i == plan->chosen ? "<= chosen" : "";
    printf("%3u %3u %2u %5u %4u %6u %6u %4u %7.2f %8.2f %4u %3u %5.3f %7llu %5s %5llu %10llu  "
           "%s%s\n",
           c->index, c->subgroups, c->packing, c->width, c->threads, c->slots, c->rounds,
           c->storage, c->score, c->kernel_score, c->shared_bytes, c->barrier_sites,
           c->lane_utilisation, c->thread_blocks, c->whole_groups ? "yes" : "no",
           c->thread_read_bytes, c->grid_threads, c->rejected ? "rejected: " : "ok ",
           c->rejected ? c->rejection : mark);
  }
  printf("\n%u candidates, %u rejected\nmapping: %s\nrule: %s\n", plan->candidate_count,
         plan->rejected_count, tb_mapping_name(plan->mapping), plan->rule);
  if (plan->min_thread_read > 0) {
    printf("fed threads: reading >= %u B each, or a grid of <= %llu threads (%u SMs x %u)\n",
           plan->min_thread_read,
           (unsigned long long)TB_PLANNER_SM_THREADS * plan->limits.multiprocessors,
           plan->limits.multiprocessors, TB_PLANNER_SM_THREADS);
  }
  if (plan->variant != TB_VARIANT_AUTOMATIC) {
    const struct tb_candidate *c = &plan->fixed;
    printf("fixed variant (s %u, p %u): threads %u, slots %u, score %.2f, kernel score %.2f, "
           "shared %u B, barriers %u%s%s\n",
           c->subgroups, c->packing, c->threads, c->slots, c->score, c->kernel_score,
           c->shared_bytes, c->barrier_sites, c->rejected ? ", rejected: " : "",
           c->rejected ? c->rejection : "");
  }
  if (plan->mapping == TB_MAPPING_SUBWARP_ROWS) {
    const struct tb_subwarp_facts *f = &plan->subwarp;
    printf(
        "lanes/row %u (%u shuffle levels a reduction), slots %u, rows/warp %u, threads/block %u, "
        "rows/block %u, blocks %llu, utilisation %.3f\n",
        f->lanes, f->shuffle_levels, f->slots, f->rows_per_warp, f->threads_per_block,
        f->rows_per_block, f->thread_blocks, f->lane_utilisation);
  } else if (plan->mapping != TB_MAPPING_REGISTER_ROWS) {
    const struct tb_stream_facts *f = &plan->stream;
    printf("threads/block %u, blocks/row %u, chunk %llu elements, blocks %llu, memory passes %u, "
           "launches %u\n",
           f->threads_per_block, f->blocks_per_row, f->chunk_elements, f->thread_blocks,
           f->memory_passes, f->launches);
  }
}

/* A tiled gemm plan's tile, threads, and (wgmma) packing launch or split
 * of k. */
static void print_tiled(const struct tb_gemm_plan *plan) {
  printf("tile %ux%ux%u, %u threads, %s %ux%u, %u stages, %u-float loads of A, %u of B, %s\n",
         plan->block_m, plan->block_n, plan->block_k, plan->threads,
         plan->realization == TB_REALIZATION_SIMT ? "outputs per thread"
         : plan->warpgroups != 0                  ? "warpgroup tile"
                                                  : "warp tile",
         plan->thread_m, plan->thread_n, plan->stages, plan->a_vector_width, plan->vector_width,
         plan->instruction);
  if (plan->tensor_maps) {
    printf("%sA and B copied by TMA from the inputs (tensor maps), C^T = B^T A^T\n",
           plan->launches == 1 ? "one launch: " : "");
  }
  if (plan->k_splits > 1) {
    printf("k in %llu chunk(s) of %llu, a block each; partial tiles added in chunk order by a "
           "second launch: %llu blocks, %llu floats of workspace\n",
           plan->k_splits, plan->k_chunk, plan->combine_blocks, plan->workspace_floats);
  }
  if (plan->pack_blocks > 0) {
    printf("packing launch first: %llu blocks, %llu floats of workspace\n", plan->pack_blocks,
           plan->workspace_floats);
  }
}

/* A matrix-vector plan: who owns which outputs, the k split, the second
 * launch. */
static void print_gemv(const struct tb_gemm_plan *plan) {
  if (plan->gemv == TB_GEMV_ROWS) {
    printf("matrix-vector (rows): a warp per row of A, %u rows a block", plan->warps_m);
  } else {
    printf("matrix-vector (columns): a thread per %u column(s) of B, %u a block", plan->thread_n,
           plan->block_n);
  }
  printf(", %u threads, %u-float loads, %s\n", plan->threads, plan->vector_width,
         plan->instruction);
  printf("k in %llu chunk(s) of %llu, a block each", plan->k_splits, plan->k_chunk);
  if (plan->launches > 1) {
    printf("; partial sums added in chunk order by a second launch: %llu blocks, %llu floats of "
           "workspace",
           plan->combine_blocks, plan->workspace_floats);
  }
  putchar('\n');
}

/* gemm: the tile rule for a packed, 16-byte aligned case on the default
 * device (132 multiprocessors), as `tilebench run` would record it. */
static int plan_gemm(struct tb_shape shape, const char *realization_text, const char *block_text,
                     int as_json, struct tb_error *err) {
  enum tb_realization realization;
  struct tb_gemm_block block = {0, 0, 0};
  struct tb_gemm_plan plan;
  struct tb_device_limits limits = tb_device_limits_default();
  struct tb_gemm_alignment aligned = {shape.k % 4 == 0,
                                      shape.n % 4 == 0 || shape.n == 1}; /* packed */
  if (tb_realization_parse(realization_text, &realization, err) != TB_OK ||
      (block_text != NULL && tb_gemm_block_parse(block_text, &block, err) != TB_OK) ||
      tb_plan_gemm(shape.m, shape.n, shape.k, realization, block, tb_gemm_target_h200(), aligned,
                   &plan, err) != TB_OK) {
    return tb_cli_fail(err);
  }
  struct tb_exec_plan record = {.kind = TB_PLAN_GEMM, .as.gemm = plan};
  json_t *j = tb_exec_plan_to_json(&record);
  if (as_json) {
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    putchar('\n');
  } else {
    printf("gemm %zux%zux%zu, realization %s (%s), packed inputs, %s\n", shape.m, shape.n, shape.k,
           tb_realization_name(realization), tb_realization_precision(realization), limits.source);
    if (plan.gemv != TB_GEMV_NONE) {
      print_gemv(&plan);
    } else {
      print_tiled(&plan);
    }
    char chunks[48] = ""; /* the blocks of a plan that splits k also run along it */
    if (plan.k_splits > 1 || plan.gemv != TB_GEMV_NONE) {
      snprintf(chunks, sizeof chunks, " x %llu chunk(s) of k", plan.k_splits);
    }
    printf("grid %llu x %llu%s = %llu blocks, %llu wave(s) over %u multiprocessors, %u B shared\n",
           plan.grid_m, plan.grid_n, chunks, plan.blocks, plan.waves, plan.multiprocessors,
           plan.shared_bytes);
    printf("rule: %s\n", plan.rule);
  }
  json_decref(j);
  return 0;
}

int tb_cmd_plan(int argc, char **argv) {
  static const struct option options[] = {{"op", required_argument, NULL, 'o'},
                                          {"shape", required_argument, NULL, 's'},
                                          {"variant", required_argument, NULL, 'v'},
                                          {"profile", required_argument, NULL, 'p'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"matrix-realization", required_argument, NULL, 'r'},
                                          {"gemm-block", required_argument, NULL, 'g'},
                                          {"device-limits", required_argument, NULL, 'd'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *op_name = NULL, *shape_text = NULL, *variant_text = "automatic";
  const char *realization_text = "simt", *block_text = NULL, *limits_text = NULL;
  const char *profile = TB_PLANNER_PROFILE_DEFAULT;
  int as_json = 0, opt;
  optind = 1;
  opterr = 0;
  struct tb_error err = {0};
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    switch (opt) {
    case 'o': op_name = optarg; break;
    case 's': shape_text = optarg; break;
    case 'v': variant_text = optarg; break;
    case 'p': profile = optarg; break;
    case 'j': as_json = 1; break;
    case 'r': realization_text = optarg; break;
    case 'g': block_text = optarg; break;
    case 'd': limits_text = optarg; break;
    case 'h': fputs(usage, stdout); return 0;
    default:
      tb_fail(&err, TB_ERR_USAGE, "unknown or incomplete option '%s'\n%s", argv[optind - 1], usage);
      return tb_cli_fail(&err);
    }
  }
  if (optind < argc || op_name == NULL || shape_text == NULL) {
    tb_fail(&err, TB_ERR_USAGE, "plan needs --op and --shape\n%s", usage);
    return tb_cli_fail(&err);
  }
  const struct tb_op_info *op = tb_op_by_name(op_name);
  struct tb_shape shape;
  enum tb_variant variant;
  if (op == NULL) {
    tb_fail(&err, TB_ERR_USAGE, "unknown operation '%s' (known: %s)", op_name, tb_op_names());
    return tb_cli_fail(&err);
  }
  if (op->is_matmul) {
    if (tb_shape_parse(shape_text, &shape, &err) != TB_OK) {
      return tb_cli_fail(&err);
    }
    if (shape.k == 0) {
      tb_fail(&err, TB_ERR_USAGE, "gemm takes an MxNxK shape, not %s", shape_text);
      return tb_cli_fail(&err);
    }
    if (limits_text != NULL) {
      tb_fail(&err, TB_ERR_USAGE,
              "--device-limits is for row reductions: gemm plans for the H200's target");
      return tb_cli_fail(&err);
    }
    return plan_gemm(shape, realization_text, block_text, as_json, &err);
  }
  struct tb_plan plan;
  struct tb_device_limits limits;
  if (limits_named(limits_text != NULL ? limits_text : "default", &limits, &err) != TB_OK) {
    return tb_cli_fail(&err);
  }
  if (tb_shape_parse(shape_text, &shape, &err) == TB_OK && shape.k != 0) {
    tb_fail(&err, TB_ERR_USAGE, "%s takes an MxN shape, not %s (MxNxK is for gemm)", op->name,
            shape_text);
    return tb_cli_fail(&err);
  }
  if (err.status != TB_OK || tb_variant_parse(variant_text, &variant, &err) != TB_OK ||
      tb_plan_reduction(op->op, shape.m, shape.n, variant, &limits, profile, &plan, &err) !=
          TB_OK) {
    return tb_cli_fail(&err);
  }
  if (as_json) {
    struct tb_exec_plan record = {.kind = TB_PLAN_REDUCTION, .as.reduction = plan};
    json_t *j = tb_exec_plan_to_json(&record);
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    putchar('\n');
    json_decref(j);
  } else {
    print_table(&plan);
  }
  return 0;
}
