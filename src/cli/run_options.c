#include "cli/run_options.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/case_params.h"
#include "cli/devices.h"
#include "core/numbers.h"
#include "measure/host_phase.h"

const char tb_run_usage[] =
    "usage: tilebench run [options]\n"
    "  --ops LIST           operations (default: all of "
    "sum,softmax,rmsnorm,layernorm,add,gelu_add,gemm)\n"
    "  --shapes LIST        MxN shapes, MxNxK for gemm (default: " DEFAULT_SHAPES ")\n"
    "  --input-views LIST   packed,strided (default: both); strided rows have stride n+3 and\n"
    "                       start at element 1, so kernels cannot assume packed or aligned rows\n"
    "  --providers LIST     native, torch, torch-compile, cublas (default: native); the torch\n"
    "                       providers run PyTorch in a worker process (TILEBENCH_PYTHON picks\n"
    "                       the python); cublas runs gemm through cublasSgemm; user runs the\n"
    "                       library given with --kernel (docs/user-kernels.md), user-python\n"
    "                       a Python function in the torch worker\n"
    "  --kernel PATH        the user provider's shared library (include/tilebench/kernel.h),\n"
    "                       a CUDA source X.cu (CUDA backend), or FILE.py:FUNCTION for\n"
    "                       user-python; only with one of them\n"
    "  --launch SPEC|@FILE  a .cu kernel's launch: grid=EXPR[,EXPR[,EXPR]],block=...[,smem=EXPR]\n"
    "                       over m, n, integers, + - * /, cdiv(a,b) (docs/user-kernels.md)\n"
    "  --variants LIST      plans of native row reductions: reference (1 warp x 8 rows),\n"
    "                       candidate (2 warps x 4 rows), automatic (default; the planner's "
    "pick),\n"
    "                       sSpP: the register-rows candidate of S warps a row and P rows a block\n"
    "                       (S, P 1..32, e.g. s4p2; `tilebench plan` lists them; s1p8 is\n"
    "                       reference and s2p4 candidate); at most 64 variants\n"
    "  --profile P          the planner's cost profile: calibrated-2 (default), calibrated\n"
    "                       (both measured on the H200, docs/planner.md) or analytic\n"
    "                       (docs/method.md §7 as written)\n"
    "  --matrix-realization LIST  how gemm computes, on every provider: simt (fp32 CUDA cores),\n"
    "                       tensor (TF32 tensor cores, TF32 tolerance), tensor-3xtf32 (tensor\n"
    "                       cores, fp32 accuracy); default simt\n"
    "  --gemm-block M,N,K   the native gemm tile instead of the planner's rule\n"
    "  --backend B          cpu, cuda or auto (default auto: cuda when usable, else cpu)\n"
    "  --seed N             input generator seed, 0..2^63-1 (default 1)\n"
    "  --samples N          samples per timing phase (default 9); not with --max-noise\n"
    "  --max-noise P        stop each phase's throughput samples once their noise (1.4826 x\n"
    "                       MAD / median) is at most P, e.g. 0.02 (docs/method.md §2.6); with it:\n"
    "  --min-samples N      take at least N samples, 3..10000 (default the less of 5 and "
    "--max-samples)\n"
    "  --max-samples N      take at most N samples, 3..10000 (default 1000)\n"
    "  --min-time S         take at least S seconds of sampled time (default none)\n"
    "  --timeout S          stop a phase after S seconds of wall time (default 60)\n"
    "  --warmup-ms X        warm-up per case and provider (default 50)\n"
    "  --sample-ms X        target length of one throughput batch (default 10)\n"
    "  --out DIR            new or empty results directory (default runs/<UTC time>)\n"
    "  --probe on|off       the instrumented CUPTI probe in the device phase (default on;\n"
    "                       off under tools that are CUPTI clients themselves)\n"
    "  --clock-checks on|off  read the GPU's clocks around every device sample and\n"
    "                       retake throttled samples (default on; docs/method.md 2.7)\n"
    "  --batch LIST         how the device phase's throughput batch reaches the GPU: eager\n"
    "                       (always), graph (one CUDA-graph replay), held (queued behind a\n"
    "                       blocking kernel); default eager,graph,held\n"
    "  --tolerance-scale F  multiply atol and rtol of docs/tolerances.md by F (>= 1, default 1)\n"
    "                       for every provider; recorded, and shown in the report\n"
    "  --shard I/N          measure only shard I of N (0 <= I < N) of the campaign: its cases\n"
    "                       (op/shape/view, with every provider and variant) dealt by expected\n"
    "                       cost, the same on every machine; `tilebench merge` joins the shards\n"
    "                       (docs/campaigns.md)\n"
    "  --devices LIST|all   one measurement process per GPU (ordinals or UUIDs), each a shard\n"
    "                       with CUDA_VISIBLE_DEVICES set to its GPU alone, merged into --out;\n"
    "                       CUDA backend only\n"
    "  --quiet              no progress line\n";

