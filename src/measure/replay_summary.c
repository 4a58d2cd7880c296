#include "measure/replay_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/results.h"
#include "stats/stats.h"

static const char *const metric_names[TB_REPLAY_METRICS] = {"gpu_throughput", "gpu_latency",
                                                            "host_throughput", "host_latency"};

const char *tb_replay_metric_name(int metric) {
  return metric_names[metric];
}

/* phase.per_call_summary_ns.p50, or NaN. */
static double phase_p50(const json_t *phase) {
  json_t *v = json_object_get(json_object_get(phase, "per_call_summary_ns"), "p50");
  return json_is_number(v) ? json_number_value(v) : NAN;
}

double tb_replay_metric_value(const json_t *r, int metric) {
  const json_t *device = json_object_get(r, "device");
  const char *phase = metric % 2 == 0 ? "throughput" : "latency";
  if (metric < 2) { /* GPU control: only from a complete device phase */
    if (!json_is_true(json_object_get(device, "control_complete"))) {
      return NAN;
    }
    return phase_p50(json_object_get(json_object_get(device, phase), "control"));
  }
  return phase_p50(json_object_get(json_object_get(r, "host"), phase));
}

const char *tb_replay_verdict(double min_gain, double max_gain) {
  if (min_gain > 1.0) {
    return "faster in all pairs";
  }
  if (max_gain < 1.0) {
    return "slower in all pairs";
  }
  return "inconclusive";
}

/* The case id without its variant part: the key pairing the two variants. */
static void pair_key(const json_t *r, char *key, size_t size) {
  snprintf(key, size, "%s", json_string_value(json_object_get(r, "id")));
  char *slash = strrchr(key, '/');
  if (slash != NULL) {
    *slash = '\0';
  }
}

/* values[variant][round][metric], NaN where absent. */
struct pair {
  double values[2][TB_REPLAY_MAX_ROUNDS][TB_REPLAY_METRICS];
  double kernel_score[2]; /* of the register plan, NaN otherwise */
};

static double selected_score(const json_t *r) {
  json_t *plan = json_array_get(json_object_get(r, "execution_plans"), 0);
  json_t *score = json_object_get(json_object_get(plan, "selected"), "kernel_score");
  return json_is_number(score) ? json_number_value(score) : NAN;
}

static json_t *metric_json(const struct pair *p, int metric, unsigned rounds, json_t *counts) {
  json_t *ref = json_array(), *cand = json_array(), *gains = json_array();
  double gain[TB_REPLAY_MAX_ROUNDS];
  unsigned missing = rounds;
  for (unsigned r = 0; r < rounds; ++r) {
    double a = p->values[0][r][metric], b = p->values[1][r][metric];
    json_array_append_new(ref, tb_json_number(a));
    json_array_append_new(cand, tb_json_number(b));
    gain[r] = a / b;
    json_array_append_new(gains, tb_json_number(gain[r]));
    if (missing == rounds && !(isfinite(gain[r]) && b > 0.0)) {
      missing = r;
    }
  }
  json_t *j = json_pack("{s:o, s:o, s:o}", "reference_p50_ns", ref, "candidate_p50_ns", cand,
                        "gain", gains);
  json_t *count = json_object_get(counts, metric_names[metric]);
  json_object_set_new(count, "cases",
                      json_integer(json_integer_value(json_object_get(count, "cases")) + 1));
  if (missing < rounds) {
    char why[128];
    snprintf(why, sizeof why, "round %u lacks a complete %s pair", missing, metric_names[metric]);
    json_object_set_new(j, "withheld", json_string(why));
    json_object_set_new(count, "withheld",
                        json_integer(json_integer_value(json_object_get(count, "withheld")) + 1));
    return j;
  }
  struct tb_summary s = tb_summarize(gain, rounds);
  const char *verdict = tb_replay_verdict(s.min, s.max);
  json_object_set_new(j, "withheld", json_null());
  json_object_set_new(j, "median", tb_json_number(s.p50));
  json_object_set_new(j, "min", tb_json_number(s.min));
  json_object_set_new(j, "max", tb_json_number(s.max));
  json_object_set_new(j, "verdict", json_string(verdict));
  const char *keys[] = {"positive_median", "all_pairs_positive", "all_pairs_negative"};
  int hits[] = {s.p50 > 1.0, s.min > 1.0, s.max < 1.0};
  for (int k = 0; k < 3; ++k) {
    json_object_set_new(
        count, keys[k],
        json_integer(json_integer_value(json_object_get(count, keys[k])) + hits[k]));
  }
  return j;
}

