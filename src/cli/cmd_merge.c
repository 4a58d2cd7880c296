/* tilebench merge: the shards of one campaign into one results file
 * (docs/campaigns.md; the work is cli/merge.c's). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/merge.h"

static const char usage[] =
    "usage: tilebench merge DIR... --out OUT [--quiet]\n"
    "  Merges the shards of one campaign (`tilebench run --shard I/N`, one per DIR) into\n"
    "  OUT/results.json, after checking that they are one campaign: the same command line but\n"
    "  --shard and --out, the same build and kind of machine, every case exactly once\n"
    "  (docs/campaigns.md). A DIR without results.json (a shard that failed or never ran) is\n"
    "  left out; a missing or incomplete shard refuses the merge (exit 1) with its cases and\n"
    "  the command that reruns just it. OUT must not exist; nothing is overwritten.\n"
    "  --out OUT   the merged run's directory (new)\n"
    "  --quiet     no table on stdout\n";

int tb_cmd_merge(int argc, char **argv) {
  static const struct option options[] = {{"out", required_argument, NULL, 'O'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *out = NULL;
  bool quiet = false;
  int opt;
  optind = 1;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    switch (opt) {
    case 'O': out = optarg; break;
    case 'q': quiet = true; break;
    default: return tb_cli_help_or_misuse(opt, usage);
    }
  }
  if (optind >= argc || out == NULL) {
    fprintf(stderr, "tilebench merge: %s\n%s",
            optind >= argc ? "give the shards' run directories"
                           : "give --out OUT (a new directory)",
            usage);
    return 2;
  }
  struct tb_merge_request req = {.dirs = (const char *const *)argv + optind,
                                 .dir_count = (size_t)(argc - optind),
                                 .out = out,
                                 .argc = argc,
                                 .argv = argv,
                                 .quiet = quiet};
  return tb_merge_shards(&req);
}