const char tb_replay_usage[] =
    "usage: tilebench replay [options]\n"
    "  Compares two planner variants in rounds with position balance (docs/method.md §3): the\n"
    "  variant measured first alternates round by round. Per round and metric each variant's p50; "
    "per "
    "case\n"
    "  gain_r = reference_r / candidate_r, its median, min and max, and a verdict from the range.\n"
    "  --variants A,B       reference and candidate (default: reference,candidate): any two of\n"
    "                       reference, candidate, automatic and sSpP (e.g. automatic,s4p2)\n"
    "  --rounds R           even number of rounds, 2..64 (default 4)\n"
    "  --frozen PILOT_DIR   replay exactly a pilot run's binary, libraries and kernel sources;\n"
    "                       refused when any differs\n"
    "  --ops LIST           row reductions (default: softmax,rmsnorm,layernorm)\n"
    "  --input-views LIST   default: packed\n"
    "  and --shapes, --providers, --kernel, --launch, --profile, --backend, --seed, --samples,\n"
    "  --warmup-ms, --sample-ms, --probe, --out, --quiet, --max-noise, --min-samples,\n"
    "  --max-samples, --min-time, --timeout, --tolerance-scale, --clock-checks, --shard,\n"
    "  --devices as for `tilebench run`.\n";

/* --batch: a set of modes; eager is always timed, so it may be left out. */
static enum tb_status parse_batch_modes(const char *text, unsigned *modes, struct tb_error *err) {
  struct tb_strlist list = {0};
  if (tb_strlist_split(text, "--batch", &list, err) != TB_OK) {
    return err->status;
  }
  *modes = 0;
  enum tb_status status = TB_OK;
  for (size_t i = 0; i < list.count && status == TB_OK; ++i) {
    enum tb_batch_mode mode = TB_BATCH_EAGER;
    status = tb_batch_mode_parse(list.items[i], &mode, err);
    if (status != TB_OK) {
      break;
    }
    if (*modes & (1u << mode)) {
      status = tb_fail(err, TB_ERR_USAGE, "--batch names '%s' twice", list.items[i]);
    }
    *modes |= 1u << mode;
  }
  tb_strlist_free(&list);
  return status;
}

/* One option of the noise rule (getopt values 1000..1004), strictly parsed. */
static enum tb_status parse_stopping_option(int opt, const char *text, struct tb_run_options *o,
                                            struct tb_error *err) {
  struct tb_stopping_rule *r = &o->stopping;
  unsigned long long count = 0;
  switch (opt) {
  case 1000:
    r->by_noise = true;
    /* above 1 the median absolute deviation would exceed the median itself */
    return tb_parse_positive(text, "--max-noise", 1.0, &r->max_noise, err);
  case 1001:
  case 1002:
    if (tb_parse_size(text, opt == 1001 ? "--min-samples" : "--max-samples",
                      TB_STOP_MIN_SAMPLES_FLOOR, TB_STOP_MAX_SAMPLES_CEILING, &count,
                      err) != TB_OK) {
      return err->status;
    }
    *(opt == 1001 ? &r->min_samples : &r->max_samples) = (unsigned)count;
    *(opt == 1001 ? &o->given_min_samples : &o->given_max_samples) = 1;
    return TB_OK;
  case 1003:
    o->given_min_time = 1;
    return tb_parse_positive(text, "--min-time", 3600.0, &r->min_time_s, err);
  default:
    o->given_timeout = 1;
    return tb_parse_positive(text, "--timeout", 86400.0, &r->timeout_s, err);
  }
}

