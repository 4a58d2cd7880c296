#include "measure/replay_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/case_key.h"
#include "stats/interval.h"
#include "stats/stats.h"
#include "stats/verdict.h"

/* The raw samples behind tb_replay_metric_value, or NULL. */
static const struct tb_model_scope *metric_samples(const struct tb_model_case *c, int metric) {
  bool throughput = metric % 2 == 0;
  if (metric < 2) { /* GPU control: only from a complete device phase */
    if (!c->control_complete) {
      return NULL;
    }
    return throughput ? &c->control_throughput : &c->control_latency;
  }
  return throughput ? &c->host_throughput : &c->host_latency;
}

double tb_replay_metric_value(const struct tb_model_case *c, int metric) {
  const struct tb_model_scope *s = metric_samples(c, metric);
  return s != NULL ? s->p50_ns : NAN;
}

/* How far the record's samples of a metric spread (robust CV), NaN without them. */
static double metric_noise(const struct tb_model_case *c, int metric) {
  const struct tb_model_scope *s = metric_samples(c, metric);
  return s != NULL ? tb_robust_cv(s->per_call_ns, s->count) : NAN;
}

/* The record's replay round, or -1 when it has none in [0, rounds). */
static int round_of(const struct tb_model_case *c, unsigned rounds) {
  long long value = c->has_round ? c->round : -1;
  return value >= 0 && value < (long long)rounds && value < TB_REPLAY_MAX_ROUNDS ? (int)value : -1;
}

/* Grows *items (of `size` bytes each) to hold one more; false when memory ran out. */
static bool grow(void **items, size_t count, size_t size) {
  void *bigger = realloc(*items, (count + 1) * size);
  if (bigger == NULL) {
    return false;
  }
  *items = bigger;
  return true;
}

/* ---- the range of per-round ratios ---------------------------------------- */

/* A side's noise: the median over rounds of its records' robust CVs (one
 * disturbed round does not widen the band of the whole case). */
static double median_noise(const double *cv, size_t stride, unsigned rounds) {
  double finite[TB_REPLAY_MAX_ROUNDS];
  size_t count = 0;
  for (unsigned r = 0; r < rounds; ++r) {
    if (isfinite(cv[r * stride])) {
      finite[count++] = cv[r * stride];
    }
  }
  return tb_median(finite, count);
}

/* The range rule, and the interval of the median ratio against the band of
 * the two sides' noise (docs/method.md §3.2). */
static void summarise_range(struct tb_replay_range *range, unsigned rounds, double noise_a,
                            double noise_b) {
  range->summary = tb_summarize(range->per_round, rounds);
  range->verdict = tb_verdict_of_ratios(range->summary.min, range->summary.max);
  range->noise[0] = noise_a;
  range->noise[1] = noise_b;
  range->band = tb_equivalence_band(noise_a, noise_b);
  range->decision = TB_VERDICT_INCONCLUSIVE;
  if (tb_paired_interval(range->per_round, rounds, &range->interval)) {
    range->decision = tb_verdict_of_interval(range->interval.lo, range->interval.hi, range->band);
  }
}

/* Why a GPU metric has no figures on the CPU backend, in the record's words. */
static const char no_gpu_reason[] = "no GPU: device statistics not measured";

/* gain_r = reference_r / candidate_r; withheld from the first round without
 * a positive candidate and a finite gain. */
static void gain_range(struct tb_replay_case *c, int metric, unsigned rounds, bool no_device,
                       struct tb_replay_gain_counts *k) {
  struct tb_replay_range *g = &c->gain[metric];
  unsigned missing = rounds;
  for (unsigned r = 0; r < rounds; ++r) {
    double a = c->p50_ns[0][r][metric], b = c->p50_ns[1][r][metric];
    g->per_round[r] = a / b;
    if (missing == rounds && !(isfinite(g->per_round[r]) && b > 0.0)) {
      missing = r;
    }
  }
  k->cases++;
  if (missing < rounds) {
    g->withheld = true;
    if (metric < 2 && no_device) {
      snprintf(g->reason, sizeof g->reason, "%s", no_gpu_reason);
    } else {
      snprintf(g->reason, sizeof g->reason, "round %u lacks a complete %s pair", missing,
               tb_replay_metric_name(metric));
    }
    k->withheld++;
    return;
  }
  summarise_range(g, rounds, median_noise(&c->cv[0][0][metric], TB_REPLAY_METRICS, rounds),
                  median_noise(&c->cv[1][0][metric], TB_REPLAY_METRICS, rounds));
  k->positive_median += g->summary.p50 > 1.0;
  k->all_pairs_positive += g->verdict == TB_VERDICT_HIGHER;
  k->all_pairs_negative += g->verdict == TB_VERDICT_LOWER;
}

