/* Subcommands. Each returns the process exit code (0, 1 or 2). */
#ifndef TB_CLI_COMMANDS_H
#define TB_CLI_COMMANDS_H

#include <stdbool.h>

#include "core/error.h"
#include "core/numbers.h"
#include "results/model.h"

int tb_cmd_run(int argc, char **argv);
int tb_cmd_report(int argc, char **argv);
int tb_cmd_env(int argc, char **argv);
int tb_cmd_plan(int argc, char **argv);
int tb_cmd_replay(int argc, char **argv);
int tb_cmd_audit(int argc, char **argv);
int tb_cmd_compare(int argc, char **argv);
int tb_cmd_merge(int argc, char **argv);

/* What `tilebench compare` was asked for. */
struct tb_compare_options {
  bool fail_on_regression; /* exit 1 when a case is SLOWER */
  bool allow_different;    /* compare runs that did not run the same way */
  bool decide_host;        /* decide host-scope cases too (docs/method.md §3.1) */
  bool across_plans;       /* pair cases of one id whose plans differ (a planner change) */
};

/* compare's table and verdicts for two loaded results files
 * (results/model.h); returns the exit code: 2 when the runs differ in what
 * they ran on (unless allow_different) or share no case, 1 when
 * fail_on_regression and a case is SLOWER. */
int tb_compare_models(const struct tb_results_model *a, const struct tb_results_model *b,
                      const struct tb_compare_options *options);

/* Prints "tilebench: <message>" on stderr and returns the exit code. */
int tb_cli_fail(const struct tb_error *err);
/* For an option getopt returned that the command does not handle itself:
 * 'h' prints the usage and gives exit code 0; anything else (an unknown
 * option, a missing argument) prints it on stderr and gives 2. */
int tb_cli_help_or_misuse(int opt, const char *usage);

#endif