/* The stopping options together: the noise rule or a fixed count, never
 * both (which would win is no clearer than refusing); defaults for the
 * rule's parameters not given. */
static enum tb_status check_stopping(struct tb_run_options *o, struct tb_error *err) {
  struct tb_stopping_rule *r = &o->stopping;
  int parameters =
      o->given_min_samples || o->given_max_samples || o->given_min_time || o->given_timeout;
  if (!r->by_noise) {
    return parameters ? tb_fail(err, TB_ERR_USAGE,
                                "--min-samples, --max-samples, --min-time and --timeout belong to "
                                "the noise rule: add --max-noise P (docs/method.md §2.6)")
                      : TB_OK;
  }
  if (o->samples_given) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--samples (a fixed count) and --max-noise (stop on noise) exclude each "
                   "other: give --min-samples/--max-samples to bound the count instead");
  }
  if (!o->given_max_samples) {
    r->max_samples = TB_STOP_DEFAULT_MAX_SAMPLES;
  }
  if (!o->given_min_samples) {
    r->min_samples =
        TB_STOP_DEFAULT_MIN_SAMPLES < r->max_samples ? TB_STOP_DEFAULT_MIN_SAMPLES : r->max_samples;
  }
  if (!o->given_timeout) {
    r->timeout_s = TB_STOP_DEFAULT_TIMEOUT_S;
  }
  if (r->min_samples > r->max_samples) {
    return tb_fail(err, TB_ERR_USAGE, "--min-samples %u is more than --max-samples %u",
                   r->min_samples, r->max_samples);
  }
  /* run.measure.samples records the most the rule allows (docs/results-schema.md) */
  o->samples = r->max_samples;
  return TB_OK;
}

