#include <math.h>
#include <stdlib.h>

#include "results/json_number.h"
#include "results/replay_record.h"

static const char *const metric_names[TB_REPLAY_METRICS] = {"gpu_throughput", "gpu_latency",
                                                            "host_throughput", "host_latency"};

const char *tb_replay_metric_name(int metric) {
  return metric_names[metric];
}

void tb_replay_record_free(struct tb_replay_record *r) {
  for (size_t i = 0; r->cases != NULL && i < r->case_count; ++i) {
    free(r->cases[i].versus);
  }
  free(r->cases);
  free(r->versus_counts);
  r->cases = NULL;
  r->versus_counts = NULL;
  r->case_count = r->versus_count = 0;
}

static json_t *numbers_json(const double *values, unsigned count) {
  json_t *a = json_array();
  for (unsigned i = 0; i < count; ++i) {
    json_array_append_new(a, tb_json_number(values[i]));
  }
  return a;
}

/* The interval of the median ratio (schema 4): its bounds, rank and coverage. */
static json_t *interval_json(const struct tb_interval *iv) {
  return json_pack("{s:o, s:o, s:o, s:i}", "lo", tb_json_number(iv->bounded ? iv->lo : NAN), "hi",
                   tb_json_number(iv->bounded ? iv->hi : NAN), "coverage",
                   tb_json_number(iv->coverage), "rank", (int)iv->rank);
}

/* withheld (with the reason) or the range and its verdict, and the interval
 * and its decision against the band (schema 4), added to j. */
static json_t *range_json(json_t *j, const struct tb_replay_range *range,
                          const struct tb_verdict_words *words,
                          const struct tb_verdict_words *decision_words) {
  if (range->withheld) {
    json_object_set_new(j, "withheld", json_string(range->reason));
    return j;
  }
  json_object_set_new(j, "withheld", json_null());
  json_object_set_new(j, "median", tb_json_number(range->summary.p50));
  json_object_set_new(j, "min", tb_json_number(range->summary.min));
  json_object_set_new(j, "max", tb_json_number(range->summary.max));
  json_object_set_new(j, "verdict", json_string(tb_verdict_text(range->verdict, words)));
  json_object_set_new(j, "interval", interval_json(&range->interval));
  json_object_set_new(j, "noise",
                      json_pack("{s:o, s:o}", "first", tb_json_number(range->noise[0]), "second",
                                tb_json_number(range->noise[1])));
  json_object_set_new(j, "band", tb_json_number(range->band));
  json_object_set_new(j, "decision", json_string(tb_verdict_text(range->decision, decision_words)));
  return j;
}

static json_t *gain_json(const struct tb_replay_case *c, int metric, unsigned rounds) {
  double ref[TB_REPLAY_MAX_ROUNDS], cand[TB_REPLAY_MAX_ROUNDS];
  for (unsigned r = 0; r < rounds; ++r) {
    ref[r] = c->p50_ns[0][r][metric];
    cand[r] = c->p50_ns[1][r][metric];
  }
  json_t *j = json_pack("{s:o, s:o, s:o}", "reference_p50_ns", numbers_json(ref, rounds),
                        "candidate_p50_ns", numbers_json(cand, rounds), "gain",
                        numbers_json(c->gain[metric].per_round, rounds));
  return range_json(j, &c->gain[metric], &tb_gain_verdict_words, &tb_gain_interval_verdict_words);
}

