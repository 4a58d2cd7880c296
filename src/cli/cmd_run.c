/* tilebench run: measure a campaign and archive it in a new directory. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/user_library.h"
#include "backends/user_source.h"
#include "backends/cuda/driver.h"
#ifdef TB_HAVE_TIMING
#include "measure/copy_ceiling.h"
#endif
#include "cli/commands.h"
#include "cli/devices.h"
#include "cli/gpu_json.h"
#include "cli/gpu_lock.h"
#include "cli/run_options.h"
#include "core/clock.h"
#include "core/interrupt.h"
#include "core/strlist.h"
#include "measure/campaign.h"
#include "measure/replay_summary.h"
#include "planner/gemm.h"
#include "planner/planner.h"
#include "provenance/hash.h"
#include "providers/torch_worker.h"
#include "registry/registry.h"
#include "report/report.h"
#include "results/document.h"
#include "results/load.h"
#include "results/model.h"
#include "results/results.h"

/* Resolves --backend; auto takes the GPU only when the CUDA backend can use
 * one. The reason for the choice is recorded in the results. */
static enum tb_status choose_backend(const char *requested, const char **chosen, char *why,
                                     size_t why_size, struct tb_error *err) {
  struct tb_error probe = {0};
  int have_gpu = tb_cuda_driver_open(&probe) == TB_OK;
  if (strcmp(requested, "cpu") == 0) {
    *chosen = "cpu";
    snprintf(why, why_size, "requested with --backend cpu");
    return TB_OK;
  }
  if (strcmp(requested, "cuda") == 0) {
    if (!have_gpu) {
      return tb_fail(err, TB_ERR_UNAVAILABLE, "--backend cuda: %s", probe.message);
    }
    *chosen = "cuda";
    snprintf(why, why_size, "requested with --backend cuda");
    return TB_OK;
  }
  if (strcmp(requested, "auto") == 0) {
    *chosen = have_gpu ? "cuda" : "cpu";
    snprintf(why, why_size, "auto: %s",
             have_gpu ? "a CUDA driver and GPU were found" : probe.message);
    return TB_OK;
  }
  return tb_fail(err, TB_ERR_USAGE, "unknown backend '%s' (known: cpu,cuda,auto)", requested);
}

/* A CUDA source kernel: --launch and .cu come together, and the source, its
 * entry points and its launch for every shape are checked before anything
 * runs (compiling is the provider's, for the device it finds). */
static enum tb_status check_source_kernel(struct tb_run_options *o, struct tb_campaign *c,
                                          struct tb_error *err) {
  if (!tb_user_source_is_cu(o->kernel)) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--launch is for a CUDA source kernel (--kernel X.cu); a library (%s) "
                   "launches its own kernels: leave --launch out",
                   o->kernel);
  }
  if (o->launch == NULL) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--kernel %s is CUDA source: add --launch, for example --launch "
                   "'grid=m,block=256,smem=0' or --launch @FILE (docs/user-kernels.md)",
                   o->kernel);
  }
  struct tb_user_source src;
  if (tb_user_source_open(o->kernel, o->launch, &src, err) != TB_OK) {
    return err->status;
  }
  enum tb_status st = tb_user_source_check_ops(&src, c->ops, c->op_count, err) == TB_OK
                          ? tb_user_source_check_shapes(&src, c->shapes, c->shape_count, err)
                          : err->status;
  tb_user_source_close(&src);
  if (st == TB_OK && o->backend != NULL && strcmp(o->backend, "cpu") == 0) {
    /* after the source's own checks, so they are reported on any machine */
    st = tb_fail(err, TB_ERR_USAGE,
                 "--kernel %s is CUDA source, which runs on the CUDA backend only: drop "
                 "--backend cpu",
                 o->kernel);
  }
  c->kernel_library = o->kernel;
  c->kernel_launch = o->launch;
  return st;
}

/* --kernel and the user provider come together; the library is loaded here,
 * so a missing file, another ABI or an operation it lacks is refused before
 * anything runs, and stays loaded for the run, so that provenance lists it
 * (the provider opens the same file again: dlopen counts references). */