/* ---- pairing the two variants' records ------------------------------------ */

struct pairing {
  struct tb_replay_record *out;
  double (*scores)[2]; /* of the register plans, per case, NaN otherwise */
  /* per case, [variant][round]: the record, NULL where absent */
  const struct tb_model_case *(*records)[2][TB_REPLAY_MAX_ROUNDS];
};

static struct tb_replay_case *case_for(struct pairing *p, const char *key) {
  struct tb_replay_record *out = p->out;
  for (size_t i = 0; i < out->case_count; ++i) {
    if (strcmp(out->cases[i].key, key) == 0) {
      return &out->cases[i];
    }
  }
  if (!grow((void **)&out->cases, out->case_count, sizeof *out->cases) ||
      !grow((void **)&p->scores, out->case_count, sizeof *p->scores) ||
      !grow((void **)&p->records, out->case_count, sizeof *p->records)) {
    return NULL;
  }
  memset(p->records[out->case_count], 0, sizeof *p->records);
  struct tb_replay_case *c = &out->cases[out->case_count];
  memset(c, 0, sizeof *c);
  snprintf(c->key, sizeof c->key, "%s", key);
  for (int v = 0; v < 2; ++v) {
    for (int r = 0; r < TB_REPLAY_MAX_ROUNDS; ++r) {
      for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
        c->p50_ns[v][r][m] = c->cv[v][r][m] = NAN;
      }
    }
    p->scores[out->case_count][v] = NAN;
  }
  out->case_count++;
  return c;
}

/* Every record of either variant, by its pairing key. */
static bool pair_records(const struct tb_results_model *m, struct pairing *p) {
  const struct tb_replay_record *out = p->out;
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *r = &m->cases[i];
    int round = round_of(r, out->rounds);
    if (r->variant == NULL || round < 0) {
      continue;
    }
    int side = strcmp(r->variant, out->variants[0]) == 0   ? 0
               : strcmp(r->variant, out->variants[1]) == 0 ? 1
                                                           : -1;
    if (side < 0) {
      continue;
    }
    char key[TB_REPLAY_KEY_SIZE];
    struct tb_replay_case *c = case_for(p, tb_case_base_key(r->id, key, sizeof key));
    if (c == NULL) {
      return false;
    }
    for (int k = 0; k < TB_REPLAY_METRICS; ++k) {
      c->p50_ns[side][round][k] = tb_replay_metric_value(r, k);
      c->cv[side][round][k] = metric_noise(r, k);
    }
    p->scores[c - p->out->cases][side] = r->selected_kernel_score;
    p->records[c - p->out->cases][side][round] = r;
  }
  return true;
}

/* ---- native vs frameworks: ratio_r = native_r / framework_r --------------- */

/* One framework's values of one base ("softmax/37x769/packed"), per round. */
struct framework_values {
  char base[TB_REPLAY_KEY_SIZE];
  const char *provider;
  double values[TB_REPLAY_MAX_ROUNDS][TB_REPLAY_METRICS];    /* NaN where absent */
  double cv[TB_REPLAY_MAX_ROUNDS][TB_REPLAY_METRICS];        /* robust CV, NaN where absent */
  const struct tb_model_case *records[TB_REPLAY_MAX_ROUNDS]; /* NULL where absent */
};

struct frameworks {
  struct framework_values *items; /* bases in the order first met, providers likewise */
  size_t count;
};

static struct framework_values *values_for(struct frameworks *f, const char *base,
                                           const char *provider) {
  for (size_t i = 0; i < f->count; ++i) {
    if (strcmp(f->items[i].base, base) == 0 && strcmp(f->items[i].provider, provider) == 0) {
      return &f->items[i];
    }
  }
  if (!grow((void **)&f->items, f->count, sizeof *f->items)) {
    return NULL;
  }
  struct framework_values *v = &f->items[f->count++];
  snprintf(v->base, sizeof v->base, "%s", base);
  v->provider = provider;
  for (int r = 0; r < TB_REPLAY_MAX_ROUNDS; ++r) {
    for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
      v->values[r][m] = v->cv[r][m] = NAN;
    }
    v->records[r] = NULL;
  }
  return v;
}

