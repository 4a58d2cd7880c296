/* tilebench compare A B: two runs side by side. Separate runs are not
 * paired sample by sample (they ran at different times), so each case is
 * judged from the two runs' sample ranges: B faster only when every B
 * sample beats every A sample, slower only in the reverse, otherwise
 * inconclusive. A median ratio is shown, never used alone as a verdict. */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "results/load.h"
#include "results/results.h"
#include "stats/stats.h"

static const char usage[] =
    "usage: tilebench compare A B [--fail-on-regression]\n"
    "  Compares the cases two runs share (by id), per call: GPU control throughput when both runs\n"
    "  have it, else host E2E throughput. Verdicts from sample ranges (B faster / slower in every\n"
    "  sample, or inconclusive); --fail-on-regression exits 1 when a case is slower in every "
    "sample.\n";

#define TB_COMPARE_MAX_SAMPLES 4096

/* The per-call samples compared, and which scope they came from. */
static size_t samples_of(const json_t *c, int use_gpu, double *out) {
  const json_t *phase =
      use_gpu
          ? json_object_get(json_object_get(json_object_get(c, "device"), "throughput"), "control")
          : json_object_get(json_object_get(c, "host"), "throughput");
  const json_t *values = json_object_get(phase, "per_call_ns");
  size_t i, n = 0;
  json_t *v;
  json_array_foreach(values, i, v) {
    if (json_is_number(v) && n < TB_COMPARE_MAX_SAMPLES) {
      out[n++] = json_number_value(v);
    }
  }
  return n;
}

static int has_gpu(const json_t *c) {
  return json_is_true(json_object_get(json_object_get(c, "device"), "control_complete"));
}

static const json_t *find_case(const json_t *doc, const char *id) {
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(doc, "cases"), i, c) {
    if (strcmp(tb_json_str(c, "id", ""), id) == 0 && /* ids are strings once loaded */
        !json_object_get(c, "round")) {
      return c;
    }
  }
  return NULL;
}

int tb_compare_documents(const json_t *a, const json_t *b, int fail_on_regression) {
  printf("%-44s %6s %12s %12s %8s  %s\n", "case", "scope", "A p50 µs", "B p50 µs", "B/A",
         "verdict");
  static double sa[TB_COMPARE_MAX_SAMPLES], sb[TB_COMPARE_MAX_SAMPLES];
  size_t i, shared = 0, faster = 0, slower = 0;
  json_t *ca;
  json_array_foreach(json_object_get(a, "cases"), i, ca) {
    const char *id = tb_json_str(ca, "id", "");
    const json_t *cb = find_case(b, id);
    if (cb == NULL || json_object_get(ca, "round")) {
      continue;
    }
    int gpu = has_gpu(ca) && has_gpu(cb);
    size_t na = samples_of(ca, gpu, sa), nb = samples_of(cb, gpu, sb);
    if (na == 0 || nb == 0) {
      continue;
    }
    shared++;
    struct tb_summary ra = tb_summarize(sa, na), rb = tb_summarize(sb, nb);
    double pa = ra.p50, pb = rb.p50;
    const char *verdict = "inconclusive (ranges overlap)";
    if (rb.max < ra.min) {
      verdict = "B faster in every sample";
      faster++;
    } else if (rb.min > ra.max) {
      verdict = "B slower in every sample";
      slower++;
    }
    printf("%-44s %6s %12.3f %12.3f %8.3f  %s\n", id, gpu ? "GPU" : "host", pa / 1e3, pb / 1e3,
           pb / pa, verdict);
  }
  printf("\n%zu shared cases: B faster in %zu, slower in %zu, inconclusive in %zu\n", shared,
         faster, slower, shared - faster - slower);
  int rc = 0;
  if (shared == 0) {
    fprintf(stderr, "tilebench compare: the runs share no measured case\n");
    rc = 2;
  } else if (fail_on_regression && slower > 0) {
    fprintf(stderr, "tilebench compare: %zu case(s) regressed (B slower in every sample)\n",
            slower);
    rc = 1;
  }
  return rc;
}

int tb_cmd_compare(int argc, char **argv) {
  static const struct option options[] = {{"fail-on-regression", no_argument, NULL, 'f'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  int fail_on_regression = 0, opt;
  optind = 1;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    if (opt == 'f') {
      fail_on_regression = 1;
    } else if (opt == 'h') {
      fputs(usage, stdout);
      return 0;
    } else {
      fprintf(stderr, "tilebench compare: unknown option '%s'\n%s", argv[optind - 1], usage);
      return 2;
    }
  }
  if (argc - optind != 2) {
    fprintf(stderr, "tilebench compare: give two run directories\n%s", usage);
    return 2;
  }
  struct tb_error err = {0};
  json_t *a = NULL, *b = NULL;
  if (tb_results_load_dir(argv[optind], &a, &err) != TB_OK ||
      tb_results_load_dir(argv[optind + 1], &b, &err) != TB_OK) {
    json_decref(a);
    return tb_cli_fail(&err);
  }
  int rc = tb_compare_documents(a, b, fail_on_regression);
  json_decref(a);
  json_decref(b);
  return rc;
}