static enum tb_status check_kernel(struct tb_run_options *o, struct tb_campaign *c,
                                   struct tb_error *err) {
  bool wants_user = false, wants_python = false;
  for (size_t i = 0; i < o->providers.count; ++i) {
    wants_user = wants_user || strcmp(o->providers.items[i], "user") == 0;
    wants_python = wants_python || strcmp(o->providers.items[i], "user-python") == 0;
  }
  if (wants_python) { /* --kernel FILE.py:FUNCTION, imported once by a worker to check it */
    if (wants_user || o->kernel == NULL || o->launch != NULL) {
      return tb_fail(err, TB_ERR_USAGE,
                     "--providers user-python needs --kernel FILE.py:FUNCTION, and neither the "
                     "user provider nor --launch beside it (docs/user-kernels.md)");
    }
    c->kernel_library = o->kernel;
    return tb_user_python_check(o->kernel, err);
  }
  if (wants_user && o->kernel == NULL) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--providers user needs --kernel PATH: the shared library to measure "
                   "(docs/user-kernels.md)");
  }
  if (!wants_user && o->kernel != NULL) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--kernel is the user provider's library: add user to --providers (for "
                   "example --providers native,user), or user-python for FILE.py:FUNCTION");
  }
  if (o->kernel == NULL && o->launch != NULL) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--launch describes the launch of a CUDA source kernel: give it with "
                   "--kernel X.cu and user in --providers");
  }
  if (!wants_user) {
    return TB_OK;
  }
  if (tb_user_source_is_cu(o->kernel) || o->launch != NULL) {
    return check_source_kernel(o, c, err);
  }
  if (tb_user_library_open(o->kernel, &o->user_lib, err) != TB_OK ||
      tb_user_library_check_ops(&o->user_lib, c->ops, c->op_count, err) != TB_OK) {
    return err->status;
  }
  c->kernel_library = o->kernel;
  return TB_OK;
}

