/* tilebench compare A B: two runs side by side. Separate runs are not
 * paired sample by sample (they ran at different times), so each case is
 * judged from the two runs' sample ranges: B faster only when every B
 * sample beats every A sample, slower only in the reverse, otherwise
 * inconclusive. A median ratio is shown, never used alone as a verdict. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "results/model.h"
#include "stats/stats.h"
#include "stats/verdict.h"

static const char usage[] =
    "usage: tilebench compare A B [--fail-on-regression]\n"
    "  Compares the cases two runs share (by id), per call: the host-gap-free GPU control (graph\n"
    "  or held) when both runs have it, else the eager GPU control, else host E2E throughput. "
    "Verdicts from sample ranges (B faster / slower in every\n"
    "  sample, or inconclusive); --fail-on-regression exits 1 when a case is slower in every "
    "sample.\n";

/* The scope two records are compared in: the host-gap-free GPU control when
 * both have it in the same mode, else the eager GPU control when both
 * measured it, else host E2E. */
enum compared_scope { SCOPE_HOST, SCOPE_GPU, SCOPE_GAP_FREE };

static enum compared_scope scope_of(const struct tb_model_case *a, const struct tb_model_case *b) {
  if (a->gap_free_mode != NULL && b->gap_free_mode != NULL &&
      strcmp(a->gap_free_mode, b->gap_free_mode) == 0 && a->gap_free_throughput.count > 0 &&
      b->gap_free_throughput.count > 0) {
    return SCOPE_GAP_FREE;
  }
  return a->control_complete && b->control_complete ? SCOPE_GPU : SCOPE_HOST;
}

static const struct tb_model_scope *samples_of(const struct tb_model_case *c,
                                               enum compared_scope scope) {
  return scope == SCOPE_GAP_FREE ? &c->gap_free_throughput
         : scope == SCOPE_GPU    ? &c->control_throughput
                                 : &c->host_throughput;
}

static const char *scope_label(const struct tb_model_case *c, enum compared_scope scope) {
  return scope == SCOPE_GAP_FREE ? c->gap_free_mode : scope == SCOPE_GPU ? "GPU" : "host";
}

/* compare has always judged a case by its first 4096 samples at most. */
#define TB_COMPARE_MAX_SAMPLES 4096

static size_t compared(const struct tb_model_scope *s) {
  return s->count < TB_COMPARE_MAX_SAMPLES ? s->count : TB_COMPARE_MAX_SAMPLES;
}

/* The plain-run record of `id` (replay rounds repeat ids and are not compared). */
static const struct tb_model_case *find_case(const struct tb_results_model *m, const char *id) {
  for (size_t i = 0; i < m->case_count; ++i) {
    if (strcmp(m->cases[i].id, id) == 0 && !m->cases[i].has_round) {
      return &m->cases[i];
    }
  }
  return NULL;
}

int tb_compare_models(const struct tb_results_model *a, const struct tb_results_model *b,
                      int fail_on_regression) {
  printf("%-44s %6s %12s %12s %8s  %s\n", "case", "scope", "A p50 µs", "B p50 µs", "B/A",
         "verdict");
  size_t shared = 0, faster = 0, slower = 0;
  for (size_t i = 0; i < a->case_count; ++i) {
    const struct tb_model_case *ca = &a->cases[i], *cb = find_case(b, ca->id);
    if (cb == NULL || ca->has_round) {
      continue;
    }
    enum compared_scope scope = scope_of(ca, cb);
    const struct tb_model_scope *sa = samples_of(ca, scope), *sb = samples_of(cb, scope);
    if (sa->count == 0 || sb->count == 0) {
      continue;
    }
    shared++;
    struct tb_summary ra = tb_summarize(sa->per_call_ns, compared(sa));
    struct tb_summary rb = tb_summarize(sb->per_call_ns, compared(sb));
    enum tb_verdict verdict = tb_verdict_of_ranges(ra.min, ra.max, rb.min, rb.max);
    faster += verdict == TB_VERDICT_LOWER;
    slower += verdict == TB_VERDICT_HIGHER;
    printf("%-44s %6s %12.3f %12.3f %8.3f  %s\n", ca->id, scope_label(ca, scope), ra.p50 / 1e3,
           rb.p50 / 1e3, rb.p50 / ra.p50, tb_verdict_text(verdict, &tb_compare_verdict_words));
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
  struct tb_results_model a, b;
  if (tb_results_model_load_dir(argv[optind], &a, &err) != TB_OK) {
    return tb_cli_fail(&err);
  }
  if (tb_results_model_load_dir(argv[optind + 1], &b, &err) != TB_OK) {
    tb_results_model_free(&a);
    return tb_cli_fail(&err);
  }
  int rc = tb_compare_models(&a, &b, fail_on_regression);
  tb_results_model_free(&a);
  tb_results_model_free(&b);
  return rc;
}
