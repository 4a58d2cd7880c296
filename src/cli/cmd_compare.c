/* tilebench compare A B: two runs side by side, with verdicts a user can act
 * on (docs/method.md §3).
 *
 * Two runs are comparable only when they ran the same way: the same device,
 * backend, driver, framework, seed, stopping rule and build. Otherwise a difference in time
 * says nothing about the change under test, so compare refuses (exit 2)
 * unless --allow-different, which prints every difference above the table.
 * Cases pair only when both the id and the execution plan are the same.
 *
 * Separate runs are not paired sample by sample (they ran at different
 * times): each case gets the Hodges–Lehmann ratio B/A with its exact
 * Mann–Whitney 95 % interval, judged against the equivalence band
 * (SAME, FASTER, SLOWER, INCONCLUSIVE), and the strictest line, whether
 * every B sample beats (or trails) every A sample. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "results/model.h"
#include "stats/interval.h"
#include "stats/stats.h"
#include "stats/verdict.h"

static const char usage[] =
    "usage: tilebench compare A B [--fail-on-regression] [--allow-different] [--decide-host]\n"
    "                         [--across-plans]\n"
    "  Compares the cases two runs share (same id and same execution plan), per call: the\n"
    "  host-gap-free GPU control (graph or held) when both runs have it, else the eager GPU\n"
    "  control, else host E2E throughput. Verdict per case from the 95 % interval of the ratio\n"
    "  B/A against the band ±max(2 %, the runs' noise): SAME, FASTER, SLOWER or INCONCLUSIVE;\n"
    "  the last column is the strictest rule (B faster / slower in every sample).\n"
    "  Host-scope cases stay INCONCLUSIVE (host times drift from run to run) unless\n"
    "  --decide-host, and then still when a run recorded other busy processes.\n"
    "  Runs that differ in device, backend, driver, torch, seed, stopping rule or build are\n"
    "  refused (exit 2) unless --allow-different, which prints every difference above the table.\n"
    "  --fail-on-regression exits 1 when a case is SLOWER. --across-plans pairs cases of the\n"
    "  same id whose execution plans differ too (a planner change's before and after),\n"
    "  listing each with its mapping in A and in B.\n";

/* ---- what the two runs ran on --------------------------------------------- */

#define FACT_TEXT 512

/* One fact of a run's setup, as text; `known` false when the run does not
 * record it (then it is not held against the other run). */
struct fact {
  char text[FACT_TEXT];
  bool known;
};

static void fact_printf(struct fact *f, const char *format, const char *value) {
  snprintf(f->text, sizeof f->text, format, value != NULL ? value : "not recorded");
  f->known = true;
}

static void tool_version(const struct tb_results_model *m, struct fact *f) {
  fact_printf(f, "%s", m->tool_version);
}

static void backend(const struct tb_results_model *m, struct fact *f) {
  fact_printf(f, "%s", m->backend);
}

static void seed(const struct tb_results_model *m, struct fact *f) {
  snprintf(f->text, sizeof f->text, "%lld", m->seed);
  f->known = true;
}

static void stopping_rule(const struct tb_results_model *m, struct fact *f) {
  fact_printf(f, "%s", m->stopping_rule);
}

static void cpu(const struct tb_results_model *m, struct fact *f) {
  fact_printf(f, "%s", m->host_cpu_model);
}

/* Every GPU by name (and uuid where recorded), or none. */
static void gpus(const struct tb_results_model *m, struct fact *f) {
  f->known = true;
  if (!m->gpu_available || m->gpu_count == 0) {
    snprintf(f->text, sizeof f->text, "none");
    return;
  }
  size_t used = 0;
  f->text[0] = '\0';
  for (size_t i = 0; i < m->gpu_count && used < sizeof f->text; ++i) {
    const struct tb_model_gpu *g = &m->gpus[i];
    int n = snprintf(f->text + used, sizeof f->text - used, "%s%s (cc %s%s%s)", i ? "; " : "",
                     g->name != NULL ? g->name : "?",
                     g->compute_capability != NULL ? g->compute_capability : "?",
                     g->uuid != NULL ? ", uuid " : "", g->uuid != NULL ? g->uuid : "");
    used += n > 0 ? (size_t)n : 0;
  }
}