/* Checks every list item before anything runs, so bad input costs nothing. */
static enum tb_status build_campaign(struct tb_run_options *o, struct tb_campaign *c,
                                     struct tb_error *err) {
  memset(c, 0, sizeof *c);
  for (size_t i = 0; i < o->ops.count; ++i) {
    const struct tb_op_info *op = tb_op_by_name(o->ops.items[i]);
    if (op == NULL) {
      return tb_fail(err, TB_ERR_USAGE, "unknown operation '%s' (known: %s)", o->ops.items[i],
                     tb_op_names());
    }
    for (size_t k = 0; k < c->op_count; ++k) {
      if (c->ops[k] == op) {
        return tb_fail(err, TB_ERR_USAGE, "--ops names '%s' twice", op->name);
      }
    }
    if (c->op_count == TB_OP_COUNT) {
      return tb_fail(err, TB_ERR_USAGE, "--ops lists too many operations");
    }
    c->ops[c->op_count++] = op;
  }
  c->shapes = calloc(o->shapes.count, sizeof *c->shapes);
  if (c->shapes == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory");
  }
  for (size_t i = 0; i < o->shapes.count; ++i) {
    struct tb_shape s;
    if (tb_shape_parse(o->shapes.items[i], &s, err) != TB_OK) {
      return err->status;
    }
    for (size_t k = 0; k < c->shape_count; ++k) {
      if (c->shapes[k].m == s.m && c->shapes[k].n == s.n && c->shapes[k].k == s.k) {
        return tb_fail(err, TB_ERR_USAGE, "--shapes names %s twice", o->shapes.items[i]);
      }
    }
    c->shapes[c->shape_count++] = s;
  }
  for (size_t i = 0; i < o->views.count; ++i) {
    enum tb_view_kind view;
    if (tb_view_kind_parse(o->views.items[i], &view, err) != TB_OK) {
      return err->status;
    }
    for (size_t k = 0; k < c->view_count; ++k) {
      if (c->views[k] == view) {
        return tb_fail(err, TB_ERR_USAGE, "--input-views names '%s' twice", tb_view_name(view));
      }
    }
    c->views[c->view_count++] = view;
  }
  for (size_t i = 0; i < o->providers.count; ++i) {
    if (!tb_provider_known(o->providers.items[i])) {
      return tb_fail(err, TB_ERR_USAGE, "unknown provider '%s' (known: %s)", o->providers.items[i],
                     tb_provider_names());
    }
    for (size_t k = 0; k < i; ++k) {
      if (strcmp(o->providers.items[k], o->providers.items[i]) == 0) {
        return tb_fail(err, TB_ERR_USAGE, "--providers names '%s' twice", o->providers.items[i]);
      }
    }
  }
  if (check_kernel(o, c, err) != TB_OK) {
    return err->status;
  }
  for (size_t i = 0; i < o->variants.count; ++i) {
    enum tb_variant v;
    if (tb_variant_parse(o->variants.items[i], &v, err) != TB_OK) {
      return err->status;
    }
    if (c->variant_count == TB_CAMPAIGN_MAX_VARIANTS) {
      return tb_fail(err, TB_ERR_USAGE, "--variants names more than %d variants",
                     TB_CAMPAIGN_MAX_VARIANTS);
    }
    for (size_t k = 0; k < c->variant_count; ++k) {
      if (c->variants[k] == v) {
        return tb_fail(err, TB_ERR_USAGE,
                       "--variants names '%s' twice (s1p8 is reference, s2p4 candidate)",
                       tb_variant_name(v));
      }
    }
    c->variants[c->variant_count++] = v;
  }
  for (size_t i = 0; i < o->realizations.count; ++i) {
    enum tb_realization r;
    if (tb_realization_parse(o->realizations.items[i], &r, err) != TB_OK) {
      return err->status;
    }
    for (size_t k = 0; k < c->realization_count; ++k) {
      if (c->realizations[k] == r) {
        return tb_fail(err, TB_ERR_USAGE, "--matrix-realization names '%s' twice",
                       tb_realization_name(r));
      }
    }
    c->realizations[c->realization_count++] = r;
  }
  if (o->gemm_block != NULL && tb_gemm_block_parse(o->gemm_block, &c->gemm_block, err) != TB_OK) {
    return err->status;
  }
  if (tb_planner_profile_check(o->profile, err) != TB_OK) {
    return err->status;
  }
  c->profile = o->profile;
  for (size_t i = 0; i < c->realization_count && c->gemm_block.m != 0; ++i) {
    struct tb_gemm_plan probe; /* the block must suit every realization asked for */
    /* the widest set of blocks (wgmma's, with tensor maps, too): a device
     * without wgmma, or a case whose rows TMA cannot copy, refuses a block
     * only they take when the case is planned for it */
    struct tb_gemm_target widest = {1, true, true};
    if (tb_plan_gemm(1, 1, 1, c->realizations[i], c->gemm_block, widest, TB_GEMM_ALIGNED, &probe,
                     err) != TB_OK) {
      return err->status;
    }
  }
  if (o->replay && c->variant_count != 2) {
    return tb_fail(err, TB_ERR_USAGE,
                   "replay compares exactly two variants (--variants A,B: A is "
                   "the reference, B the candidate)");
  }
  if (o->replay) {
    size_t reductions = 0;
    for (size_t k = 0; k < c->op_count; ++k) {
      reductions += c->ops[k]->is_row_reduction;
    }
    if (reductions == 0) {
      return tb_fail(err, TB_ERR_USAGE,
                     "replay compares plans of row reductions: give at least "
                     "one of sum,softmax,rmsnorm,layernorm");
    }
  }
  c->reductions_only = o->replay;
  c->round = -1;
  if (tb_campaign_check_shapes(c, err) != TB_OK) {
    return err->status;
  }
  c->providers = o->providers.items;
  c->provider_count = o->providers.count;
  c->seed = o->seed;
  c->measure.samples = (unsigned)o->samples;
  c->measure.stopping = o->stopping;
  c->measure.warmup_ms = o->warmup_ms;
  c->measure.sample_ms = o->sample_ms;
  c->measure.probe = o->probe;
  c->measure.clock_checks_off = o->clock_checks_off;
  c->measure.batch_modes = o->batch_modes;
  c->measure.tolerance_scale = o->tolerance_scale;
  c->progress = !o->quiet && isatty(STDERR_FILENO);
  return tb_campaign_check_memory(c, err);
}