/* {provider: {variant: {metric: {ratio, ...}}}} */
static json_t *versus_json(const struct tb_replay_record *r, const struct tb_replay_case *c) {
  json_t *out = json_object();
  for (size_t v = 0; v < c->versus_count; ++v) {
    json_t *per_provider = json_object();
    for (int side = 0; side < 2; ++side) {
      json_t *metrics = json_object();
      for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
        const struct tb_replay_range *range = &c->versus[v].ratio[side][m];
        json_t *j = json_pack("{s:o}", "ratio", numbers_json(range->per_round, r->rounds));
        json_object_set_new(
            metrics, metric_names[m],
            range_json(j, range, &tb_native_ratio_verdict_words, &tb_time_ratio_verdict_words));
      }
      const struct tb_replay_range *per_call = &c->versus[v].per_call[side];
      const char *scope = c->versus[v].per_call_scope[side];
      json_t *j = json_pack("{s:o, s:o}", "ratio", numbers_json(per_call->per_round, r->rounds),
                            "scope", scope[0] != '\0' ? json_string(scope) : json_null());
      json_object_set_new(
          metrics, "per_call",
          range_json(j, per_call, &tb_native_ratio_verdict_words, &tb_time_ratio_verdict_words));
      json_object_set_new(per_provider, r->variants[side], metrics);
    }
    json_object_set_new(out, c->versus[v].provider, per_provider);
  }
  return out;
}

static json_t *case_json(const struct tb_replay_record *r, const struct tb_replay_case *c) {
  json_t *metrics = json_object();
  for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
    json_object_set_new(metrics, metric_names[m], gain_json(c, m, r->rounds));
  }
  return json_pack("{s:s, s:o, s:o, s:o}", "case", c->key, "metrics", metrics,
                   "model_predicts_candidate_better",
                   c->model_predicts < 0 ? json_null() : json_boolean(c->model_predicts),
                   "native_over_framework", versus_json(r, c));
}

static json_t *gain_counts_json(const struct tb_replay_gain_counts *k) {
  return json_pack("{s:i, s:i, s:i, s:i, s:i}", "cases", (int)k->cases, "withheld",
                   (int)k->withheld, "positive_median", (int)k->positive_median,
                   "all_pairs_positive", (int)k->all_pairs_positive, "all_pairs_negative",
                   (int)k->all_pairs_negative);
}

static json_t *versus_counts_json(const struct tb_replay_record *r) {
  json_t *out = json_object();
  for (size_t p = 0; p < r->versus_count; ++p) {
    json_t *per_provider = json_object();
    for (int side = 0; side < 2; ++side) {
      json_t *per_variant = json_object();
      for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
        const struct tb_replay_ratio_counts *k = &r->versus_counts[p].counts[side][m];
        json_object_set_new(
            per_variant, metric_names[m],
            json_pack("{s:i, s:i, s:i, s:i}", "cases", (int)k->cases, "withheld", (int)k->withheld,
                      "native_faster_in_all_pairs", (int)k->native_faster_in_all_pairs,
                      "native_slower_in_all_pairs", (int)k->native_slower_in_all_pairs));
      }
      json_object_set_new(per_provider, r->variants[side], per_variant);
    }
    json_object_set_new(out, r->versus_counts[p].provider, per_provider);
  }
  return out;
}

json_t *tb_replay_record_to_json(const struct tb_replay_record *r) {
  json_t *cases = json_array(), *counts = json_object();
  for (size_t i = 0; i < r->case_count; ++i) {
    json_array_append_new(cases, case_json(r, &r->cases[i]));
  }
  for (int m = 0; m < TB_REPLAY_METRICS; ++m) {
    json_object_set_new(counts, metric_names[m], gain_counts_json(&r->counts[m]));
  }
  /* how every interval and decision of the summary was made (schema 4):
   * exact order statistics, so there is no seed to record */
  json_t *method =
      json_pack("{s:s, s:f, s:f, s:s, s:n}", "interval",
                "order statistics of the per-round ratios (sign test)", "level", TB_INTERVAL_LEVEL,
                "band_floor", TB_BAND_FLOOR, "noise",
                "median over rounds of 1.4826 MAD / median of each record's samples", "seed");
  return json_pack("{s:s, s:s, s:i, s:o, s:o, s:i, s:o, s:o}", "reference", r->variants[0],
                   "candidate", r->variants[1], "rounds", (int)r->rounds, "cases", cases, "counts",
                   counts, "model_predicts_candidate_better",
                   (int)r->model_predicts_candidate_better, "native_over_framework_counts",
                   versus_counts_json(r), "method", method);
}