/* ---- native vs frameworks: ratio_r = native_r / framework_r ---------------- */

/* "softmax/37x769/packed" of a native pair key or of a framework's case id. */
static void case_base(const char *id, char *base, size_t size) {
  snprintf(base, size, "%s", id);
  char *slash = strrchr(base, '/');
  if (slash != NULL) {
    *slash = '\0';
  }
}

/* The record's replay round, or -1 when it has none in [0, rounds). */
static int round_of(const json_t *r, unsigned rounds) {
  json_t *round = json_object_get(r, "round");
  json_int_t value = json_is_integer(round) ? json_integer_value(round) : -1;
  return value >= 0 && value < (json_int_t)rounds && value < TB_REPLAY_MAX_ROUNDS ? (int)value : -1;
}

/* {base: {provider: [[4 metrics] per round]}} of every framework record. */
static json_t *framework_values(const json_t *cases, unsigned rounds) {
  json_t *table = json_object();
  size_t i;
  json_t *r;
  json_array_foreach(cases, i, r) {
    const char *provider = json_string_value(json_object_get(r, "provider"));
    int round = round_of(r, rounds);
    if (provider == NULL || strcmp(provider, "native") == 0 || round < 0) {
      continue;
    }
    char base[200];
    case_base(json_string_value(json_object_get(r, "id")), base, sizeof base);
    json_t *per_base = json_object_get(table, base);
    if (per_base == NULL) {
      per_base = json_object();
      json_object_set_new(table, base, per_base);
    }
    json_t *per_round = json_object_get(per_base, provider);
    if (per_round == NULL) {
      per_round = json_array();
      for (unsigned k = 0; k < rounds; ++k) {
        json_array_append_new(per_round, json_null());
      }
      json_object_set_new(per_base, provider, per_round);
    }
    json_t *values = json_array();
    for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
      json_array_append_new(values, tb_json_number(tb_replay_metric_value(r, m)));
    }
    json_array_set_new(per_round, (size_t)round, values);
  }
  return table;
}

static double framework_value(const json_t *per_round, unsigned round, int metric) {
  json_t *v = json_array_get(json_array_get(per_round, round), (size_t)metric);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Per metric: ratios per round, their range and a verdict for native. */
static json_t *ratio_json(const struct pair *p, int side, const json_t *per_round, unsigned rounds,
                          int metric, json_t *count) {
  json_t *ratios = json_array();
  double ratio[TB_REPLAY_MAX_ROUNDS];
  int missing = 0;
  for (unsigned r = 0; r < rounds; ++r) {
    ratio[r] = p->values[side][r][metric] / framework_value(per_round, r, metric);
    missing |= !isfinite(ratio[r]);
    json_array_append_new(ratios, tb_json_number(ratio[r]));
  }
  json_t *j = json_pack("{s:o}", "ratio", ratios);
  json_object_set_new(count, "cases",
                      json_integer(json_integer_value(json_object_get(count, "cases")) + 1));
  if (missing) {
    json_object_set_new(j, "withheld", json_string("a round lacks its native or framework value"));
    json_object_set_new(count, "withheld",
                        json_integer(json_integer_value(json_object_get(count, "withheld")) + 1));
    return j;
  }
  struct tb_summary s = tb_summarize(ratio, rounds);
  const char *verdict = s.max < 1.0   ? "native faster in all pairs"
                        : s.min > 1.0 ? "native slower in all pairs"
                                      : "inconclusive";
  json_object_set_new(j, "withheld", json_null());
  json_object_set_new(j, "median", tb_json_number(s.p50));
  json_object_set_new(j, "min", tb_json_number(s.min));
  json_object_set_new(j, "max", tb_json_number(s.max));
  json_object_set_new(j, "verdict", json_string(verdict));
  const char *keys[] = {"native_faster_in_all_pairs", "native_slower_in_all_pairs"};
  int hits[] = {s.max<1.0, s.min> 1.0};
  for (int k = 0; k < 2; ++k) {
    json_object_set_new(
        count, keys[k],
        json_integer(json_integer_value(json_object_get(count, keys[k])) + hits[k]));
  }
  return j;
}

static json_t *new_ratio_count(void) {
  return json_pack("{s:i, s:i, s:i, s:i}", "cases", 0, "withheld", 0, "native_faster_in_all_pairs",
                   0, "native_slower_in_all_pairs", 0);
}

/* {provider: {variant: {metric: ratio_json}}} for one native pair, and the
 * counts {provider: {variant: {metric: count}}} accumulated. */
static json_t *versus_frameworks(const struct pair *p, const char *key, const json_t *frameworks,
                                 const char *const variants[2], unsigned rounds, json_t *counts) {
  char base[200];
  case_base(key, base, sizeof base);
  json_t *out = json_object();
  const char *provider;
  json_t *per_round;
  json_object_foreach(json_object_get(frameworks, base), provider, per_round) {
    json_t *per_provider = json_object(), *provider_counts = json_object_get(counts, provider);
    if (provider_counts == NULL) {
      provider_counts = json_object();
      json_object_set_new(counts, provider, provider_counts);
    }
    for (int side = 0; side < 2; ++side) {
      json_t *metrics = json_object(),
             *variant_counts = json_object_get(provider_counts, variants[side]);
      if (variant_counts == NULL) {
        variant_counts = json_object();
        for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
          json_object_set_new(variant_counts, metric_names[m], new_ratio_count());
        }
        json_object_set_new(provider_counts, variants[side], variant_counts);
      }
      for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
        json_object_set_new(metrics, metric_names[m],
                            ratio_json(p, side, per_round, rounds, m,
                                       json_object_get(variant_counts, metric_names[m])));
      }
      json_object_set_new(per_provider, variants[side], metrics);
    }
    json_object_set_new(out, provider, per_provider);
  }
  return out;
}