/* The device copy ceiling the cases are judged against (GPU only). */
static json_t *copy_ceiling(const char *backend) {
#ifdef TB_HAVE_TIMING
  if (strcmp(backend, "cuda") == 0) {
    return tb_measure_copy_ceiling();
  }
#endif
  (void)backend;
  return json_null();
}

/* What the defence plausible judges GPU figures against: the copy ceiling
 * just measured and device 0's facts (gemm's peak). */
static void plausibility_facts(const char *backend, const json_t *ceiling,
                               struct tb_plausibility_facts *f) {
  memset(f, 0, sizeof *f);
  if (strcmp(backend, "cuda") != 0) {
    snprintf(f->copy_ceiling_missing, sizeof f->copy_ceiling_missing,
             "the run's backend is %s: no device copy ceiling", backend);
    return;
  }
  double gbps = json_number_value(json_object_get(ceiling, "gbps"));
  if (gbps > 0.0) {
    f->copy_ceiling_gbps = gbps;
  } else {
    const char *why = json_string_value(json_object_get(ceiling, "error"));
    snprintf(f->copy_ceiling_missing, sizeof f->copy_ceiling_missing, "copy ceiling: %s",
             why ? why : "not measured");
  }
  struct tb_gpu_inventory *inventory = malloc(sizeof *inventory);
  if (inventory == NULL) {
    return;
  }
  tb_cuda_inventory_read(inventory);
  if (inventory->available && inventory->count > 0 && inventory->devices[0].ok) {
    const struct tb_gpu_facts *g = &inventory->devices[0];
    f->cc_major = g->cc_major;
    f->cc_minor = g->cc_minor;
    f->multiprocessors = g->multiprocessors;
    f->max_sm_clock_khz = g->max_sm_clock_khz;
  }
  free(inventory);
}

/* What the results record of the invocation, gathered from the options and
 * the campaign; the facts point into `variants`, `realizations` and
 * `skipped`, which the caller provides. */
static struct tb_run_facts run_facts(const struct tb_run_options *o, const struct tb_campaign *c,
                                     const char *backend, const char *why, int argc, char **argv,
                                     const char **variants, const char **realizations,
                                     struct tb_skipped_pair *skipped) {
  for (size_t i = 0; i < c->variant_count; ++i) {
    variants[i] = tb_variant_name(c->variants[i]);
  }
  for (size_t i = 0; i < c->realization_count; ++i) {
    realizations[i] = tb_realization_name(c->realizations[i]);
  }
  return (struct tb_run_facts){.argc = argc,
                               .argv = argv,
                               .backend = backend,
                               .backend_reason = why,
                               .seed = o->seed,
                               .samples = c->measure.samples,
                               .stopping = c->measure.stopping,
                               .warmup_ms = c->measure.warmup_ms,
                               .sample_ms = c->measure.sample_ms,
                               .probe = c->measure.probe,
                               .clock_checks = !c->measure.clock_checks_off,
                               .batch_modes = c->measure.batch_modes,
                               .variants = variants,
                               .variant_count = c->variant_count,
                               .profile = c->profile,
                               .realizations = realizations,
                               .realization_count = c->realization_count,
                               .skipped = skipped,
                               .skipped_count = tb_campaign_skipped_pairs(c, skipped),
                               .gemm_block = c->gemm_block,
                               .tolerance_scale = c->measure.tolerance_scale};
}

/* Writes results.json, then results.md from that document alone. */
static enum tb_status archive(const char *dir, const json_t *doc,
                              const struct tb_results_model *model, struct tb_error *err) {
  if (tb_write_json_atomic(dir, TB_RESULTS_FILE, doc, err) != TB_OK) {
    return err->status;
  }
  char *md = tb_report_markdown(model, err);
  if (md == NULL) {
    return err->status;
  }
  tb_write_text_atomic(dir, "results.md", md, err);
  free(md);
  return err->status;
}

/* A frozen replay: the pilot's model (its artifacts checked against this
 * run's and recorded, its sources for the campaign to check). */