enum tb_status tb_run_options_parse(int argc, char **argv, struct tb_run_options *o,
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
                                          {"batch", required_argument, NULL, 'B'},
                                          {"rounds", required_argument, NULL, 'R'},
                                          {"frozen", required_argument, NULL, 'F'},
                                          {"matrix-realization", required_argument, NULL, 'X'},
                                          {"gemm-block", required_argument, NULL, 'G'},
                                          {"profile", required_argument, NULL, 'C'},
                                          {"kernel", required_argument, NULL, 'K'},
                                          {"launch", required_argument, NULL, 'L'},
                                          {"max-noise", required_argument, NULL, 1000},
                                          {"min-samples", required_argument, NULL, 1001},
                                          {"max-samples", required_argument, NULL, 1002},
                                          {"min-time", required_argument, NULL, 1003},
                                          {"timeout", required_argument, NULL, 1004},
                                          {"clock-checks", required_argument, NULL, 1006},
                                          {"shard", required_argument, NULL, 1010},
                                          {"devices", required_argument, NULL, 1011},
                                          {"tolerance-scale", required_argument, NULL, 1005},
                                          {NULL, 0, NULL, 0}};
  const char *ops = o->replay ? "softmax,rmsnorm,layernorm" : tb_op_names();
  const char *shapes = o->replay ? DEFAULT_REDUCTION_SHAPES : DEFAULT_SHAPES;
  const char *views = o->replay ? "packed" : "packed,strided";
  const char *providers = "native", *variants = o->replay ? "reference,candidate" : "automatic";
  const char *realizations = "simt", *batch = "eager,graph,held";
  int opt;
  optind = 1;
  opterr = 0;
  o->campaign_argv = calloc((size_t)argc + 1, sizeof *o->campaign_argv);
  if (o->campaign_argv == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory");
  }
  o->campaign_argv[o->campaign_argc++] = argv[0];
  int start = optind;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    /* what a shard's campaign is: everything but where and how it is split */
    bool campaign = opt != 'O' && opt != 'q' && opt != 1010 && opt != 1011;
    for (int i = start; campaign && i < optind && i < argc; ++i) {
      o->campaign_argv[o->campaign_argc++] = argv[i];
    }
    start = optind;
    switch (opt) {
    case 'o': ops = optarg; break;
    case 's': shapes = optarg; break;
    case 'v': views = optarg; break;
    case 'p': providers = optarg; break;
    case 'V': variants = optarg; break;
    case 'X': realizations = optarg; break;
    case 'G': o->gemm_block = optarg; break;
    case 'C': o->profile = optarg; break;
    case 'K': o->kernel = optarg; break;
    case 'L': o->launch = optarg; break;
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
    case 1006:
      if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
        return tb_fail(err, TB_ERR_USAGE, "--clock-checks takes on or off, not '%s'", optarg);
      }
      o->clock_checks_off = strcmp(optarg, "off") == 0;
      break;
    case 'B': batch = optarg; break;
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
      o->samples_given = 1;
      break;
    case 1000:
    case 1001:
    case 1002:
    case 1003:
    case 1004:
      if (parse_stopping_option(opt, optarg, o, err) != TB_OK)
        return err->status;
      break;
    case 1005:
      if (tb_parse_positive(optarg, "--tolerance-scale", TB_MAX_TOLERANCE_SCALE,
                            &o->tolerance_scale, err) != TB_OK)
        return err->status;
      if (o->tolerance_scale < 1.0) {
        return tb_fail(err, TB_ERR_USAGE,
                       "--tolerance-scale %s is below 1: it only widens docs/tolerances.md's "
                       "tolerances (F >= 1)",
                       optarg);
      }
      break;
    case 'w':
      if (tb_parse_positive(optarg, "--warmup-ms", 600000, &o->warmup_ms, err) != TB_OK)
        return err->status;
      break;
    case 'm':
      if (tb_parse_positive(optarg, "--sample-ms", 600000, &o->sample_ms, err) != TB_OK)
        return err->status;
      break;
    case 1010:
      o->shard = optarg;
      if (tb_shard_parse(optarg, &o->shard_index, &o->shard_count, err) != TB_OK)
        return err->status;
      break;
    case 1011:
      o->devices = optarg;
      if (tb_devices_check_list(optarg, err) != TB_OK)
        return err->status;
      break;
    case 'h': return TB_OK; /* handled by the caller through o->out == "--help" below */
    default:
      return tb_fail(err, TB_ERR_USAGE, "unknown or incomplete option '%s'\n%s", argv[optind - 1],
                     tb_run_usage);
    }
  }
  if (optind < argc) {
    return tb_fail(err, TB_ERR_USAGE, "unexpected argument '%s'\n%s", argv[optind], tb_run_usage);
  }
  if (o->shard != NULL && o->devices != NULL) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--shard and --devices exclude each other: --devices makes one shard per GPU "
                   "itself (docs/campaigns.md)");
  }
  if (tb_strlist_split(ops, "--ops", &o->ops, err) != TB_OK ||
      tb_strlist_split(shapes, "--shapes", &o->shapes, err) != TB_OK ||
      tb_strlist_split(views, "--input-views", &o->views, err) != TB_OK ||
      tb_strlist_split(providers, "--providers", &o->providers, err) != TB_OK ||
      tb_strlist_split(variants, "--variants", &o->variants, err) != TB_OK ||
      tb_strlist_split(realizations, "--matrix-realization", &o->realizations, err) != TB_OK) {
    return err->status;
  }
  if (check_stopping(o, err) != TB_OK) {
    return err->status;
  }
  return parse_batch_modes(batch, &o->batch_modes, err);
}