static void driver(const struct tb_results_model *m, struct fact *f) {
  fact_printf(f, "CUDA %s", m->driver_cuda_version);
  if (m->driver_cuda_version == NULL) {
    snprintf(f->text, sizeof f->text, "none");
  }
}

/* The torch versions the run's cases used; unknown when no case used torch,
 * so a native-only run is not refused against one that also ran torch. */
static void torch(const struct tb_results_model *m, struct fact *f) {
  f->text[0] = '\0';
  f->known = false;
  for (size_t i = 0; i < m->case_count; ++i) {
    const char *v = m->cases[i].torch_version;
    bool seen = false;
    for (size_t j = 0; v != NULL && j < i && !seen; ++j) {
      seen = m->cases[j].torch_version != NULL && strcmp(m->cases[j].torch_version, v) == 0;
    }
    if (v == NULL || seen) {
      continue;
    }
    size_t used = strlen(f->text);
    snprintf(f->text + used, sizeof f->text - used, "%s%s", f->known ? ", " : "", v);
    f->known = true;
  }
}

/* The build: its commit and whether the tree was dirty (and which diff);
 * without git state, the executable's SHA-256 stands for the build. */
static void build(const struct tb_results_model *m, struct fact *f) {
  f->known = true;
  if (m->git_commit != NULL) {
    snprintf(f->text, sizeof f->text, "commit %s, %s%s%s", m->git_commit,
             !m->git_dirty_known ? "dirty state not recorded"
             : m->git_dirty      ? "dirty (diff sha256 "
                                 : "clean",
             m->git_dirty && m->git_diff_sha256 != NULL ? m->git_diff_sha256 : "",
             m->git_dirty ? ")" : "");
    return;
  }
  for (size_t i = 0; i < m->artifact_count; ++i) {
    if (m->artifacts[i].role != NULL && strcmp(m->artifacts[i].role, "executable") == 0) {
      snprintf(f->text, sizeof f->text, "no git state; executable sha256 %s",
               m->artifacts[i].sha256);
      return;
    }
  }
  snprintf(f->text, sizeof f->text, "not recorded");
}

static const struct {
  const char *what;
  void (*describe)(const struct tb_results_model *, struct fact *);
} facts[] = {
    {"device (GPUs)", gpus},
    {"CPU", cpu},
    {"backend", backend},
    {"driver", driver},
    {"torch", torch},
    {"seed", seed},
    {"stopping rule", stopping_rule},
    {"tilebench version", tool_version},
    {"build", build},
};

/* Counts the facts the runs record differently, printing each to `out`
 * (indented) unless it is NULL. */
static size_t differences(const struct tb_results_model *a, const struct tb_results_model *b,
                          FILE *out) {
  size_t count = 0;
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; ++i) {
    struct fact fa, fb;
    facts[i].describe(a, &fa);
    facts[i].describe(b, &fb);
    if (fa.known && fb.known && strcmp(fa.text, fb.text) != 0) {
      if (out != NULL) {
        fprintf(out, "  %s: A %s; B %s\n", facts[i].what, fa.text, fb.text);
      }
      count++;
    }
  }
  return count;
}

/* ---- which cases pair ----------------------------------------------------- */

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

static bool same_plans(const struct tb_model_case *a, const struct tb_model_case *b) {
  if (a->plans == NULL || b->plans == NULL) {
    return a->plans == b->plans;
  }
  return json_equal((json_t *)a->plans, (json_t *)b->plans);
}

/* Why a case is not compared (PAIRED: it is). */
enum unpaired { PAIRED, ONLY_IN_A, ONLY_IN_B, PLAN_DIFFERS, NO_SAMPLES, UNPAIRED_KINDS };

static const char *const unpaired_heading[UNPAIRED_KINDS] = {
    NULL, "only in A", "only in B", "plan differs (same id, another execution plan)",
    "not measured in both (no samples in the compared scope)"};

/* ---- one case ------------------------------------------------------------- */

struct tally {
  size_t paired, by_verdict[4], every_faster, every_slower;
  size_t held_host; /* host-scope cases held at INCONCLUSIVE (no --decide-host) */
  size_t held_load; /* ... and with it, because a run was not quiet */
};

/* Whether a run recorded other processes busy on its machine at its start
 * or end (provenance.busy_processes_*). */
static bool loaded(const struct tb_results_model *m) {
  return m->background[0].count > 0 || m->background[1].count > 0;
}

