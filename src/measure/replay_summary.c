#include "measure/replay_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/results.h"
#include "stats/stats.h"

static const char *const metric_names[TB_REPLAY_METRICS] = {"gpu_throughput", "gpu_latency",
                                                            "host_throughput", "host_latency"};

const char *tb_replay_metric_name(int metric) { return metric_names[metric]; }

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
  double values[2][64][TB_REPLAY_METRICS];
  double kernel_score[2]; /* of the register plan, NaN otherwise */
};

static double selected_score(const json_t *r) {
  json_t *plan = json_array_get(json_object_get(r, "execution_plans"), 0);
  json_t *score = json_object_get(json_object_get(plan, "selected"), "kernel_score");
  return json_is_number(score) ? json_number_value(score) : NAN;
}

static json_t *metric_json(const struct pair *p, int metric, unsigned rounds, json_t *counts) {
  json_t *ref = json_array(), *cand = json_array(), *gains = json_array();
  double gain[64];
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
  json_object_set_new(count, "cases", json_integer(json_integer_value(json_object_get(count, "cases")) + 1));
  if (missing < rounds) {
    char why[128];
    snprintf(why, sizeof why, "round %u lacks a complete %s pair", missing, metric_names[metric]);
    json_object_set_new(j, "withheld", json_string(why));
    json_object_set_new(count, "withheld", json_integer(json_integer_value(json_object_get(count, "withheld")) + 1));
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
    json_object_set_new(count, keys[k], json_integer(json_integer_value(json_object_get(count, keys[k])) + hits[k]));
  }
  return j;
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
    json_t *round = json_object_get(r, "round");
    if (variant == NULL || !json_is_integer(round) || json_integer_value(round) >= (json_int_t)rounds ||
        json_integer_value(round) < 0 || json_integer_value(round) >= 64) {
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
        for (int k = 0; k < 64; ++k) {
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
      p->values[side][json_integer_value(round)][m] = tb_replay_metric_value(r, m);
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
    json_array_append_new(per_case, json_pack("{s:O, s:o, s:o}", "case", r, "metrics", metrics,
                                              "model_predicts_candidate_better",
                                              has_scores ? json_boolean(better) : json_null()));
  }
  free(pairs);
  json_decref(index);
  json_decref(keys);
  return json_pack("{s:s, s:s, s:i, s:o, s:o, s:i}", "reference", reference, "candidate",
                   candidate, "rounds", rounds, "cases", per_case, "counts", counts,
                   "model_predicts_candidate_better", predicted);
}