static enum tb_status load_frozen(const char *pilot_dir, struct tb_document *d,
                                  struct tb_results_model *pilot, struct tb_error *err) {
  char path[PATH_MAX], digest[TB_SHA256_HEX_LEN];
  memset(pilot, 0, sizeof *pilot);
  if (tb_results_path(pilot_dir, path, sizeof path, err) != TB_OK ||
      tb_results_model_load(path, pilot, digest, err) != TB_OK) {
    return err->status;
  }
  return tb_document_freeze(d, pilot_dir, pilot, digest, err);
}

/* Replay rounds: the variant measured first alternates round by round. */
static void run_rounds(const struct tb_run_options *o, struct tb_campaign *c, struct tb_document *d,
                       size_t *valid, struct tb_error *err) {
  const char *orders[TB_REPLAY_MAX_ROUNDS][2];
  size_t started = 0;
  struct tb_case_sink sink = tb_document_sink(d);
  for (unsigned r = 0; r < o->rounds && err->status == TB_OK; ++r) {
    if (!tb_interrupted()) { /* a round that never started has no order */
      orders[started][0] = tb_variant_name(tb_campaign_variant_at(c, (int)r, 0));
      orders[started++][1] = tb_variant_name(tb_campaign_variant_at(c, (int)r, 1));
    }
    size_t round_valid = 0;
    c->round = (int)r;
    tb_campaign_run(c, &sink, &round_valid, err);
    *valid += round_valid;
  }
  tb_document_set_replay_plan(d, (unsigned)o->rounds, tb_variant_name(c->variants[0]),
                              tb_variant_name(c->variants[1]), (const char *const(*)[2])orders,
                              started);
}

/* The paired summary of a replay that ran every round (a summary of some
 * rounds would mislead), from the document's own case records. */
static enum tb_status summarise_replay(const struct tb_run_options *o, const struct tb_campaign *c,
                                       struct tb_document *d, struct tb_error *err) {
  struct tb_results_model cases;
  struct tb_replay_record summary;
  if (tb_results_model_fill(tb_document_json(d), &cases, err) != TB_OK) {
    return err->status;
  }
  if (tb_replay_summary(&cases, tb_variant_name(c->variants[0]), tb_variant_name(c->variants[1]),
                        (unsigned)o->rounds, &summary, err) == TB_OK) {
    tb_document_set_replay_summary(d, &summary);
    tb_replay_record_free(&summary);
  }
  tb_results_model_free(&cases);
  return err->status;
}

/* Writes the results, prints the table and returns the exit code. */
static int finish_run(const struct tb_run_options *o, const struct tb_document *d, size_t valid,
                      const struct tb_error *err) {
  struct tb_error write_err = {0};
  struct tb_results_model model;
  if (tb_results_model_fill(tb_document_json(d), &model, &write_err) != TB_OK) {
    return tb_cli_fail(&write_err);
  }
  if (archive(o->out, tb_document_json(d), &model, &write_err) != TB_OK) {
    tb_results_model_free(&model);
    return tb_cli_fail(&write_err);
  }
  tb_release_out_dir(o->out);
  char *table = tb_report_terminal_table(&model, &write_err);
  if (table != NULL) {
    fputs(table, stdout);
    free(table);
  }
  size_t total = model.case_count;
  if (tb_document_interrupted(d)) {
    /* the line a script greps for says the run is incomplete, not only stderr */
    const json_t *missing =
        json_object_get(json_object_get(json_object_get(tb_document_json(d), "run"), "interrupted"),
                        "missing_cases");
    printf("\nINCOMPLETE: %zu of %zu measured cases valid, %zu cases not measured; results in "
           "%s/%s\n",
           valid, total, json_array_size(missing), o->out, TB_RESULTS_FILE);
  } else {
    printf("\n%zu of %zu cases valid; results in %s/%s\n", valid, total, o->out, TB_RESULTS_FILE);
  }
  int rc = 0;
  if (err->status != TB_OK) {
    rc = tb_cli_fail(err);
  } else if (tb_document_interrupted(d)) {
    fprintf(stderr, "tilebench: %s; the results file is marked incomplete\n",
            model.error ? model.error : "interrupted");
    rc = 1;
  } else if (valid != total) {
    fprintf(stderr, "tilebench: %zu case(s) invalid; see %s/results.md\n", total - valid, o->out);
    rc = 1;
  }
  tb_results_model_free(&model);
  return rc;
}