/* Host E2E times of separate runs drift with the machine's state by far more
 * than their samples spread within a run (±60 % between back-to-back
 * identical CPU runs on a shared two-core machine, every sample of one run
 * beyond every sample of the other), and the busy-process snapshots at a
 * run's start and end do not always see the cause. No within-run interval
 * can tell that drift from a change, so a host-scope case is decided only
 * when the user vouches for both machines (--decide-host), and even then
 * not when a run recorded other busy processes. GPU-scope cases, timed by
 * the device clock (far less exposed to host load), are decided as they
 * come. */
struct host_policy {
  bool decide;     /* --decide-host */
  bool under_load; /* either run recorded busy processes */
};

static enum tb_verdict held_for_host(enum tb_verdict verdict, const struct host_policy *host,
                                     struct tally *t) {
  if (verdict == TB_VERDICT_INCONCLUSIVE) {
    return verdict;
  }
  if (!host->decide) {
    t->held_host++;
    return TB_VERDICT_INCONCLUSIVE;
  }
  if (host->under_load) {
    t->held_load++;
    return TB_VERDICT_INCONCLUSIVE;
  }
  return verdict;
}

static void print_header(void) {
  printf("%-44s %6s %11s %11s %7s %19s %7s  %-12s  %s\n", "case", "scope", "A p50 µs", "B p50 µs",
         "B/A", "95% interval of B/A", "band", "verdict", "every sample");
}

/* The interval as text: "[lo, hi]", or why there is none. */
static void interval_text(const struct tb_interval *iv, bool computed, char *out, size_t size) {
  if (!computed) {
    snprintf(out, size, "no interval");
  } else if (!iv->bounded) {
    snprintf(out, size, "too few samples");
  } else {
    snprintf(out, size, "[%.3f, %.3f]", iv->lo, iv->hi);
  }
}

static void compare_case(const struct tb_model_case *ca, const struct tb_model_case *cb,
                         const struct host_policy *host, struct tally *t) {
  enum compared_scope scope = scope_of(ca, cb);
  const struct tb_model_scope *sa = samples_of(ca, scope), *sb = samples_of(cb, scope);
  size_t na = compared(sa), nb = compared(sb);
  struct tb_summary ra = tb_summarize(sa->per_call_ns, na);
  struct tb_summary rb = tb_summarize(sb->per_call_ns, nb);
  struct tb_interval iv;
  bool computed = tb_ratio_interval(sa->per_call_ns, na, sb->per_call_ns, nb, &iv);
  double band =
      tb_equivalence_band(tb_robust_cv(sa->per_call_ns, na), tb_robust_cv(sb->per_call_ns, nb));
  enum tb_verdict verdict =
      computed && iv.bounded ? tb_verdict_of_interval(iv.lo, iv.hi, band) : TB_VERDICT_INCONCLUSIVE;
  if (scope == SCOPE_HOST) {
    verdict = held_for_host(verdict, host, t);
  }
  enum tb_verdict strict = tb_verdict_of_ranges(ra.min, ra.max, rb.min, rb.max);
  t->paired++;
  t->by_verdict[verdict]++;
  t->every_faster += strict == TB_VERDICT_LOWER;
  t->every_slower += strict == TB_VERDICT_HIGHER;
  char interval[48];
  interval_text(&iv, computed, interval, sizeof interval);
  printf("%-44s %6s %11.3f %11.3f %7.3f %19s %6.1f%%  %-12s  %s\n", ca->id, scope_label(ca, scope),
         ra.p50 / 1e3, rb.p50 / 1e3, iv.estimate, interval, 100.0 * band,
         tb_verdict_text(verdict, &tb_time_ratio_verdict_words),
         tb_verdict_text(strict, &tb_compare_verdict_words));
}

/* ---- the whole comparison ------------------------------------------------- */

/* across_plans (--across-plans): a case whose plan differs is paired too. */
static enum unpaired pairing_of(const struct tb_model_case *ca, const struct tb_model_case *cb,
                                bool across_plans) {
  if (cb == NULL) {
    return ONLY_IN_A;
  }
  if (!across_plans && !same_plans(ca, cb)) {
    return PLAN_DIFFERS;
  }
  enum compared_scope scope = scope_of(ca, cb);
  return samples_of(ca, scope)->count == 0 || samples_of(cb, scope)->count == 0 ? NO_SAMPLES
                                                                                : PAIRED;
}

