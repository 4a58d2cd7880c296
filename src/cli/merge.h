/* Merging the shards of one campaign into one results file
 * (docs/campaigns.md): `tilebench merge DIR... --out OUT`, and the end of
 * `tilebench run --devices`, which measures its shards in OUT/shards/I. */
#ifndef TB_CLI_MERGE_H
#define TB_CLI_MERGE_H

#include <stdbool.h>
#include <stddef.h>

struct tb_merge_request {
  const char *const *dirs; /* the shards' run directories */
  size_t dir_count;
  const char *out; /* the merged run's directory */
  /* --devices: out is claimed by the caller (who releases it) and holds the
   * shards as out/shards/I; otherwise out must not exist */
  bool in_place;
  /* per shard index, what a rerun command starts with (the device of
   * --devices: "CUDA_VISIBLE_DEVICES=3 "), or NULL */
  const char *const *rerun_prefix;
  size_t rerun_prefix_count;
  int argc; /* the merging command, recorded in run.merge */
  char **argv;
  bool quiet; /* no terminal table */
};

/* Checks that the shards are one campaign (the same command line but the
 * shard, the same artifacts and environment, every case exactly once),
 * then writes out/results.json (temporary file, linked into place when
 * complete), out/results.md, out/shards/I/results.json (each shard's file
 * as it is) and out/sources. Returns the exit code: 0; 1 when a shard is
 * missing or incomplete (nothing written; its cases and the command that
 * reruns it are printed) or a merged case is invalid; 2 for shards that
 * are not one campaign, a shard given twice, or an existing out. */
int tb_merge_shards(const struct tb_merge_request *req);

/* The text of argv as one shell command line, each argument quoted where
 * the shell would split or expand it; the caller frees it. */
char *tb_shell_command(const char *const *argv, size_t argc);

#endif