/* Every framework record's values, a later record of a round replacing an earlier. */
static bool collect_frameworks(const struct tb_results_model *m, unsigned rounds,
                               struct frameworks *f) {
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *r = &m->cases[i];
    int round = round_of(r, rounds);
    if (strcmp(r->provider, "native") == 0 || round < 0) {
      continue;
    }
    char base[TB_REPLAY_KEY_SIZE];
    struct framework_values *v =
        values_for(f, tb_case_base_key(r->id, base, sizeof base), r->provider);
    if (v == NULL) {
      return false;
    }
    for (int k = 0; k < TB_REPLAY_METRICS; ++k) {
      v->values[round][k] = tb_replay_metric_value(r, k);
      v->cv[round][k] = metric_noise(r, k);
    }
    v->records[round] = r;
  }
  return true;
}

static struct tb_replay_versus_counts *counts_for(struct tb_replay_record *out,
                                                  const char *provider) {
  for (size_t i = 0; i < out->versus_count; ++i) {
    if (strcmp(out->versus_counts[i].provider, provider) == 0) {
      return &out->versus_counts[i];
    }
  }
  if (!grow((void **)&out->versus_counts, out->versus_count, sizeof *out->versus_counts)) {
    return NULL;
  }
  struct tb_replay_versus_counts *k = &out->versus_counts[out->versus_count++];
  memset(k, 0, sizeof *k);
  k->provider = provider;
  return k;
}

static void ratio_range(const struct tb_replay_case *c, int side, const struct framework_values *f,
                        int metric, unsigned rounds, bool no_device, struct tb_replay_range *range,
                        struct tb_replay_ratio_counts *k) {
  bool missing = false;
  for (unsigned r = 0; r < rounds; ++r) {
    range->per_round[r] = c->p50_ns[side][r][metric] / f->values[r][metric];
    missing |= !isfinite(range->per_round[r]);
  }
  k->cases++;
  if (missing) {
    range->withheld = true;
    snprintf(range->reason, sizeof range->reason, "%s",
             metric < 2 && no_device ? no_gpu_reason
                                     : "a round lacks its native or framework value");
    k->withheld++;
    return;
  }
  summarise_range(range, rounds, median_noise(&c->cv[side][0][metric], TB_REPLAY_METRICS, rounds),
                  median_noise(&f->cv[0][metric], TB_REPLAY_METRICS, rounds));
  k->native_faster_in_all_pairs += range->verdict == TB_VERDICT_LOWER;
  k->native_slower_in_all_pairs += range->verdict == TB_VERDICT_HIGHER;
}

/* ---- native vs frameworks per call, in the best scope both measured ------- */

enum per_call_kind { PER_CALL_GAP_FREE, PER_CALL_EAGER, PER_CALL_HOST, PER_CALL_KINDS };

/* A record's throughput samples in one kind of scope, or NULL. */
static const struct tb_model_scope *per_call_samples(const struct tb_model_case *c,
                                                     enum per_call_kind kind) {
  const struct tb_model_scope *s = kind == PER_CALL_GAP_FREE ? &c->gap_free_throughput
                                   : kind == PER_CALL_EAGER  ? &c->control_throughput
                                                             : &c->host_throughput;
  bool measured = kind == PER_CALL_GAP_FREE ? c->gap_free_mode != NULL
                  : kind == PER_CALL_EAGER  ? c->control_complete
                                            : true;
  return measured && s->count > 0 && isfinite(s->p50_ns) ? s : NULL;
}

/* Whether both sides have `kind` in every round (the gap-free one in one
 * mode throughout, so no ratio mixes graph with held); its name in *scope. */
static bool per_call_kind_holds(const struct tb_model_case *const *native,
                                const struct framework_values *f, unsigned rounds,
                                enum per_call_kind kind, const char **scope) {
  *scope = kind == PER_CALL_HOST ? "host" : "eager";
  for (unsigned r = 0; r < rounds; ++r) {
    const struct tb_model_case *n = native[r], *w = f->records[r];
    if (n == NULL || w == NULL || per_call_samples(n, kind) == NULL ||
        per_call_samples(w, kind) == NULL) {
      return false;
    }
    if (kind == PER_CALL_GAP_FREE) {
      if (strcmp(n->gap_free_mode, w->gap_free_mode) != 0 ||
          (r > 0 && strcmp(n->gap_free_mode, *scope) != 0)) {
        return false;
      }
      *scope = n->gap_free_mode;
    }
  }
  return true;
}