/* Lists the ids of one kind of unpaired case under its heading. */
static void print_unpaired(const struct tb_results_model *a, const struct tb_results_model *b,
                           enum unpaired kind, bool across_plans) {
  const struct tb_results_model *m = kind == ONLY_IN_B ? b : a;
  const struct tb_results_model *other = kind == ONLY_IN_B ? a : b;
  bool headed = false;
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    if (c->has_round) {
      continue;
    }
    const struct tb_model_case *o = find_case(other, c->id);
    enum unpaired why =
        kind == ONLY_IN_B ? (o == NULL ? ONLY_IN_B : PAIRED) : pairing_of(c, o, across_plans);
    if (why != kind) {
      continue;
    }
    if (!headed) {
      printf("\nnot compared, %s:\n", unpaired_heading[kind]);
      headed = true;
    }
    printf("  %s\n", c->id);
  }
}

/* A gemm plan has no mapping: its tile (or matrix-vector kind), k split and instruction name it. */
static void gemm_plan_label(const json_t *plan, char *out, size_t size) {
  const char *gemv = json_string_value(json_object_get(plan, "gemv"));
  const char *instruction = json_string_value(json_object_get(plan, "instruction"));
  long long splits = json_integer_value(json_object_get(plan, "k_splits"));
  const json_t *tile = json_object_get(plan, "tile");
  int n = gemv != NULL ? snprintf(out, size, "matrix-vector %s", gemv)
                       : snprintf(out, size, "tile %lldx%lldx%lld",
                                  json_integer_value(json_object_get(tile, "block_m")),
                                  json_integer_value(json_object_get(tile, "block_n")),
                                  json_integer_value(json_object_get(tile, "block_k")));
  if (n >= 0 && (size_t)n < size && splits > 1) {
    n += snprintf(out + n, size - (size_t)n, ", k in %lld chunks", splits);
  }
  if (n >= 0 && (size_t)n < size && instruction != NULL) {
    n += snprintf(out + n, size - (size_t)n, " (%s)", instruction);
  }
  const json_t *a_width = json_object_get(plan, "a_vector_width"); /* recorded since the split */
  if (n >= 0 && (size_t)n < size && a_width != NULL) {
    snprintf(out + n, size - (size_t)n, ", loads A %lld B %lld", json_integer_value(a_width),
             json_integer_value(json_object_get(plan, "vector_width")));
  }
}

/* The first plan's mapping, or a gemm plan's label; "?" where the record has neither. */
static const char *first_mapping(const struct tb_model_case *c, char *buf, size_t size) {
  const json_t *plan = json_array_get(c->plans, 0);
  const char *m = json_string_value(json_object_get(plan, "mapping"));
  const char *kind = json_string_value(json_object_get(plan, "kind"));
  if (m != NULL) {
    return m;
  }
  if (kind != NULL && strcmp(kind, "gemm") == 0) {
    gemm_plan_label(plan, buf, size);
    return buf;
  }
  return "?";
}

/* Under --across-plans: the paired cases whose plans differ, with their
 * first plan's mapping on each side, so a planner change's rows are named. */
static void print_plan_changes(const struct tb_results_model *a, const struct tb_results_model *b) {
  bool headed = false;
  for (size_t i = 0; i < a->case_count; ++i) {
    const struct tb_model_case *ca = &a->cases[i], *cb = find_case(b, ca->id);
    if (ca->has_round || cb == NULL || same_plans(ca, cb)) {
      continue;
    }
    if (!headed) {
      printf("\ncompared across different plans (--across-plans), mapping A -> B:\n");
      headed = true;
    }
    char label_a[128], label_b[128];
    printf("  %s: %s -> %s\n", ca->id, first_mapping(ca, label_a, sizeof label_a),
           first_mapping(cb, label_b, sizeof label_b));
  }
}

/* The first busy process a run recorded, for the note under the table. */
static const struct tb_model_process *first_busy(const struct tb_results_model *m) {
  return m->background[0].count > 0   ? &m->background[0].processes[0]
         : m->background[1].count > 0 ? &m->background[1].processes[0]
                                      : NULL;
}