/* A CUDA source kernel needs the backend that compiles it: refused before
 * the output directory is claimed when `auto` found no GPU. */
static enum tb_status check_source_backend(const struct tb_campaign *c, const char *backend,
                                           struct tb_error *err) {
  if (c->kernel_launch == NULL || strcmp(backend, "cuda") == 0) {
    return TB_OK;
  }
  return tb_fail(err, TB_ERR_USAGE,
                 "--kernel %s is CUDA source, which runs on the CUDA backend only; this run's "
                 "backend is %s (no usable GPU was found)",
                 c->kernel_library, backend);
}

/* --shard I/N: the whole campaign's units dealt to N shards; the campaign
 * walks shard I's alone. */
static enum tb_status prepare_shard(struct tb_run_options *o, struct tb_campaign *c,
                                    struct tb_error *err) {
  if (o->shard == NULL && o->devices == NULL) {
    return TB_OK;
  }
  if (tb_campaign_units(c, &o->units, &o->unit_count, err) != TB_OK) {
    return err->status;
  }
  if (o->shard == NULL) {
    return TB_OK;
  }
  o->shard_of = calloc(o->unit_count ? o->unit_count : 1, sizeof *o->shard_of);
  if (o->shard_of == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory");
  }
  if (tb_shard_assign(o->units, o->unit_count, o->shard_count, o->shard_of, err) != TB_OK) {
    char why[sizeof err->message];
    snprintf(why, sizeof why, "%s", err->message);
    tb_error_clear(err);
    return tb_fail(err, TB_ERR_USAGE, "--shard %s: %s", o->shard, why);
  }
  c->shard_of = o->shard_of;
  c->shard_index = o->shard_index;
  return TB_OK;
}

/* The shard's place in its campaign, for run.shard. */
static struct tb_shard_facts shard_facts(const struct tb_run_options *o) {
  return (struct tb_shard_facts){.index = o->shard_index,
                                 .count = o->shard_count,
                                 .units = o->units,
                                 .unit_count = o->unit_count,
                                 .shard_of = o->shard_of,
                                 .argv = o->campaign_argv,
                                 .argc = o->campaign_argc};
}

/* The GPUs of --devices as CUDA_VISIBLE_DEVICES values: ordinals index the
 * GPUs this process sees (through its own CUDA_VISIBLE_DEVICES, when set);
 * UUIDs pass as they are. */
static enum tb_status resolve_devices(const char *text, struct tb_strlist *out,
                                      struct tb_error *err) {
  struct tb_gpu_inventory inventory;
  tb_cuda_inventory_read(&inventory);
  struct tb_strlist visible = {0};
  const char *env = getenv("CUDA_VISIBLE_DEVICES");
  if (env != NULL && *env != '\0' &&
      tb_strlist_split(env, "CUDA_VISIBLE_DEVICES", &visible, err) != TB_OK) {
    return err->status;
  }
  enum tb_status st = TB_OK;
  if (strcmp(text, "all") == 0) {
    out->items = calloc((size_t)inventory.count + 1, sizeof *out->items);
    for (int i = 0; out->items != NULL && i < inventory.count; ++i) {
      char ordinal[16];
      snprintf(ordinal, sizeof ordinal, "%d", i);
      out->items[out->count++] = strdup(visible.count > (size_t)i ? visible.items[i] : ordinal);
    }
    st = out->items == NULL ? tb_fail(err, TB_ERR_SYSTEM, "out of memory") : TB_OK;
  } else if (tb_strlist_split(text, "--devices", out, err) == TB_OK) {
    for (size_t i = 0; i < out->count && st == TB_OK; ++i) {
      char *item = out->items[i];
      if (strncmp(item, "GPU-", 4) == 0 || strncmp(item, "MIG-", 4) == 0) {
        continue;
      }
      long ordinal = strtol(item, NULL, 10);
      if (ordinal >= inventory.count) {
        st = tb_fail(err, TB_ERR_USAGE, "--devices names GPU %ld; this process sees %d (0 to %d)",
                     ordinal, inventory.count, inventory.count - 1);
      } else if (visible.count > (size_t)ordinal) {
        char *mapped = strdup(visible.items[ordinal]);
        if (mapped != NULL) {
          free(item);
          out->items[i] = mapped;
        }
      }
    }
  } else {
    st = err->status;
  }
  tb_strlist_free(&visible);
  return st;
}

