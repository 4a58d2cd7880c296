/* Paired statistics of a replay (docs/method.md §3), computed from the archived
 * case records alone: per case and metric, per round the p50 of each
 * variant, gain_r = reference_r / candidate_r, the median, min and max of
 * the gains, and a verdict from their range. A metric is withheld for a
 * case when any round lacks one of its two values. */
#ifndef TB_MEASURE_REPLAY_SUMMARY_H
#define TB_MEASURE_REPLAY_SUMMARY_H

#include <jansson.h>

#define TB_REPLAY_METRICS 4
#define TB_REPLAY_MAX_ROUNDS 64 /* --rounds accepts 2..64 */

/* "gpu_throughput", "gpu_latency", "host_throughput", "host_latency" */
const char *tb_replay_metric_name(int metric);

/* The per-round p50 (ns per call) of a metric in one case record; NaN when
 * the record lacks it (GPU metrics need a complete control phase). */
double tb_replay_metric_value(const json_t *case_record, int metric);

/* Verdict for the candidate from the gains' range: "faster in all pairs"
 * (every gain > 1), "slower in all pairs" (every gain < 1), "inconclusive". */
const char *tb_replay_verdict(double min_gain, double max_gain);

json_t *tb_replay_summary(const json_t *cases, const char *reference, const char *candidate,
                          unsigned rounds);

#endif
