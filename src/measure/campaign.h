/* A campaign: every op x shape x input view x provider (x variant for a
 * planning provider's row reductions, x realization for gemm), measured in
 * turn. One cursor walks these axes (tb_campaign_next_case, then
 * tb_campaign_next_run within the case) for everything that needs them:
 * counting, checking memory, running, listing the cases a signal left
 * unmeasured, and a replay's rounds. */
#ifndef TB_MEASURE_CAMPAIGN_H
#define TB_MEASURE_CAMPAIGN_H

#include <stdbool.h>

#include "cases/case.h"
#include "cases/shard.h"
#include "measure/host_phase.h"
#include "results/document.h"
#include "results/model.h"

/* The most planner variants one campaign measures (--variants). */
#define TB_CAMPAIGN_MAX_VARIANTS 64

struct tb_campaign {
  const struct tb_op_info *ops[TB_OP_COUNT];
  size_t op_count;
  struct tb_shape *shapes;
  size_t shape_count;
  enum tb_view_kind views[TB_VIEW_COUNT];
  size_t view_count;
  enum tb_variant variants[TB_CAMPAIGN_MAX_VARIANTS]; /* for providers that plan reductions */
  size_t variant_count;
  const char *profile;                                    /* the planner's cost profile for them */
  enum tb_realization realizations[TB_REALIZATION_COUNT]; /* gemm, on every provider */
  size_t realization_count;
  struct tb_gemm_block gemm_block; /* --gemm-block, zeros for the planner's rule */
  char **providers;
  size_t provider_count;
  const char *backend;
  const char *kernel_library; /* --kernel: the user provider's library, or NULL */
  const char *kernel_launch;  /* --launch: a .cu kernel's launch description, or NULL */
  unsigned long long seed;
  struct tb_measure_options measure;
  bool progress;        /* a progress line on stderr (a TTY) */
  const char *out_dir;  /* generated sources go to out_dir/sources/<sha256>.cu */
  int round;            /* replay round recorded in each case, or -1 for a plain run */
  bool reductions_only; /* replays compare plans: elementwise ops are not run */
  const struct tb_results_model *frozen_pilot; /* a frozen replay's pilot, or NULL */
  /* --shard I/N (cases/shard.h): only the units dealt to shard_index are
   * walked; shard_of[u] is the shard of the campaign's u-th unit, in the
   * order of the whole campaign (NULL: every unit) */
  const unsigned *shard_of;
  unsigned shard_index;
};

/* Where the walk over the campaign's axes stands. The case: indexes into
 * the campaign's shapes, ops and views (only pairs the campaign measures).
 * The run: which provider, and the variant or the realization it runs. */
struct tb_campaign_cursor {
  size_t shape, op, view;
  /* among the campaign's cases, from 0, counting those of other shards too,
   * so that a case's provider order is the same in a shard as in the whole */
  size_t case_index;
  struct tb_case base; /* the case on no provider yet */

  size_t slot;             /* the provider's position in this case's order (0 = first) */
  size_t provider;         /* index into the campaign's providers */
  size_t position;         /* the run among the provider's runs of this case: a replay's position */
  bool planned;            /* a planning provider's row reduction: `variant` is a planner variant */
  enum tb_variant variant; /* TB_VARIANT_AUTOMATIC unless planned */
  enum tb_realization realization; /* gemm's; TB_REALIZATION_SIMT for other ops */

  bool alternate; /* provider order alternates case by case (and round by round) */
  bool in_case, in_run;
};

/* A cursor before the first case; `alternate` as the run orders providers,
 * else the campaign's own provider order. */
void tb_campaign_cursor_start(struct tb_campaign_cursor *cur, bool alternate);

/* To the next measured case of the shard (its first run not yet chosen);
 * false after the last. */
bool tb_campaign_next_case(const struct tb_campaign *c, struct tb_campaign_cursor *cur);

/* To the next run of the current case; false after its last. */
bool tb_campaign_next_run(const struct tb_campaign *c, struct tb_campaign_cursor *cur);

/* The case of the current run, with provider, variant, realization, profile
 * and gemm block filled in. */
struct tb_case tb_campaign_run_case(const struct tb_campaign *c,
                                    const struct tb_campaign_cursor *cur);

/* The variant measured at `position` in replay `round`: the order reverses
 * round by round, so each variant goes first in half the rounds. */
enum tb_variant tb_campaign_variant_at(const struct tb_campaign *c, int round, size_t position);

size_t tb_campaign_case_count(const struct tb_campaign *c);

/* Every unit of the whole campaign, whatever its shard, in the campaign's
 * order (cases/shard.h: key, expected cost, the ids of its records);
 * freed with tb_shard_units_free. */
enum tb_status tb_campaign_units(const struct tb_campaign *c, struct tb_shard_unit **units,
                                 size_t *count, struct tb_error *err);

/* Why the campaign skips op on shape ("gemm takes MxNxK shapes"), or NULL
 * when it measures that pair. */
const char *tb_campaign_skip_reason(const struct tb_campaign *c, const struct tb_op_info *op,
                                    struct tb_shape s);

/* Every op/shape pair the campaign does not measure, with the reason, into
 * out (op_count x shape_count entries at most); an op measured on no shape
 * at all is also named on stderr, never dropped silently. */
size_t tb_campaign_skipped_pairs(const struct tb_campaign *c, struct tb_skipped_pair *out);

/* TB_ERR_USAGE when a shape fits none of the campaign's operations. */
enum tb_status tb_campaign_check_shapes(const struct tb_campaign *c, struct tb_error *err);

/* Refuses (TB_ERR_INPUT) before anything is allocated when one case would
 * not fit in host memory. */
enum tb_status tb_campaign_check_memory(const struct tb_campaign *c, struct tb_error *err);

/* Runs every case, handing each record (struct tb_case_result) to
 * sink->record. A failing case is recorded and the campaign goes on; only
 * an unusable native provider or exhausted memory stops it. Once SIGINT or
 * SIGTERM arrived (core/interrupt.h) no further case starts: their ids go
 * to sink->missing. */
enum tb_status tb_campaign_run(const struct tb_campaign *c, const struct tb_case_sink *sink,
                               size_t *valid_count, struct tb_error *err);

#endif
