/* tilebench run: measure a campaign and archive it in a new directory. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/cuda/driver.h"
#ifdef TB_HAVE_TIMING
#include "backends/cuda/copy_ceiling.h"
#endif
#include "cli/commands.h"
#include "core/clock.h"
#include "core/interrupt.h"
#include "core/strbuf.h"
#include "core/strlist.h"
#include "measure/campaign.h"
#include "measure/replay_summary.h"
#include "planner/gemm.h"
#include "planner/planner.h"
#include "provenance/hash.h"
#include "provenance/provenance.h"
#include "registry/registry.h"
#include "report/report.h"
#include "results/load.h"
#include "results/model.h"
#include "results/results.h"

#ifndef TB_VERSION
#define TB_VERSION "unknown"
#endif

/* Replays compare reduction plans: 2-D shapes only; run adds a gemm shape. */
#define DEFAULT_REDUCTION_SHAPES "37x769,1024x1024,16384x257,4096x1024"
#define DEFAULT_SHAPES DEFAULT_REDUCTION_SHAPES ",128x128x128"

static const char usage[] =
    "usage: tilebench run [options]\n"
    "  --ops LIST           operations (default: all of "
    "sum,softmax,rmsnorm,layernorm,add,gelu_add,gemm)\n"
    "  --shapes LIST        MxN shapes, MxNxK for gemm (default: " DEFAULT_SHAPES ")\n"
    "  --input-views LIST   packed,strided (default: both); strided rows have stride n+3 and\n"
    "                       start at element 1, so kernels cannot assume packed or aligned rows\n"
    "  --providers LIST     native, torch, torch-compile, cublas (default: native); the torch\n"
    "                       providers run PyTorch in a worker process (TILEBENCH_PYTHON picks\n"
    "                       the python); cublas runs gemm through cublasSgemm\n"
    "  --variants LIST      plans of native row reductions: reference (1 warp x 8 rows),\n"
    "                       candidate (2 warps x 4 rows), automatic (default; the planner's pick)\n"
    "  --profile P          the planner's cost profile: calibrated (default; measured on the\n"
    "                       H200, docs/planner.md) or analytic (docs/method.md §7 as written)\n"
    "  --matrix-realization LIST  how gemm computes, on every provider: simt (fp32 CUDA cores),\n"
    "                       tensor (TF32 tensor cores, TF32 tolerance), tensor-3xtf32 (tensor\n"
    "                       cores, fp32 accuracy); default simt\n"
    "  --gemm-block M,N,K   the native gemm tile instead of the planner's rule\n"
    "  --backend B          cpu, cuda or auto (default auto: cuda when usable, else cpu)\n"
    "  --seed N             input generator seed, 0..2^63-1 (default 1)\n"
    "  --samples N          samples per timing phase (default 9)\n"
    "  --warmup-ms X        warm-up per case and provider (default 50)\n"
    "  --sample-ms X        target length of one throughput batch (default 10)\n"
    "  --out DIR            new or empty results directory (default runs/<UTC time>)\n"
    "  --probe on|off       the instrumented CUPTI probe in the device phase (default on;\n"
    "                       off under tools that are CUPTI clients themselves)\n"
    "  --quiet              no progress line\n";

static const char replay_usage[] =
    "usage: tilebench replay [options]\n"
    "  Compares two planner variants in rounds with position balance (docs/method.md §3): the\n"
    "  variant measured first alternates round by round. Per round and metric each variant's p50; "
    "per "
    "case\n"
    "  gain_r = reference_r / candidate_r, its median, min and max, and a verdict from the range.\n"
    "  --variants A,B       reference and candidate (default: reference,candidate)\n"
    "  --rounds R           even number of rounds, 2..64 (default 4)\n"
    "  --frozen PILOT_DIR   replay exactly a pilot run's binary, libraries and kernel sources;\n"
    "                       refused when any differs\n"
    "  --ops LIST           row reductions (default: softmax,rmsnorm,layernorm)\n"
    "  --input-views LIST   default: packed\n"
    "  and --shapes, --providers, --profile, --backend, --seed, --samples, --warmup-ms,\n"
    "  --sample-ms, --probe, --out, --quiet as for `tilebench run`.\n";

