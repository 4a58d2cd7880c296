/* Fuzz target: results files, the outside input of `report`, `compare`,
 * `audit` and `replay --frozen`. The bytes go through tb_results_parse
 * (gzip-compressed ones through tb_results_load and a file, as the CLI
 * reads committed evidence); a document it accepts must then make every
 * reader of it work: both reports and compare against itself. */
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>

#include "fuzz_common.h"

#include "cli/commands.h"
#include "provenance/hash.h"
#include "report/report.h"
#include "results/load.h"

static char gz_dir[PATH_MAX], gz_path[PATH_MAX + 32];

static void remove_gz_dir(void) {
  unlink(gz_path);
  rmdir(gz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  tb_fuzz_setup(); /* compare prints its table */
  const char *tmp = getenv("TMPDIR");
  snprintf(gz_dir, sizeof gz_dir, "%s/tb-fuzz-results-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (mkdtemp(gz_dir) == NULL) {
    abort();
  }
  snprintf(gz_path, sizeof gz_path, "%s/results.json.gz", gz_dir);
  atexit(remove_gz_dir);
  return 0;
}

/* What load.h promises every reader after a successful load. */
static void check_loaded(const json_t *doc) {
  TB_FUZZ_CHECK(json_is_object(doc), "not an object");
  TB_FUZZ_CHECK(json_is_object(json_object_get(doc, "run")) &&
                    json_is_object(json_object_get(doc, "provenance")),
                "run or provenance");
  const json_t *cases = json_object_get(doc, "cases");
  TB_FUZZ_CHECK(json_is_array(cases), "cases");
  size_t i;
  const json_t *c;
  json_array_foreach(cases, i, c) {
    TB_FUZZ_CHECK(json_is_string(json_object_get(c, "id")) &&
                      json_is_string(json_object_get(c, "op")) &&
                      json_is_string(json_object_get(c, "provider")) &&
                      json_is_boolean(json_object_get(c, "valid")),
                  "case %zu", i);
  }
}

/* Every reader of a loaded document; leaks count (LeakSanitizer). */
static void read_document(const json_t *doc) {
  check_loaded(doc);
  struct tb_error err = {0};
  struct tb_results_model model;
  TB_FUZZ_CHECK(tb_results_model_fill(doc, &model, &err) == TB_OK, "no model: %s", err.message);
  char *markdown = tb_report_markdown(&model, &err);
  TB_FUZZ_CHECK(markdown != NULL, "no report: %s", err.message);
  /* `tilebench report DIR` must reproduce what `run` wrote: the report is
   * a function of the document alone. */
  char *again = tb_report_markdown(&model, &err);
  TB_FUZZ_CHECK(again != NULL && strcmp(markdown, again) == 0,
                "two reports of one document differ");
  char *table = tb_report_terminal_table(&model, &err);
  TB_FUZZ_CHECK(table != NULL, "no table: %s", err.message);
  /* Against itself no run differs and no case can be SLOWER (the interval
   * of a sample set against itself is symmetric about 1): exit 0, or 2
   * when no case has samples to compare. */
  struct tb_compare_options options = {.fail_on_regression = true, .decide_host = true};
  int rc = tb_compare_models(&model, &model, &options);
  TB_FUZZ_CHECK(rc == 0 || rc == 2, "compare of a document with itself exited %d", rc);
  free(markdown);
  free(again);
  free(table);
  tb_results_model_free(&model);
}

/* The CLI's path for compressed files: bytes to a file, tb_results_load. */
static enum tb_status load_gz(const uint8_t *data, size_t size, json_t **doc,
                              struct tb_error *err) {
  FILE *f = fopen(gz_path, "wb");
  if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
    abort(); /* the scratch directory itself failed: not a finding */
  }
  char sha256[TB_SHA256_HEX_LEN] = "";
  enum tb_status st = tb_results_load(gz_path, doc, sha256, err);
  TB_FUZZ_CHECK(st != TB_OK || strlen(sha256) == TB_SHA256_HEX_LEN - 1, "no digest of the bytes");
  return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *doc = NULL;
  struct tb_error err = {0};
  bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  enum tb_status st = gzip ? load_gz(data, size, &doc, &err)
                           : tb_results_parse((const char *)data, size, "fuzz.json", &doc, &err);
  if (st != TB_OK) {
    TB_FUZZ_CHECK(doc == NULL, "a refused document was kept");
    TB_FUZZ_CHECK(err.status == st && err.message[0] != '\0', "a refusal without its message");
    TB_FUZZ_CHECK(st == TB_ERR_INPUT || (gzip && st == TB_ERR_SYSTEM), "refused with status %d",
                  (int)st);
    return 0;
  }
  TB_FUZZ_CHECK(doc != NULL, "accepted without a document");
  read_document(doc);
  json_decref(doc);
  return 0;
}
