/* tilebench run's and replay's options: the usage texts, the parsed
 * options and their parser (every number through core/numbers.h; a bad
 * value is TB_ERR_USAGE naming the option). cmd_run.c runs what they ask. */
#ifndef TB_CLI_RUN_OPTIONS_H
#define TB_CLI_RUN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "backends/user_library.h"
#include "cases/shard.h"
#include "core/error.h"
#include "core/strlist.h"
#include "stats/stopping.h"

/* Replays compare reduction plans: 2-D shapes only; run adds a gemm shape. */
#define DEFAULT_REDUCTION_SHAPES "37x769,1024x1024,16384x257,4096x1024"
#define DEFAULT_SHAPES DEFAULT_REDUCTION_SHAPES ",128x128x128"

extern const char tb_run_usage[];
extern const char tb_replay_usage[];

struct tb_run_options {
  int replay; /* `tilebench replay`: rounds of two variants */
  unsigned long long rounds;
  const char *frozen; /* pilot run directory to replay exactly */
  struct tb_strlist ops, shapes, views, providers, variants, realizations;
  const char *gemm_block;
  const char *kernel; /* --kernel: the user provider's library */
  const char *launch; /* --launch: a .cu kernel's launch description */
  /* open from the check to the end of the run, so provenance lists it
   * among the mapped libraries with its SHA-256 */
  struct tb_user_library user_lib;
  const char *profile; /* the planner's cost profile */
  const char *backend;
  const char *out;
  char default_out[128];
  unsigned long long seed;
  unsigned long long samples;
  int samples_given;
  /* the noise rule: --max-noise turns it on; the others are its parameters
   * (given_* say which were on the command line) */
  struct tb_stopping_rule stopping;
  int given_min_samples, given_max_samples, given_min_time, given_timeout;
  double warmup_ms, sample_ms;
  double tolerance_scale; /* --tolerance-scale: >= 1 */
  int quiet;
  int probe;
  bool clock_checks_off; /* --clock-checks off */
  unsigned batch_modes;  /* bit 1 << enum tb_batch_mode */
  const char *shard;     /* --shard I/N */
  unsigned shard_index, shard_count;
  const char *devices; /* --devices LIST|all */
  /* the campaign's command line: the subcommand and every option but
   * --shard, --out, --devices and --quiet (docs/campaigns.md) */
  const char **campaign_argv;
  size_t campaign_argc;
  struct tb_shard_unit *units; /* the whole campaign's, with --shard or --devices */
  size_t unit_count;
  unsigned *shard_of;
};

/* Parses argv into *o (which holds the defaults on entry). */
enum tb_status tb_run_options_parse(int argc, char **argv, struct tb_run_options *o,
                                    struct tb_error *err);

#endif
