/* Paired statistics of a replay (docs/method.md §3), computed from the
 * model of the rounds' case records alone (results/model.h): per case and
 * metric, per round the p50 of each variant, gain_r = reference_r /
 * candidate_r, the median, min and max of the gains, and a verdict from
 * their range (stats/verdict.h). A metric is withheld for a case when any
 * round lacks one of its two values. Each shown range also gets the interval
 * of its median, the two sides' noise, the band and a decision (§3.2,
 * stats/interval.h). With frameworks in the campaign, also native_r /
 * framework_r per framework and variant, per metric and per call in the best
 * scope both sides measured. */
#ifndef TB_MEASURE_REPLAY_SUMMARY_H
#define TB_MEASURE_REPLAY_SUMMARY_H

#include "core/error.h"
#include "results/model.h"
#include "results/replay_record.h"

/* The per-round p50 (ns per call) of a metric in one case record; NaN when
 * the record lacks it (GPU metrics need a complete control phase). */
double tb_replay_metric_value(const struct tb_model_case *c, int metric);

/* Fills `out` (tb_replay_record_free releases it); TB_ERR_SYSTEM when
 * memory runs out. The variant names must outlive `out`. */
enum tb_status tb_replay_summary(const struct tb_results_model *cases, const char *reference,
                                 const char *candidate, unsigned rounds,
                                 struct tb_replay_record *out, struct tb_error *err);

#endif
