/* tilebench report DIR: regenerate a run's report from its results.json, as
 * Markdown, CSV or a JSON summary. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/resources.h"
#include "report/report.h"
#include "results/model.h"
#include "results/results.h"

static const char usage[] =
    "usage: tilebench report DIR [--format LIST] [--output FILE | --output-dir D]\n"
    "  Prints the report of the run in DIR, built from DIR/results.json (or\n"
    "  results.json.gz) alone.\n"
    "  --format LIST   comma-separated, each at most once: md (default), csv,\n"
    "                  json-summary (docs/results-schema.md, \"Report formats\"),\n"
    "                  plot (with --output-dir: time per call against bytes per\n"
    "                  operation, sweep-OP-time.svg and .png, by tools/plot with\n"
    "                  python3 and matplotlib)\n"
    "  --output FILE   write the one format to FILE instead (refused if FILE exists)\n"
    "  --output-dir D  write each format into D (created if absent) as results.md,\n"
    "                  results.csv, results-summary.json; refused, writing none, if\n"
    "                  any of them exists. Several formats need --output-dir.\n";

extern char **environ;

struct report_format {
  const char *name, *file_name;
  char *(*build)(const struct tb_results_model *, struct tb_error *);
};

/* plot has no builder here: tools/plot draws it from results.json (run_plot). */
static const struct report_format formats[] = {
    {"md", "results.md", tb_report_markdown},
    {"csv", "results.csv", tb_report_csv},
    {"json-summary", "results-summary.json", tb_report_json_summary},
    {"plot", NULL, NULL},
};
#define PLOT_FORMAT 3
#define FORMAT_COUNT (sizeof formats / sizeof formats[0])

static int misuse(const char *message, const char *detail) {
  fprintf(stderr, "tilebench report: %s%s\n%s", message, detail, usage);
  return 2;
}

/* The formats of a comma-separated list into chosen[]; 0, or 2 with a
 * message for an empty, unknown or repeated name. */
static int parse_formats(const char *list, bool chosen[FORMAT_COUNT], size_t *count) {
  char copy[256];
  if (snprintf(copy, sizeof copy, "%s", list) >= (int)sizeof copy) {
    return misuse("--format list too long", "");
  }
  *count = 0;
  char *save = NULL;
  for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    size_t f = 0;
    while (f < FORMAT_COUNT && strcmp(formats[f].name, name) != 0) {
      ++f;
    }
    if (f == FORMAT_COUNT) {
      return misuse("unknown --format (md, csv, json-summary, plot): ", name);
    }
    if (chosen[f]) {
      return misuse("--format names twice: ", name);
    }
    chosen[f] = true;
    ++*count;
  }
  return *count > 0 ? 0 : misuse("--format needs at least one of md, csv, json-summary, plot", "");
}

/* path, through a temporary file linked into place: never half-written,
 * never overwriting. */
static int write_file(const char *path, const char *text) {
  struct tb_error err = {0};
  char dir[PATH_MAX], name[PATH_MAX];
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
  snprintf(name, sizeof name, "%s", slash ? slash + 1 : path);
  if (name[0] == '\0' || tb_write_text_atomic(dir[0] ? dir : "/", name, text, &err) != TB_OK) {
    if (err.status == TB_OK) {
      tb_fail(&err, TB_ERR_USAGE, "--output needs a file name");
    }
    err.status = TB_ERR_INPUT;
    return tb_cli_fail(&err);
  }
  return 0;
}

/* D exists as a directory or is made; none of the chosen files is in it
 * yet, so a refusal leaves nothing half-written. */
static int prepare_output_dir(const char *dir, const bool chosen[FORMAT_COUNT]) {
  struct stat st;
  if (mkdir(dir, 0755) != 0 && (errno != EEXIST || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
    fprintf(stderr, "tilebench report: cannot use --output-dir %s: %s\n", dir,
            errno == EEXIST ? "not a directory" : strerror(errno));
    return 2;
  }
  for (size_t f = 0; f < FORMAT_COUNT; ++f) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, formats[f].file_name ? formats[f].file_name : "");
    if (chosen[f] && formats[f].file_name != NULL && access(path, F_OK) == 0) {
      fprintf(stderr, "tilebench report: %s exists; nothing written (never overwritten)\n", path);
      return 2;
    }
  }
  return 0;
}