/* --devices: refused off the CUDA backend; else one shard per GPU, at most
 * one per unit of the campaign. */
static int run_on_devices(struct tb_run_options *o, int argc, char **argv, struct tb_error *err) {
  const char *backend = NULL;
  char why[1100];
  if (choose_backend(o->backend, &backend, why, sizeof why, err) != TB_OK) {
    return tb_cli_fail(err);
  }
  if (strcmp(backend, "cuda") != 0) {
    tb_fail(err, TB_ERR_USAGE,
            "--devices runs one measurement process per GPU, and this run's backend is %s (%s); "
            "on the CPU, run the shards as separate jobs (--shard I/N, then tilebench merge; "
            "docs/campaigns.md)",
            backend, why);
    return tb_cli_fail(err);
  }
  struct tb_strlist devices = {0};
  if (resolve_devices(o->devices, &devices, err) != TB_OK || devices.count == 0) {
    if (err->status == TB_OK) {
      tb_fail(err, TB_ERR_UNAVAILABLE, "--devices all: the CUDA driver lists no GPU");
    }
    tb_strlist_free(&devices);
    return tb_cli_fail(err);
  }
  size_t shards = devices.count < o->unit_count ? devices.count : o->unit_count;
  if (shards < devices.count) {
    fprintf(stderr,
            "tilebench: note: the campaign has %zu case(s) (op/shape/view): %zu of the %zu "
            "GPUs are used\n",
            o->unit_count, shards, devices.count);
  }
  char self[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    tb_strlist_free(&devices);
    tb_fail(err, TB_ERR_SYSTEM, "cannot find this executable (/proc/self/exe)");
    return tb_cli_fail(err);
  }
  self[len] = '\0';
  struct tb_devices_plan plan = {.executable = self,
                                 .campaign_argv = o->campaign_argv,
                                 .campaign_argc = o->campaign_argc,
                                 .devices = (const char *const *)devices.items,
                                 .device_count = shards,
                                 .out = o->out,
                                 .quiet = o->quiet,
                                 .argc = argc,
                                 .argv = argv};
  int rc = tb_devices_run(&plan);
  tb_strlist_free(&devices);
  return rc;
}

/* A CUDA run takes its GPU's lock (cli/gpu_lock.h): device 0, the one it
 * times; a GPU whose UUID the driver does not give is not locked. */
static enum tb_status lock_gpu(const char *backend, struct tb_error *err) {
  if (strcmp(backend, "cuda") != 0) {
    return TB_OK;
  }
  struct tb_gpu_inventory *inventory = malloc(sizeof *inventory);
  if (inventory == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory reading the GPU's identity");
  }
  tb_cuda_inventory_read(inventory);
  enum tb_status st = TB_OK;
  if (inventory->available && inventory->count > 0 && inventory->devices[0].uuid[0] != '\0') {
    st = tb_gpu_lock_acquire(inventory->devices[0].uuid, err);
  }
  free(inventory);
  return st;
}