json_t *tb_replay_summary(const json_t *cases, const char *reference, const char *candidate,
                          unsigned rounds) {
  json_t *index = json_object(); /* key -> position in `pairs` */
  struct pair *pairs = NULL;
  size_t count = 0;
  json_t *keys = json_array();
  size_t i;
  json_t *r;
  json_array_foreach(cases, i, r) {
    const char *variant = json_string_value(json_object_get(r, "variant"));
    int round = round_of(r, rounds);
    if (variant == NULL || round < 0) {
      continue;
    }
    int side = strcmp(variant, reference) == 0 ? 0 : strcmp(variant, candidate) == 0 ? 1 : -1;
    if (side < 0) {
      continue;
    }
    char key[200];
    pair_key(r, key, sizeof key);
    json_t *at = json_object_get(index, key);
    if (at == NULL) {
      struct pair *bigger = realloc(pairs, (count + 1) * sizeof *pairs);
      if (bigger == NULL) {
        break;
      }
      pairs = bigger;
      for (int v = 0; v < 2; ++v) {
        for (int k = 0; k < TB_REPLAY_MAX_ROUNDS; ++k) {
          for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
            pairs[count].values[v][k][m] = NAN;
          }
        }
        pairs[count].kernel_score[v] = NAN;
      }
      at = json_integer((json_int_t)count++);
      json_object_set_new(index, key, at);
      json_array_append_new(keys, json_string(key));
    }
    struct pair *p = &pairs[json_integer_value(at)];
    for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
      p->values[side][round][m] = tb_replay_metric_value(r, m);
    }
    p->kernel_score[side] = selected_score(r);
  }
  json_t *counts = json_object();
  for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
    json_object_set_new(counts, metric_names[m],
                        json_pack("{s:i, s:i, s:i, s:i, s:i}", "cases", 0, "withheld", 0,
                                  "positive_median", 0, "all_pairs_positive", 0,
                                  "all_pairs_negative", 0));
  }
  json_t *per_case = json_array();
  json_t *frameworks = framework_values(cases, rounds), *versus_counts = json_object();
  const char *const variants[2] = {reference, candidate};
  unsigned predicted = 0;
  json_array_foreach(keys, i, r) {
    struct pair *p = &pairs[i];
    json_t *metrics = json_object();
    for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
      json_object_set_new(metrics, metric_names[m], metric_json(p, m, rounds, counts));
    }
    int has_scores = isfinite(p->kernel_score[0]) && isfinite(p->kernel_score[1]);
    int better = has_scores && p->kernel_score[1] < p->kernel_score[0];
    predicted += better;
    json_array_append_new(per_case, json_pack("{s:O, s:o, s:o, s:o}", "case", r, "metrics", metrics,
                                              "model_predicts_candidate_better",
                                              has_scores ? json_boolean(better) : json_null(),
                                              "native_over_framework",
                                              versus_frameworks(p, json_string_value(r), frameworks,
                                                                variants, rounds, versus_counts)));
  }
  free(pairs);
  json_decref(index);
  json_decref(keys);
  json_decref(frameworks);
  return json_pack("{s:s, s:s, s:i, s:o, s:o, s:i, s:o}", "reference", reference, "candidate",
                   candidate, "rounds", rounds, "cases", per_case, "counts", counts,
                   "model_predicts_candidate_better", predicted, "native_over_framework_counts",
                   versus_counts);
}
