/* A campaign: every op x shape x input view x provider, measured in turn. */
#ifndef TB_MEASURE_CAMPAIGN_H
#define TB_MEASURE_CAMPAIGN_H

#include <jansson.h>
#include <stdbool.h>

#include "cases/case.h"
#include "measure/host_phase.h"

struct tb_campaign {
  const struct tb_op_info *ops[TB_OP_COUNT];
  size_t op_count;
  struct tb_shape *shapes;
  size_t shape_count;
  enum tb_view_kind views[TB_VIEW_COUNT];
  size_t view_count;
  enum tb_variant variants[TB_VARIANT_COUNT]; /* for providers that plan reductions */
  size_t variant_count;
  const char *profile;                                    /* the planner's cost profile for them */
  enum tb_realization realizations[TB_REALIZATION_COUNT]; /* gemm, on every provider */
  size_t realization_count;
  struct tb_gemm_block gemm_block; /* --gemm-block, zeros for the planner's rule */
  char **providers;
  size_t provider_count;
  const char *backend;
  unsigned long long seed;
  struct tb_measure_options measure;
  bool progress;                /* a progress line on stderr (a TTY) */
  const char *out_dir;          /* generated sources go to out_dir/sources/<sha256>.cu */
  int round;                    /* replay round recorded in each case, or -1 for a plain run */
  bool reductions_only;         /* replays compare plans: elementwise ops are not run */
  const json_t *frozen_sources; /* {case id: source sha256} of a frozen pilot, or NULL */
};

size_t tb_campaign_case_count(const struct tb_campaign *c);

/* Why the campaign skips op on shape ("gemm takes MxNxK shapes"), or NULL
 * when it measures that pair. */
const char *tb_campaign_skip_reason(const struct tb_campaign *c, const struct tb_op_info *op,
                                    struct tb_shape s);

/* TB_ERR_USAGE when a shape fits none of the campaign's operations. */
enum tb_status tb_campaign_check_shapes(const struct tb_campaign *c, struct tb_error *err);

/* The same campaign with the variant order reversed (replay position balance). */
void tb_campaign_reverse_variants(struct tb_campaign *c);

/* Refuses (TB_ERR_INPUT) before anything is allocated when one case would
 * not fit in host memory. */
enum tb_status tb_campaign_check_memory(const struct tb_campaign *c, struct tb_error *err);

/* Runs every case, appending one JSON object per case x provider to `cases`.
 * A failing case is recorded and the campaign goes on; only an unusable
 * provider or exhausted memory stops it. Once SIGINT or SIGTERM arrived
 * (core/interrupt.h) no further case starts: their ids go to `missing`. */
enum tb_status tb_campaign_run(const struct tb_campaign *c, json_t *cases, json_t *missing,
                               size_t *valid_count, struct tb_error *err);

#endif