static void per_call_range(const struct tb_model_case *const *native,
                           const struct framework_values *f, unsigned rounds, bool no_device,
                           struct tb_replay_range *range, char *scope_name, size_t scope_size) {
  const char *scope = NULL;
  int kind = PER_CALL_GAP_FREE;
  while (kind < PER_CALL_KINDS &&
         !per_call_kind_holds(native, f, rounds, (enum per_call_kind)kind, &scope)) {
    kind++;
  }
  scope_name[0] = '\0';
  if (kind == PER_CALL_KINDS) {
    range->withheld = true;
    snprintf(range->reason, sizeof range->reason, "a round lacks a per-call figure on a side%s",
             no_device ? " (no GPU: device statistics not measured)" : "");
    return;
  }
  snprintf(scope_name, scope_size, "%s", scope);
  double cv[2][TB_REPLAY_MAX_ROUNDS];
  for (unsigned r = 0; r < rounds; ++r) {
    const struct tb_model_scope *a = per_call_samples(native[r], (enum per_call_kind)kind);
    const struct tb_model_scope *b = per_call_samples(f->records[r], (enum per_call_kind)kind);
    range->per_round[r] = a->p50_ns / b->p50_ns;
    cv[0][r] = tb_robust_cv(a->per_call_ns, a->count);
    cv[1][r] = tb_robust_cv(b->per_call_ns, b->count);
  }
  summarise_range(range, rounds, median_noise(cv[0], 1, rounds), median_noise(cv[1], 1, rounds));
}

/* The case's native ratios against every framework measured on its base. */
static bool versus_frameworks(struct tb_replay_record *out, struct tb_replay_case *c,
                              const struct tb_model_case *(*records)[TB_REPLAY_MAX_ROUNDS],
                              const struct frameworks *f) {
  char base[TB_REPLAY_KEY_SIZE];
  tb_case_base_key(c->key, base, sizeof base);
  for (size_t i = 0; i < f->count; ++i) {
    if (strcmp(f->items[i].base, base) != 0) {
      continue;
    }
    struct tb_replay_versus_counts *k = counts_for(out, f->items[i].provider);
    if (k == NULL || !grow((void **)&c->versus, c->versus_count, sizeof *c->versus)) {
      return false;
    }
    struct tb_replay_versus *v = &c->versus[c->versus_count++];
    memset(v, 0, sizeof *v);
    v->provider = f->items[i].provider;
    for (int side = 0; side < 2; ++side) {
      for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
        ratio_range(c, side, &f->items[i], m, out->rounds, out->no_device, &v->ratio[side][m],
                    &k->counts[side][m]);
      }
      per_call_range(records[side], &f->items[i], out->rounds, out->no_device, &v->per_call[side],
                     v->per_call_scope[side], sizeof v->per_call_scope[side]);
    }
  }
  return true;
}

/* ---- the whole summary ---------------------------------------------------- */

static bool summarise_case(struct pairing *p, size_t index, const struct frameworks *f) {
  struct tb_replay_record *out = p->out;
  struct tb_replay_case *c = &out->cases[index];
  for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
    gain_range(c, m, out->rounds, out->no_device, &out->counts[m]);
  }
  const double *score = p->scores[index];
  bool has_scores = isfinite(score[0]) && isfinite(score[1]);
  bool better = has_scores && score[1] < score[0];
  c->model_predicts = has_scores ? better : -1;
  out->model_predicts_candidate_better += better;
  return versus_frameworks(out, c, p->records[index], f);
}

enum tb_status tb_replay_summary(const struct tb_results_model *m, const char *reference,
                                 const char *candidate, unsigned rounds,
                                 struct tb_replay_record *out, struct tb_error *err) {
  memset(out, 0, sizeof *out);
  out->variants[0] = reference;
  out->variants[1] = candidate;
  out->rounds = rounds;
  out->no_device = m->backend != NULL && strcmp(m->backend, "cpu") == 0;
  struct pairing p = {out, NULL, NULL};
  struct frameworks f = {0};
  bool ok = pair_records(m, &p) && collect_frameworks(m, rounds, &f);
  for (size_t i = 0; ok && i < out->case_count; ++i) {
    ok = summarise_case(&p, i, &f);
  }
  free(p.scores);
  free(p.records);
  free(f.items);
  if (!ok) {
    tb_replay_record_free(out);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory summarising the replay");
  }
  return TB_OK;
}
