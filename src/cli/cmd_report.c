/* tilebench report DIR: regenerate a run's report from its results.json. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "report/report.h"
#include "results/model.h"
#include "results/results.h"

static const char usage[] =
    "usage: tilebench report DIR [--output FILE]\n"
    "  Prints the Markdown report of the run in DIR, built from DIR/results.json (or\n"
    "  results.json.gz) alone.\n"
    "  --output FILE   write it to FILE instead (refused if FILE exists)\n";

int tb_cmd_report(int argc, char **argv) {
  static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *output = NULL;
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
    if (opt != 'o') {
      return tb_cli_help_or_misuse(opt, usage);
    }
    output = optarg;
  }
  if (argc - optind != 1) {
    fprintf(stderr, "tilebench report: give exactly one run directory\n%s", usage);
    return 2;
  }
  struct tb_error err = {0};
  struct tb_results_model model;
  if (tb_results_model_load_dir(argv[optind], &model, &err) != TB_OK) {
    return tb_cli_fail(&err);
  }
  char *text = tb_report_markdown(&model, &err);
  tb_results_model_free(&model);
  if (text == NULL) {
    return tb_cli_fail(&err);
  }
  int rc = 0;
  if (output == NULL) {
    fputs(text, stdout);
  } else {
    /* through a temporary file linked into place: never half-written, never overwriting */
    char dir[PATH_MAX], name[PATH_MAX];
    const char *slash = strrchr(output, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - output) : 1, slash ? output : ".");
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : output);
    if (name[0] == '\0' || tb_write_text_atomic(dir[0] ? dir : "/", name, text, &err) != TB_OK) {
      if (err.status == TB_OK) {
        tb_fail(&err, TB_ERR_USAGE, "--output needs a file name");
      }
      err.status = TB_ERR_INPUT;
      rc = tb_cli_fail(&err);
    }
  }
  free(text);
  return rc;
}
