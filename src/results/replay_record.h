/* The paired summary of a replay (docs/method.md §3) as typed values:
 * measure/replay_summary.c computes it from the rounds' case records and
 * replay_json.c writes it as the results' "replay" object. */
#ifndef TB_RESULTS_REPLAY_RECORD_H
#define TB_RESULTS_REPLAY_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "stats/interval.h"
#include "stats/stats.h"
#include "stats/verdict.h"

#define TB_REPLAY_METRICS 4     /* gpu_throughput, gpu_latency, host_throughput, host_latency */
#define TB_REPLAY_MAX_ROUNDS 64 /* --rounds accepts 2..64 */
#define TB_REPLAY_KEY_SIZE 200  /* a case's pairing key, truncated */

/* "gpu_throughput", "gpu_latency", "host_throughput", "host_latency" */
const char *tb_replay_metric_name(int metric);

/* One metric's ratio per round, what the range of them says, and what the
 * interval of their median says against the equivalence band. */
struct tb_replay_range {
  double per_round[TB_REPLAY_MAX_ROUNDS];
  bool withheld;    /* a round lacks a value: no figures */
  char reason[128]; /* why, when withheld */
  struct tb_summary summary;
  enum tb_verdict verdict;     /* the range rule: all pairs on one side of 1 */
  struct tb_interval interval; /* of the median ratio (tb_paired_interval) */
  double noise[2];             /* each side's median over rounds of its robust CV */
  double band;                 /* tb_equivalence_band of the two noises */
  enum tb_verdict decision;    /* the interval against the band */
};

/* Native against one framework in one case: ratio_r = native_r / framework_r
 * per variant (0 reference, 1 candidate) and metric. */
struct tb_replay_versus {
  const char *provider;
  struct tb_replay_range ratio[2][TB_REPLAY_METRICS];
  /* Schema 4: per call in the best scope both sides measured in every round:
   * the host-gap-free GPU control ("graph", "held", "eager": gap_free's
   * mode), else the eager GPU control ("eager"), else host E2E ("host");
   * per variant, scope "" when withheld. */
  struct tb_replay_range per_call[2];
  char per_call_scope[2][16];
};

struct tb_replay_case {
  char key[TB_REPLAY_KEY_SIZE]; /* the case id without the variant */
  double p50_ns[2][TB_REPLAY_MAX_ROUNDS]
               [TB_REPLAY_METRICS]; /* [variant][round][metric], NaN absent */
  double cv[2][TB_REPLAY_MAX_ROUNDS]
           [TB_REPLAY_METRICS];                   /* robust CV of the same samples, NaN absent */
  struct tb_replay_range gain[TB_REPLAY_METRICS]; /* reference_r / candidate_r */
  int model_predicts; /* candidate's kernel score lower: 1, higher or equal: 0, no scores: -1 */
  struct tb_replay_versus *versus;
  size_t versus_count;
};

struct tb_replay_gain_counts {
  unsigned cases, withheld, positive_median, all_pairs_positive, all_pairs_negative;
};

struct tb_replay_ratio_counts {
  unsigned cases, withheld, native_faster_in_all_pairs, native_slower_in_all_pairs;
};

/* native_over_framework_counts of one framework, per variant and metric. */
struct tb_replay_versus_counts {
  const char *provider;
  struct tb_replay_ratio_counts counts[2][TB_REPLAY_METRICS];
};

struct tb_replay_record {
  const char *variants[2]; /* reference, candidate */
  unsigned rounds;
  bool no_device;               /* the CPU backend: GPU metrics were never measured */
  struct tb_replay_case *cases; /* in the order their first record came */
  size_t case_count;
  struct tb_replay_gain_counts counts[TB_REPLAY_METRICS];
  unsigned model_predicts_candidate_better;
  struct tb_replay_versus_counts *versus_counts; /* in the order first met */
  size_t versus_count;
};

void tb_replay_record_free(struct tb_replay_record *r);

/* The results' "replay" object. */
json_t *tb_replay_record_to_json(const struct tb_replay_record *r);

#endif