struct run_options {
  int replay; /* `tilebench replay`: rounds of two variants */
  unsigned long long rounds;
  const char *frozen; /* pilot run directory to replay exactly */
  struct tb_strlist ops, shapes, views, providers, variants, realizations;
  const char *gemm_block;
  const char *profile; /* the planner's cost profile */
  const char *backend;
  const char *out;
  char default_out[128];
  unsigned long long seed;
  unsigned long long samples;
  double warmup_ms, sample_ms;
  int quiet;
  int probe;
};

static enum tb_status parse_flags(int argc, char **argv, struct run_options *o,
                                  struct tb_error *err) {
  static const struct option options[] = {{"ops", required_argument, NULL, 'o'},
                                          {"shapes", required_argument, NULL, 's'},
                                          {"input-views", required_argument, NULL, 'v'},
                                          {"providers", required_argument, NULL, 'p'},
                                          {"backend", required_argument, NULL, 'b'},
                                          {"seed", required_argument, NULL, 'S'},
                                          {"samples", required_argument, NULL, 'n'},
                                          {"warmup-ms", required_argument, NULL, 'w'},
                                          {"sample-ms", required_argument, NULL, 'm'},
                                          {"out", required_argument, NULL, 'O'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"variants", required_argument, NULL, 'V'},
                                          {"probe", required_argument, NULL, 'P'},
                                          {"rounds", required_argument, NULL, 'R'},
                                          {"frozen", required_argument, NULL, 'F'},
                                          {"matrix-realization", required_argument, NULL, 'X'},
                                          {"gemm-block", required_argument, NULL, 'G'},
                                          {"profile", required_argument, NULL, 'C'},
                                          {NULL, 0, NULL, 0}};
  const char *ops = o->replay ? "softmax,rmsnorm,layernorm" : tb_op_names();
  const char *shapes = o->replay ? DEFAULT_REDUCTION_SHAPES : DEFAULT_SHAPES;
  const char *views = o->replay ? "packed" : "packed,strided";
  const char *providers = "native", *variants = o->replay ? "reference,candidate" : "automatic";
  const char *realizations = "simt";
  int opt;
  optind = 1;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    switch (opt) {
    case 'o': ops = optarg; break;
    case 's': shapes = optarg; break;
    case 'v': views = optarg; break;
    case 'p': providers = optarg; break;
    case 'V': variants = optarg; break;
    case 'X': realizations = optarg; break;
    case 'G': o->gemm_block = optarg; break;
    case 'C': o->profile = optarg; break;
    case 'R':
    case 'F':
      if (!o->replay) {
        return tb_fail(err, TB_ERR_USAGE, "%s belongs to `tilebench replay`",
                       opt == 'F' ? "--frozen" : "--rounds");
      }
      if (opt == 'F') {
        o->frozen = optarg;
      } else if (tb_parse_size(optarg, "--rounds", 2, 64, &o->rounds, err) != TB_OK) {
        return err->status;
      } else if (o->rounds % 2 != 0) {
        return tb_fail(err, TB_ERR_USAGE,
                       "--rounds must be even, so each variant goes first in "
                       "exactly half the rounds");
      }
      break;
    case 'P':
      if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
        return tb_fail(err, TB_ERR_USAGE, "--probe takes on or off, not '%s'", optarg);
      }
      o->probe = strcmp(optarg, "on") == 0;
      break;
    case 'b': o->backend = optarg; break;
    case 'O': o->out = optarg; break;
    case 'q': o->quiet = 1; break;
    case 'S':
      /* JSON integers are exact up to 2^63 - 1 in jansson and in the audit */
      if (tb_parse_size(optarg, "--seed", 0, LLONG_MAX, &o->seed, err) != TB_OK)
        return err->status;
      break;
    case 'n':
      if (tb_parse_size(optarg, "--samples", 1, 100000, &o->samples, err) != TB_OK)
        return err->status;
      break;
    case 'w':
      if (tb_parse_positive(optarg, "--warmup-ms", 600000, &o->warmup_ms, err) != TB_OK)
        return err->status;
      break;
    case 'm':
      if (tb_parse_positive(optarg, "--sample-ms", 600000, &o->sample_ms, err) != TB_OK)
        return err->status;
      break;
    case 'h': return TB_OK; /* handled by the caller through o->out == "--help" below */
    default:
      return tb_fail(err, TB_ERR_USAGE, "unknown or incomplete option '%s'\n%s", argv[optind - 1],
                     usage);
    }
  }
  if (optind < argc) {
    return tb_fail(err, TB_ERR_USAGE, "unexpected argument '%s'\n%s", argv[optind], usage);
  }
  if (tb_strlist_split(ops, "--ops", &o->ops, err) != TB_OK ||
      tb_strlist_split(shapes, "--shapes", &o->shapes, err) != TB_OK ||
      tb_strlist_split(views, "--input-views", &o->views, err) != TB_OK ||
      tb_strlist_split(providers, "--providers", &o->providers, err) != TB_OK ||
      tb_strlist_split(variants, "--variants", &o->variants, err) != TB_OK ||
      tb_strlist_split(realizations, "--matrix-realization", &o->realizations, err) != TB_OK) {
    return err->status;
  }
  return TB_OK;
}

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