static int run_campaign(struct tb_run_options *o, struct tb_campaign *c, int argc, char **argv,
                        struct tb_error *err) {
  const char *backend = NULL;
  char why[1100];
  tb_interrupt_install(); /* before the claim: a signal from here on is written down */
  if (choose_backend(o->backend, &backend, why, sizeof why, err) != TB_OK ||
      check_source_backend(c, backend, err) != TB_OK || lock_gpu(backend, err) != TB_OK ||
      tb_claim_out_dir(o->out, err) != TB_OK) {
    return tb_cli_fail(err);
  }
  c->backend = backend;
  const char *variants[TB_CAMPAIGN_MAX_VARIANTS], *realizations[TB_REALIZATION_COUNT];
  struct tb_skipped_pair *skipped = calloc(c->op_count * c->shape_count + 1, sizeof *skipped);
  struct tb_run_facts facts =
      skipped ? run_facts(o, c, backend, why, argc, argv, variants, realizations, skipped)
              : (struct tb_run_facts){0};
  struct tb_document *d = skipped ? tb_document_begin(&facts, tb_cuda_describe()) : NULL;
  free(skipped);
  if (d != NULL && o->shard != NULL) {
    struct tb_shard_facts shard = shard_facts(o);
    tb_document_set_shard(d, &shard);
  }
  if (d == NULL) {
    tb_abandon_out_dir(o->out);
    tb_fail(err, TB_ERR_SYSTEM, "out of memory");
    return tb_cli_fail(err);
  }
  size_t valid = 0;
  c->out_dir = o->out;
  struct tb_results_model pilot = {0};
  if (o->frozen != NULL && load_frozen(o->frozen, d, &pilot, err) != TB_OK) {
    tb_results_model_free(&pilot);
    tb_document_free(d);
    tb_abandon_out_dir(o->out); /* claimed empty a moment ago */
    return tb_cli_fail(err);
  }
  c->frozen_pilot = o->frozen != NULL ? &pilot : NULL;
  json_t *ceiling = copy_ceiling(backend);
  plausibility_facts(backend, ceiling, &c->measure.plausibility);
  tb_document_set_copy_ceiling(d, ceiling);
  if (o->replay) {
    run_rounds(o, c, d, &valid, err);
  } else {
    struct tb_case_sink sink = tb_document_sink(d);
    tb_campaign_run(c, &sink, &valid, err);
  }
  c->frozen_pilot = NULL;
  tb_results_model_free(&pilot);
  tb_document_finish(d, valid, err, tb_interrupted());
  if (o->replay && !tb_document_interrupted(d)) {
    struct tb_error summary_err = {0};
    if (summarise_replay(o, c, d, &summary_err) != TB_OK && err->status == TB_OK) {
      *err = summary_err;
    }
  }
  int rc = finish_run(o, d, valid, err);
  tb_document_free(d);
  return rc;
}

static int run_or_replay(int argc, char **argv, int replay) {
  struct tb_run_options o = {0};
  o.replay = replay;
  o.rounds = 4;
  o.backend = "auto";
  o.seed = 1;
  o.profile = TB_PLANNER_PROFILE_DEFAULT;
  o.samples = 9;
  o.warmup_ms = 50;
  o.sample_ms = 10;
  o.probe = 1;
  o.tolerance_scale = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(replay ? tb_replay_usage : tb_run_usage, stdout);
      return 0;
    }
  }
  struct tb_error err = {0};
  struct tb_campaign c = {0};
  int rc;
  if (tb_run_options_parse(argc, argv, &o, &err) != TB_OK ||
      build_campaign(&o, &c, &err) != TB_OK || prepare_shard(&o, &c, &err) != TB_OK) {
    rc = tb_cli_fail(&err);
  } else {
    if (o.out == NULL) {
      char stamp[32];
      tb_utc_timestamp(stamp, sizeof stamp);
      snprintf(o.default_out, sizeof o.default_out, "runs/%s", stamp);
      o.out = o.default_out;
    }
    rc = o.devices != NULL ? run_on_devices(&o, argc, argv, &err)
                           : run_campaign(&o, &c, argc, argv, &err);
  }
  free(c.shapes);
  free(o.campaign_argv);
  tb_shard_units_free(o.units, o.unit_count);
  free(o.shard_of);
  tb_user_library_close(&o.user_lib);
  tb_strlist_free(&o.ops);
  tb_strlist_free(&o.shapes);
  tb_strlist_free(&o.views);
  tb_strlist_free(&o.providers);
  tb_strlist_free(&o.variants);
  tb_strlist_free(&o.realizations);
  return rc;
}

int tb_cmd_run(int argc, char **argv) {
  return run_or_replay(argc, argv, 0);
}

int tb_cmd_replay(int argc, char **argv) {
  return run_or_replay(argc, argv, 1);
}
