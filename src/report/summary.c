#include "report/summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/format.h"
#include "report/native_pairs.h"
#include "stats/stats.h"

/* A name and how often it was seen, in the order first seen. */
struct tally {
  char name[256];   /* a provider's name or a hazard's (at most 63 bytes) */
  const char *text; /* what the first occurrence said */
  long long count;
};

struct tallies {
  struct tally *items;
  size_t count, capacity;
};

static struct tally *tally_of(struct tallies *t, const char *name) {
  for (size_t i = 0; i < t->count; ++i) {
    if (strcmp(t->items[i].name, name) == 0) {
      return &t->items[i];
    }
  }
  if (t->count == t->capacity) {
    size_t capacity = t->capacity ? 2 * t->capacity : 8;
    struct tally *grown = realloc(t->items, capacity * sizeof *grown);
    if (grown == NULL) {
      return NULL;
    }
    t->items = grown;
    t->capacity = capacity;
  }
  struct tally *new_one = &t->items[t->count++];
  memset(new_one, 0, sizeof *new_one);
  snprintf(new_one->name, sizeof new_one->name, "%s", name);
  return new_one;
}

/* Each hazard raised in the run, with how many cases raised it. */
static void hazard_counts(const struct tb_results_model *m, struct tallies *counts) {
  for (size_t i = 0; i < m->case_count; ++i) {
    for (size_t f = 0; f < m->cases[i].flag_count; ++f) {
      char head[64];
      tb_flag_head(m->cases[i].flags[f], head, sizeof head);
      struct tally *t = tally_of(counts, head);
      if (t != NULL) {
        t->count++;
      }
    }
  }
}

/* The providers that did not start, each once with its reason. */
static void unavailable_providers(const struct tb_results_model *m, struct tallies *reasons) {
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    if (!tb_provider_unavailable(c)) {
      continue;
    }
    struct tally *t = tally_of(reasons, c->provider);
    if (t != NULL && t->count++ == 0) {
      t->text = tb_or(c->error, "?");
    }
  }
}

/* Other processes busy at the start or end of the run, as one line, or
 * NULL when there were none (the caller frees). */
static char *background_load(const struct tb_results_model *m) {
  struct tb_strbuf b = {0};
  for (int k = 0; k < 2; ++k) {
    for (size_t i = 0; i < m->background[k].count; ++i) {
      const struct tb_model_process *p = &m->background[k].processes[i];
      tb_strbuf_printf(&b, "%s%s (pid %lld, %.0f%% of a CPU, at the %s)", b.len ? ", " : "",
                       tb_or(p->name, "?"), p->pid, p->cpu_percent, k == 0 ? "start" : "end");
    }
  }
  return tb_strbuf_take(&b);
}

/* The throughput ratio of one pair, from the best scope both have: the
 * host-gap-free GPU control (graph or held), else the eager GPU control,
 * else host E2E; *scope says which (2, 1, 0). A host-bound eager figure
 * would rank providers by launch overhead, so it is used only without the
 * gap-free one. */
static double pair_ratio(const struct tb_native_pair *p, int *scope) {
  double fn = p->native->gap_free_throughput.p50_ns;
  double ft = p->framework->gap_free_throughput.p50_ns;
  if (!isnan(fn) && !isnan(ft)) {
    *scope = 2;
    return fn / ft;
  }
  double gn = p->native->control_throughput.p50_ns, gt = p->framework->control_throughput.p50_ns;
  *scope = !isnan(gn) && !isnan(gt);
  return *scope ? gn / gt
                : p->native->host_throughput.p50_ns / p->framework->host_throughput.p50_ns;
}

static const char *scopes_named(size_t n, size_t gap_free, size_t gpu) {
  if (gap_free == n) {
    return "host-gap-free GPU control (graph or held)";
  }
  if (gap_free + gpu == n) {
    return gap_free > 0 ? "host-gap-free GPU control, eager GPU control where none" : "GPU control";
  }
  return "host E2E where no GPU";
}

/* Per framework: the median [min, max] over cases of native / framework
 * throughput p50. */
static void headline_ratios(struct tb_strbuf *b, const struct tb_results_model *m,
                            const char *bullet) {
  static struct tb_native_pair pairs[TB_REPORT_MAX_PAIRS];
  static double ratios[TB_REPORT_MAX_PAIRS];
  size_t count = tb_native_pairs(m, pairs, TB_REPORT_MAX_PAIRS);
  static const char *const frameworks[] = {"torch", "torch-compile", "cublas"};
  for (size_t f = 0; f < sizeof frameworks / sizeof frameworks[0]; ++f) {
    size_t n = 0, gpu = 0, gap_free = 0;
    for (size_t k = 0; k < count; ++k) {
      if (strcmp(pairs[k].framework->provider, frameworks[f]) != 0) {
        continue;
      }
      int scope;
      double ratio = pair_ratio(&pairs[k], &scope);
      if (isfinite(ratio)) {
        ratios[n++] = ratio;
        gpu += scope == 1;
        gap_free += scope == 2;
      }
    }
    if (n > 0) {
      struct tb_summary r = tb_summarize(ratios, n);
      tb_strbuf_printf(b,
                       "%snative / %s throughput: median %.3f [%.3f, %.3f] over %zu case(s) (%s; "
                       "< 1 = native faster)\n",
                       bullet, frameworks[f], r.p50, r.min, r.max, n,
                       scopes_named(n, gap_free, gpu));
    }
  }
}

static void background_line(struct tb_strbuf *b, const struct tb_results_model *m,
                            const char *bullet) {
  char *load = background_load(m);
  if (load != NULL && load[0] != '\0') {
    for (char *p = load; *p; ++p) { /* process names from the file: one line */
      *p = (*p == '\n' || *p == '\r') ? ' ' : *p;
    }
    tb_strbuf_printf(b, "%sbackground load: %s; timings may be disturbed\n", bullet, load);
  }
  free(load);
}

void tb_report_summary_lines(struct tb_strbuf *b, const struct tb_results_model *m,
                             const char *bullet, bool with_counts) {
  size_t total = m->case_count;
  if (with_counts) {
    tb_strbuf_printf(b, "%s%zu case(s), %lld valid%s\n", bullet, total, m->valid_cases,
                     m->valid_cases == (long long)total ? "" : " (see Errors)");
  }
  if (m->tolerance_scale != 1.0) {
    tb_strbuf_printf(b,
                     "%sTOLERANCES WIDENED: atol and rtol of docs/tolerances.md x %g for every "
                     "provider (--tolerance-scale %g)\n",
                     bullet, m->tolerance_scale, m->tolerance_scale);
  }
  if (m->incomplete) {
    char why[1200];
    tb_strbuf_printf(b, "%sINCOMPLETE run: %s\n", bullet,
                     tb_md(tb_or(m->error, "stopped early"), why, sizeof why));
  }
  struct tallies reasons = {0}, counts = {0};
  unavailable_providers(m, &reasons);
  for (size_t i = 0; i < reasons.count; ++i) {
    char why[1200]; /* the reason names the provider */
    tb_strbuf_printf(b, "%s%s\n", bullet, tb_md(reasons.items[i].text, why, sizeof why));
  }
  headline_ratios(b, m, bullet);
  hazard_counts(m, &counts);
  for (size_t i = 0; i < counts.count; ++i) {
    char name[160];
    tb_strbuf_printf(b, "%shazard raised: %s in %lld case(s)\n", bullet,
                     tb_md(counts.items[i].name, name, sizeof name), counts.items[i].count);
  }
  background_line(b, m, bullet);
  free(reasons.items);
  free(counts.items);
}