/* Checks every list item before anything runs, so bad input costs nothing. */
static enum tb_status build_campaign(struct run_options *o, struct tb_campaign *c,
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
  for (size_t i = 0; i < o->variants.count; ++i) {
    enum tb_variant v;
    if (tb_variant_parse(o->variants.items[i], &v, err) != TB_OK) {
      return err->status;
    }
    for (size_t k = 0; k < c->variant_count; ++k) {
      if (c->variants[k] == v) {
        return tb_fail(err, TB_ERR_USAGE, "--variants names '%s' twice", tb_variant_name(v));
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
    /* the widest set of blocks (wgmma's too): a device without wgmma refuses
     * a wgmma-only block when the case is planned for it */
    struct tb_gemm_target widest = {1, true};
    if (tb_plan_gemm(1, 1, 1, c->realizations[i], c->gemm_block, widest, false, &probe, err) !=
        TB_OK) {
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
  c->measure.warmup_ms = o->warmup_ms;
  c->measure.sample_ms = o->sample_ms;
  c->measure.probe = o->probe;
  c->progress = !o->quiet && isatty(STDERR_FILENO);
  return tb_campaign_check_memory(c, err);
}

/* A JSON string of text given by the user, which need not be UTF-8 (JSON
 * strings must be): such text is kept with each byte above 0x7f as '?'. */
static json_t *text_json(const char *text) {
  json_t *exact = json_string(text);
  if (exact != NULL) {
    return exact;
  }
  char *copy = strdup(text);
  for (char *p = copy; p != NULL && *p; ++p) {
    *p = (unsigned char)*p > 0x7f ? '?' : *p;
  }
  json_t *replaced = json_string(copy ? copy : "");
  free(copy);
  return replaced;
}

static json_t *command_line_json(int argc, char **argv, json_t **as_text) {
  json_t *args = json_array();
  struct tb_strbuf b = {0};
  tb_strbuf_printf(&b, "tilebench");
  for (int i = 0; i < argc; ++i) {
    json_array_append_new(args, text_json(argv[i]));
    tb_strbuf_printf(&b, " %s", argv[i]);
  }
  char *text = tb_strbuf_take(&b);
  *as_text = text_json(text ? text : "");
  free(text);
  return args;
}

/* Every op/shape pair the campaign does not measure, with the reason; an op
 * measured on no shape at all is also named on stderr, never dropped silently. */
static json_t *skipped_pairs(const struct tb_campaign *c) {
  json_t *pairs = json_array();
  for (size_t o = 0; o < c->op_count; ++o) {
    size_t skipped = 0;
    const char *why = NULL;
    for (size_t s = 0; s < c->shape_count; ++s) {
      why = tb_campaign_skip_reason(c, c->ops[o], c->shapes[s]);
      if (why != NULL) {
        char dims[64];
        tb_shape_format(c->shapes[s], dims, sizeof dims);
        json_array_append_new(pairs, json_pack("{s:s, s:s, s:s}", "op", c->ops[o]->name, "shape",
                                               dims, "reason", why));
        skipped++;
      }
    }
    if (skipped == c->shape_count) {
      fprintf(stderr, "tilebench: note: %s is not measured: no shape fits it (%s)\n",
              c->ops[o]->name, why);
    }
  }
  return pairs;
}

static json_t *run_info(const struct run_options *o, const struct tb_campaign *c,
                        const char *backend, const char *why, int argc, char **argv) {
  json_t *command = NULL;
  json_t *argv_json = command_line_json(argc, argv, &command);
  char started[32];
  tb_utc_timestamp(started, sizeof started);
  json_t *variants = json_array();
  for (size_t i = 0; i < c->variant_count; ++i) {
    json_array_append_new(variants, json_string(tb_variant_name(c->variants[i])));
  }
  json_t *info =
      json_pack("{s:o, s:o, s:s, s:s, s:s, s:I, s:{s:I, s:f, s:f}}", "argv", argv_json, "command",
                command, "started_at", started, "backend", backend, "backend_reason", why, "seed",
                (json_int_t)o->seed, "measure", "samples", (json_int_t)c->measure.samples,
                "warmup_ms", c->measure.warmup_ms, "sample_ms", c->measure.sample_ms);
  json_object_set_new(json_object_get(info, "measure"), "probe", json_boolean(c->measure.probe));
  json_object_set_new(info, "variants", variants);
  json_object_set_new(info, "planner_profile", json_string(c->profile));
  json_t *realizations = json_array();
  for (size_t i = 0; i < c->realization_count; ++i) {
    json_array_append_new(realizations, json_string(tb_realization_name(c->realizations[i])));
  }
  json_object_set_new(info, "matrix_realizations", realizations);
  json_object_set_new(info, "skipped_pairs", skipped_pairs(c));
  json_object_set_new(info, "gemm_block",
                      c->gemm_block.m ? json_pack("{s:i, s:i, s:i}", "m", c->gemm_block.m, "n",
                                                  c->gemm_block.n, "k", c->gemm_block.k)
                                      : json_null());
  return info;
}

/* The device copy ceiling the cases are judged against (GPU only). */
static json_t *copy_ceiling(const char *backend) {
#ifdef TB_HAVE_TIMING
  if (strcmp(backend, "cuda") == 0) {
    return tb_measure_copy_ceiling();
  }
#endif
  return json_null();
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

/* Whether the pilot holds the artifact `mine` (the same path, or the
 * executable wherever it was), and with which digest. */
static const char *pilot_digest(const json_t *pilot_artifacts, const json_t *mine) {
  int executable = strcmp(tb_json_str(mine, "role", ""), "executable") == 0;
  size_t j;
  const json_t *theirs;
  json_array_foreach(pilot_artifacts, j, theirs) {
    int same_path = strcmp(tb_json_str(mine, "path", ""), tb_json_str(theirs, "path", "")) == 0;
    if (same_path || (executable && strcmp(tb_json_str(theirs, "role", ""), "executable") == 0)) {
      return tb_json_str(theirs, "sha256", "");
    }
  }
  return NULL;
}

/* A frozen replay runs exactly the pilot's artifacts: refuses (exit 2) when
 * the executable or a library it shares with the pilot differs, and records
 * the pilot's artifact set beside this run's. */
static enum tb_status load_frozen(const char *pilot_dir, json_t *current_artifacts, json_t *run,
                                  json_t **sources, struct tb_error *err) {
  json_t *pilot = NULL;
  char path[PATH_MAX], digest[TB_SHA256_HEX_LEN];
  if (tb_results_path(pilot_dir, path, sizeof path, err) != TB_OK ||
      tb_results_load(path, &pilot, digest, err) != TB_OK) {
    return err->status;
  }
  json_t *pilot_artifacts = json_object_get(json_object_get(pilot, "provenance"), "artifacts");
  size_t i;
  json_t *mine;
  json_array_foreach(current_artifacts, i, mine) {
    const char *theirs = pilot_digest(pilot_artifacts, mine);
    const char *ours = tb_json_str(mine, "sha256", "");
    if (theirs != NULL && strcmp(theirs, ours) != 0) {
      tb_fail(err, TB_ERR_INPUT, "--frozen %s: %s differs from the pilot's (sha256 %s vs %s)",
              pilot_dir, tb_json_str(mine, "path", "?"), ours, theirs);
    } else if (theirs == NULL && strcmp(tb_json_str(mine, "role", ""), "executable") == 0) {
      tb_fail(err, TB_ERR_INPUT, "--frozen %s: the pilot records no executable", pilot_dir);
    }
    if (err->status != TB_OK) {
      json_decref(pilot);
      return err->status;
    }
  }
  *sources = json_object();
  json_t *c;
  json_array_foreach(json_object_get(pilot, "cases"), i, c) {
    json_t *sha = json_object_get(c, "source_sha256");
    if (json_is_string(sha)) {
      json_object_set(*sources, tb_json_str(c, "id", ""), sha);
    }
  }
  json_object_set_new(run, "frozen",
                      json_pack("{s:o, s:s, s:O}", "pilot_dir", text_json(pilot_dir),
                                "pilot_results_sha256", digest, "pilot_artifacts",
                                pilot_artifacts));
  json_decref(pilot);
  return err->status;
}

/* Replay rounds: the variant measured first alternates round by round. */
static void run_rounds(struct run_options *o, struct tb_campaign *c, json_t *cases, json_t *missing,
                       json_t *run, size_t *valid, struct tb_error *err) {
  json_t *orders = json_array();
  for (unsigned r = 0; r < o->rounds && err->status == TB_OK; ++r) {
    if (r % 2 == 1) {
      tb_campaign_reverse_variants(c);
    }
    if (!tb_interrupted()) { /* a round that never started has no order */
      json_array_append_new(orders, json_pack("[s, s]", tb_variant_name(c->variants[0]),
                                              tb_variant_name(c->variants[1])));
    }
    size_t round_valid = 0;
    c->round = (int)r;
    tb_campaign_run(c, cases, missing, &round_valid, err);
    *valid += round_valid;
    if (r % 2 == 1) {
      tb_campaign_reverse_variants(c);
    }
  }
  json_object_set_new(run, "replay",
                      json_pack("{s:i, s:s, s:s, s:o}", "rounds", (int)o->rounds, "reference",
                                tb_variant_name(c->variants[0]), "candidate",
                                tb_variant_name(c->variants[1]), "variant_order", orders));
}

/* A run stopped by SIGINT or SIGTERM is written all the same, marked
 * incomplete, with the cases it never started. */
static void record_completion(json_t *run, json_t *missing, const struct tb_error *err) {
  /* a signal after the last case started stopped nothing */
  int signal_number = json_array_size(missing) > 0 ? tb_interrupted() : 0;
  char reason[160];
  if (signal_number != 0) {
    snprintf(reason, sizeof reason, "interrupted by %s: %zu case(s) not measured",
             tb_signal_name(signal_number), json_array_size(missing));
  }
  json_object_set_new(run, "complete", json_boolean(err->status == TB_OK && signal_number == 0));
  json_object_set_new(run, "error",
                      err->status != TB_OK ? json_string(err->message)
                      : signal_number      ? json_string(reason)
                                           : json_null());
  json_object_set_new(run, "interrupted",
                      signal_number
                          ? json_pack("{s:s, s:O}", "signal", tb_signal_name(signal_number),
                                      "missing_cases", missing)
                          : json_null());
}

/* Writes the results, prints the table and returns the exit code. */
static int finish_run(const struct run_options *o, json_t *doc, size_t valid,
                      const struct tb_error *err) {
  struct tb_error write_err = {0};
  struct tb_results_model model;
  if (tb_results_model_fill(doc, &model, &write_err) != TB_OK) {
    return tb_cli_fail(&write_err);
  }
  if (archive(o->out, doc, &model, &write_err) != TB_OK) {
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
  printf("\n%zu of %zu cases valid; results in %s/%s\n", valid, total, o->out, TB_RESULTS_FILE);
  const json_t *run = json_object_get(doc, "run");
  int rc = 0;
  if (err->status != TB_OK) {
    rc = tb_cli_fail(err);
  } else if (!json_is_null(json_object_get(run, "interrupted"))) {
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

/* The paired summary of a replay that ran every round, from the
 * document's own case records. */
static enum tb_status summarise_replay(const struct run_options *o, const struct tb_campaign *c,
                                       json_t *doc, struct tb_error *err) {
  struct tb_results_model cases;
  struct tb_replay_record summary;
  if (tb_results_model_fill(doc, &cases, err) != TB_OK) {
    return err->status;
  }
  if (tb_replay_summary(&cases, tb_variant_name(c->variants[0]), tb_variant_name(c->variants[1]),
                        (unsigned)o->rounds, &summary, err) == TB_OK) {
    json_object_set_new(doc, "replay", tb_replay_record_to_json(&summary));
    tb_replay_record_free(&summary);
  }
  tb_results_model_free(&cases);
  return err->status;
}

static int run_campaign(struct run_options *o, struct tb_campaign *c, int argc, char **argv,
                        struct tb_error *err) {
  const char *backend = NULL;
  char why[1100];
  tb_interrupt_install(); /* before the claim: a signal from here on is written down */
  if (choose_backend(o->backend, &backend, why, sizeof why, err) != TB_OK ||
      tb_claim_out_dir(o->out, err) != TB_OK) {
    return tb_cli_fail(err);
  }
  c->backend = backend;
  json_t *doc =
      json_pack("{s:s, s:i, s:{s:s, s:s}}", "schema", TB_RESULTS_SCHEMA, "schema_version",
                TB_RESULTS_SCHEMA_VERSION, "tool", "name", "tilebench", "version", TB_VERSION);
  json_t *run = run_info(o, c, backend, why, argc, argv);
  json_t *prov = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "git", tb_capture_git(), "artifacts",
                           tb_capture_artifacts(), "host", tb_capture_host(), "gpu",
                           tb_cuda_describe(), "thread_env", tb_capture_thread_env(),
                           "busy_processes_start", tb_capture_busy_processes());
  json_t *cases = json_array(), *missing = json_array();
  json_object_set_new(doc, "run", run);
  json_object_set_new(doc, "provenance", prov);
  json_object_set_new(doc, "cases", cases);
  size_t valid = 0;
  c->out_dir = o->out;
  json_t *frozen_sources = NULL;
  if (o->frozen != NULL && load_frozen(o->frozen, json_object_get(prov, "artifacts"), run,
                                       &frozen_sources, err) != TB_OK) {
    json_decref(doc);
    json_decref(missing);
    tb_abandon_out_dir(o->out); /* claimed empty a moment ago */
    return tb_cli_fail(err);
  }
  c->frozen_sources = frozen_sources;
  json_object_set_new(run, "copy_ceiling", copy_ceiling(backend));
  if (o->replay) {
    run_rounds(o, c, cases, missing, run, &valid, err);
  } else {
    tb_campaign_run(c, cases, missing, &valid, err);
  }
  json_decref(frozen_sources);
  json_object_set_new(prov, "busy_processes_end", tb_capture_busy_processes());
  char finished[32];
  tb_utc_timestamp(finished, sizeof finished);
  json_object_set_new(run, "finished_at", json_string(finished));
  json_object_set_new(run, "valid_cases", json_integer((json_int_t)valid));
  record_completion(run, missing, err);
  json_decref(missing);
  if (o->replay && json_is_null(json_object_get(run, "interrupted"))) {
    /* a summary of some rounds would mislead */
    struct tb_error summary_err = {0};
    if (summarise_replay(o, c, doc, &summary_err) != TB_OK && err->status == TB_OK) {
      *err = summary_err;
    }
  }
  int rc = finish_run(o, doc, valid, err);
  json_decref(doc);
  return rc;
}

static int run_or_replay(int argc, char **argv, int replay) {
  struct run_options o = {0};
  o.replay = replay;
  o.rounds = 4;
  o.backend = "auto";
  o.seed = 1;
  o.profile = TB_PLANNER_PROFILE_DEFAULT;
  o.samples = 9;
  o.warmup_ms = 50;
  o.sample_ms = 10;
  o.probe = 1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(replay ? replay_usage : usage, stdout);
      return 0;
    }
  }
  struct tb_error err = {0};
  struct tb_campaign c = {0};
  int rc;
  if (parse_flags(argc, argv, &o, &err) != TB_OK || build_campaign(&o, &c, &err) != TB_OK) {
    rc = tb_cli_fail(&err);
  } else {
    if (o.out == NULL) {
      char stamp[32];
      tb_utc_timestamp(stamp, sizeof stamp);
      snprintf(o.default_out, sizeof o.default_out, "runs/%s", stamp);
      o.out = o.default_out;
    }
    rc = run_campaign(&o, &c, argc, argv, &err);
  }
  free(c.shapes);
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
