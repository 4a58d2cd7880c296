/* tilebench run --devices (docs/campaigns.md): one measurement process per
 * GPU, each a `tilebench run --shard I/N` with CUDA_VISIBLE_DEVICES naming
 * its GPU alone and writing OUT/shards/I, then the merge of them into OUT. */
#ifndef TB_CLI_DEVICES_H
#define TB_CLI_DEVICES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

struct tb_devices_plan {
  const char *executable;           /* the tilebench to run */
  const char *const *campaign_argv; /* "run" or "replay" and the campaign's options */
  size_t campaign_argc;
  const char *const *devices; /* CUDA_VISIBLE_DEVICES of each shard, distinct */
  size_t device_count;        /* the number of shards */
  const char *out;            /* claimed here; must be new or empty */
  bool quiet;
  int argc; /* the command that asked, recorded by the merge */
  char **argv;
};

/* Checks a --devices list: `all`, or distinct GPU ordinals (0..1023) or
 * UUIDs (GPU-..., MIG-...). */
enum tb_status tb_devices_check_list(const char *text, struct tb_error *err);

/* Claims plan->out, starts every shard at once (each in a process group of
 * its own, so that a signal reaches each once: the first SIGINT or SIGTERM
 * here is passed on to every shard, which finishes its case in flight and
 * writes its results marked incomplete), waits for all, then merges them
 * (cli/merge.h) into plan->out. Returns the exit code. */
int tb_devices_run(const struct tb_devices_plan *plan);

#endif