/* Why host-scope verdicts were held, under the table. */
static void print_host_note(const struct tb_results_model *a, const struct tb_results_model *b,
                            const struct tally *t) {
  if (t->held_host > 0) {
    printf("\n%zu host-scope verdict(s) held at INCONCLUSIVE: host times of separate runs drift "
           "with the machine by more than their samples show; compare GPU scopes, use a replay, "
           "or pass --decide-host for two runs on a machine known quiet\n",
           t->held_host);
  }
  if (t->held_load == 0) {
    return;
  }
  printf("\n%zu host-scope verdict(s) held at INCONCLUSIVE: a run recorded other busy processes",
         t->held_load);
  const struct tb_results_model *runs[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    const struct tb_model_process *p = first_busy(runs[i]);
    if (p != NULL) {
      printf("; %c: %s (%.0f%% of a CPU)%s", 'A' + i, p->name != NULL ? p->name : "?",
             p->cpu_percent,
             runs[i]->background[0].count + runs[i]->background[1].count > 1 ? " and others" : "");
    }
  }
  printf("\n");
}

static void print_tally(const struct tally *t) {
  printf("\n%zu paired cases: SLOWER %zu, FASTER %zu, SAME %zu, INCONCLUSIVE %zu; "
         "every sample: B slower in %zu, faster in %zu\n",
         t->paired, t->by_verdict[TB_VERDICT_HIGHER], t->by_verdict[TB_VERDICT_LOWER],
         t->by_verdict[TB_VERDICT_SAME], t->by_verdict[TB_VERDICT_INCONCLUSIVE], t->every_slower,
         t->every_faster);
}

int tb_compare_models(const struct tb_results_model *a, const struct tb_results_model *b,
                      const struct tb_compare_options *options) {
  if (!options->allow_different) {
    if (differences(a, b, NULL) > 0) {
      fprintf(stderr, "tilebench compare: the runs did not run the same way, so their times do "
                      "not compare:\n");
      differences(a, b, stderr);
      fprintf(stderr, "rerun one so that they match, or pass --allow-different to compare "
                      "anyway (each difference is then printed above the table)\n");
      return 2;
    }
  } else {
    printf("the runs differ (--allow-different):\n");
    if (differences(a, b, stdout) == 0) {
      printf("  in nothing compare checks\n");
    }
    printf("\n");
  }
  print_header();
  struct tally t = {0};
  struct host_policy host = {options->decide_host, loaded(a) || loaded(b)};
  for (size_t i = 0; i < a->case_count; ++i) {
    const struct tb_model_case *ca = &a->cases[i];
    if (!ca->has_round && pairing_of(ca, find_case(b, ca->id), options->across_plans) == PAIRED) {
      compare_case(ca, find_case(b, ca->id), &host, &t);
    }
  }
  print_host_note(a, b, &t);
  if (options->across_plans) {
    print_plan_changes(a, b);
  }
  for (int kind = ONLY_IN_A; kind < UNPAIRED_KINDS; ++kind) {
    print_unpaired(a, b, (enum unpaired)kind, options->across_plans);
  }
  print_tally(&t);
  if (t.paired == 0) {
    fprintf(stderr, "tilebench compare: the runs share no measured case with the same plan\n");
    return 2;
  }
  size_t slower = t.by_verdict[TB_VERDICT_HIGHER];
  if (options->fail_on_regression && slower > 0) {
    fprintf(stderr,
            "tilebench compare: %zu case(s) regressed (SLOWER: the interval of B/A lies "
            "above the band)\n",
            slower);
    return 1;
  }
  return 0;
}

int tb_cmd_compare(int argc, char **argv) {
  static const struct option options[] = {{"fail-on-regression", no_argument, NULL, 'f'},
                                          {"allow-different", no_argument, NULL, 'd'},
                                          {"decide-host", no_argument, NULL, 'H'},
                                          {"across-plans", no_argument, NULL, 'P'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  struct tb_compare_options chosen = {0};
  int opt;
  optind = 1;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    if (opt == 'f') {
      chosen.fail_on_regression = true;
    } else if (opt == 'd') {
      chosen.allow_different = true;
    } else if (opt == 'H') {
      chosen.decide_host = true;
    } else if (opt == 'P') {
      chosen.across_plans = true;
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
  int rc = tb_compare_models(&a, &b, &chosen);
  tb_results_model_free(&a);
  tb_results_model_free(&b);
  return rc;
}
