/* tilebench: measure GPU kernels honestly. Entry point and subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

#ifndef TB_VERSION
#define TB_VERSION "unknown"
#endif

static const char usage[] =
    "usage: tilebench <command> [options]\n"
    "\n"
    "commands:\n"
    "  run      measure operations x shapes x providers; write results.json and results.md\n"
    "  replay   compare two planner variants in position-balanced rounds\n"
    "  merge    the shards of one campaign (run --shard I/N) into one results file\n"
    "  report   regenerate the report of a run from its results.json\n"
    "  audit    re-derive every figure of runs with an independent program\n"
    "  compare  two runs side by side, with verdicts from sample ranges\n"
    "  env      describe this machine: CPU, OS, GPU, driver\n"
    "  plan     show the execution mapping the planner picks for an operation and shape\n"
    "\n"
    "'tilebench <command> --help' describes a command's options.\n";

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage, stderr);
    return 2;
  }
  const char *command = argv[1];
  if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0) {
    fputs(usage, stdout);
    return 0;
  }
  if (strcmp(command, "--version") == 0) {
    printf("tilebench %s\n", TB_VERSION);
    return 0;
  }
  static const struct {
    const char *name;
    int (*run)(int, char **);
  } commands[] = {
      {"run", tb_cmd_run},     {"replay", tb_cmd_replay}, {"compare", tb_cmd_compare},
      {"audit", tb_cmd_audit}, {"report", tb_cmd_report}, {"plan", tb_cmd_plan},
      {"env", tb_cmd_env},     {"merge", tb_cmd_merge},
  };
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i) {
    if (strcmp(command, commands[i].name) == 0) {
      return commands[i].run(argc - 1, argv + 1);
    }
  }
  fprintf(stderr, "tilebench: unknown command '%s'\n\n%s", command, usage);
  return 2;
}