/* One format to stdout, to --output, or into --output-dir. */
static int emit(const struct tb_results_model *model, const struct report_format *f,
                const char *output, const char *output_dir) {
  struct tb_error err = {0};
  char *text = f->build(model, &err);
  if (text == NULL) {
    return tb_cli_fail(&err);
  }
  int rc = 0;
  char path[PATH_MAX];
  if (output_dir != NULL) {
    snprintf(path, sizeof path, "%s/%s", output_dir, f->file_name);
    rc = write_file(path, text);
  } else if (output != NULL) {
    rc = write_file(output, text);
  } else {
    fputs(text, stdout);
  }
  free(text);
  return rc;
}

/* The plots of run_dir into output_dir, drawn by tools/plot (which refuses,
 * with exit 2, to overwrite a file or to plot nothing); its exit status. */
static int run_plot(const char *run_dir, const char *output_dir) {
  char script[PATH_MAX];
  struct tb_error err = {0};
  if (tb_resource_path(TB_RESOURCE_PLOT, script, sizeof script, &err) != TB_OK) {
    fprintf(stderr, "tilebench report: %s\n", err.message);
    return 2;
  }
  char *args[] = {"python3", script, "sweep", (char *)run_dir, "--out", (char *)output_dir, NULL};
  pid_t pid;
  int status = 0;
  if (posix_spawnp(&pid, "python3", NULL, NULL, args, environ) != 0 ||
      waitpid(pid, &status, 0) != pid) {
    fprintf(stderr, "tilebench report: cannot run python3 for the plots (install python3 and "
                    "python3-matplotlib)\n");
    return 2;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Which outputs go where is decided before anything is read or written. */
static int check_destinations(size_t count, bool plot, const char *output, const char *output_dir) {
  if (output != NULL && output_dir != NULL) {
    return misuse("give --output or --output-dir, not both", "");
  }
  if (plot && output_dir == NULL) {
    return misuse("--format plot needs --output-dir (it writes SVG and PNG files)", "");
  }
  if (count > 1 && output_dir == NULL) {
    return misuse(output != NULL ? "--output takes one format; several need --output-dir"
                                 : "several formats need --output-dir (stdout takes one)",
                  "");
  }
  return 0;
}

int tb_cmd_report(int argc, char **argv) {
  static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                          {"output-dir", required_argument, NULL, 'd'},
                                          {"format", required_argument, NULL, 'f'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *output = NULL, *output_dir = NULL, *format_list = "md";
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
    if (opt == 'o') {
      output = optarg;
    } else if (opt == 'd') {
      output_dir = optarg;
    } else if (opt == 'f') {
      format_list = optarg;
    } else {
      return tb_cli_help_or_misuse(opt, usage);
    }
  }
  if (argc - optind != 1) {
    return misuse("give exactly one run directory", "");
  }
  bool chosen[FORMAT_COUNT] = {false};
  size_t count = 0;
  int rc = parse_formats(format_list, chosen, &count);
  if (rc == 0) {
    rc = check_destinations(count, chosen[PLOT_FORMAT], output, output_dir);
  }
  if (rc != 0) {
    return rc;
  }
  struct tb_error err = {0};
  struct tb_results_model model;
  if (tb_results_model_load_dir(argv[optind], &model, &err) != TB_OK) {
    return tb_cli_fail(&err);
  }
  rc = output_dir != NULL ? prepare_output_dir(output_dir, chosen) : 0;
  /* the plots first: the tool refuses (exit 2) before drawing when it cannot
   * (no matplotlib, nothing to plot, a file there), and then nothing is written */
  if (rc == 0 && chosen[PLOT_FORMAT]) {
    rc = run_plot(argv[optind], output_dir);
  }
  for (size_t f = 0; f < FORMAT_COUNT && rc == 0; ++f) {
    rc = chosen[f] && formats[f].build ? emit(&model, &formats[f], output, output_dir) : 0;
  }
  tb_results_model_free(&model);
  return rc;
}
