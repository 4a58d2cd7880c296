/* The results document of one run (docs/results-schema.md), assembled from
 * typed parts: the run's facts, its provenance, each case record as the
 * campaign hands it over, the cases never started, the replay's plan and
 * summary, and how the run ended. The CLI gathers the facts; only this file
 * knows where each lands in the JSON. */
#ifndef TB_RESULTS_DOCUMENT_H
#define TB_RESULTS_DOCUMENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cases/case_params.h"
#include "cases/shard.h"
#include "core/error.h"
#include "results/case_result.h"
#include "results/model.h"
#include "results/replay_record.h"

/* An op/shape pair the campaign does not measure, and why. */
struct tb_skipped_pair {
  const char *op;
  char shape[64];
  const char *reason;
};

/* What the run was asked to do, as the CLI understood it. */
struct tb_run_facts {
  int argc;
  char **argv; /* after `tilebench` */
  const char *backend, *backend_reason;
  unsigned long long seed;
  unsigned samples; /* the fixed count; under the noise rule its max_samples */
  struct tb_stopping_rule stopping;
  double warmup_ms, sample_ms;
  bool probe;
  bool clock_checks;           /* run.measure.clock_checks (schema 7) */
  unsigned batch_modes;        /* bit 1 << enum tb_batch_mode */
  const char *const *variants; /* names */
  size_t variant_count;
  const char *profile;
  const char *const *realizations; /* names */
  size_t realization_count;
  const struct tb_skipped_pair *skipped;
  size_t skipped_count;
  struct tb_gemm_block gemm_block; /* zeros: the planner's rule */
  double tolerance_scale;          /* --tolerance-scale (>= 1); 0 means 1 */
};

/* A shard's place in its campaign (docs/campaigns.md). */
struct tb_shard_facts {
  unsigned index, count;
  const struct tb_shard_unit *units; /* the whole campaign's, in order */
  size_t unit_count;
  const unsigned *shard_of; /* each unit's shard */
  /* the campaign's command line: the run's, without --shard, --out,
   * --devices and --quiet (every shard of one campaign has the same) */
  const char *const *argv;
  size_t argc;
};

/* Where a record stands in the campaign. */
struct tb_case_placement {
  size_t provider_position; /* 0 = measured first within its case */
  int round;                /* replay round, or -1 for a plain run */
  size_t position;          /* replays: the variant's position in the round */
};

struct tb_document;

/* Where the campaign hands its records (measure/campaign.h). */
struct tb_case_sink {
  void *context;
  void (*record)(void *context, const struct tb_case_result *result,
                 const struct tb_case_placement *where);
  void (*missing)(void *context, const char *id); /* a case never started */
};

/* Starts the document: schema, tool, run facts (started now) and the
 * provenance captured now; `gpu` (stolen) describes the devices. NULL when
 * memory runs out. */
struct tb_document *tb_document_begin(const struct tb_run_facts *facts, json_t *gpu);
void tb_document_free(struct tb_document *d);

/* A sink that adds to d. */
struct tb_case_sink tb_document_sink(struct tb_document *d);

void tb_document_add_case(struct tb_document *d, const struct tb_case_result *r,
                          const struct tb_case_placement *where);
void tb_document_add_missing(struct tb_document *d, const char *id);

/* run.shard: {index, count, campaign_argv, campaign_sha256, cost_model,
 * units} (docs/results-schema.md). */
void tb_document_set_shard(struct tb_document *d, const struct tb_shard_facts *f);

/* run.copy_ceiling (stolen; JSON null on the CPU backend). */
void tb_document_set_copy_ceiling(struct tb_document *d, json_t *ceiling);

/* run.replay: the rounds and each started round's variant order. */
void tb_document_set_replay_plan(struct tb_document *d, unsigned rounds, const char *reference,
                                 const char *candidate, const char *const (*orders)[2],
                                 size_t order_count);

/* A frozen replay runs exactly the pilot's artifacts: refuses (TB_ERR_INPUT)
 * when the executable or a library this run shares with the pilot differs,
 * else records run.frozen: the pilot, its results' SHA-256 and its artifacts. */
enum tb_status tb_document_freeze(struct tb_document *d, const char *pilot_dir,
                                  const struct tb_results_model *pilot,
                                  const char *pilot_results_sha256, struct tb_error *err);

/* The end of the run: background load, finish time, valid cases, and
 * complete / error / interrupted from the campaign's error and the signal
 * that arrived (0: none; a signal after the last case started stopped
 * nothing). */
void tb_document_finish(struct tb_document *d, size_t valid, const struct tb_error *err,
                        int signal_number);

/* Whether the run was stopped by a signal (tb_document_finish said so). */
bool tb_document_interrupted(const struct tb_document *d);

/* The replay summary ("replay"). */
void tb_document_set_replay_summary(struct tb_document *d, const struct tb_replay_record *r);

/* The document itself, to write or to read back as a model. */
const json_t *tb_document_json(const struct tb_document *d);

#endif
