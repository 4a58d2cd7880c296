/* The readers' typed model of a results file (results/model.h): filled from
 * old (schema 1) and new (schema 2) records alike, with what a record lacks
 * typed as absent, and the replay summary recomputed from it exactly. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/replay_summary.h"
#include "report/report.h"
#include "results/load.h"
#include "results/model.h"
#include "test_support.h"

#define CORPUS TB_SOURCE_DIR "/tests/corpus/audit/"

static void load_corpus(const char *name, struct tb_results_model *m) {
  struct tb_error err = {0};
  if (tb_results_model_load_dir(name, m, &err) != TB_OK) {
    fail_msg("%s: %s", name, err.message);
  }
}

/* A schema-1 run: every case typed, none with a replay round. */
static void loads_schema_1(void **state) {
  struct tb_results_model m;
  load_corpus(CORPUS "v1-run", &m);
  assert_int_equal(m.schema_version, 1);
  assert_int_equal(m.case_count, 10);
  assert_string_equal(m.backend, "cpu");
  assert_true(isnan(m.copy_ceiling_gbps)); /* null on the CPU backend */
  const struct tb_model_case *c = &m.cases[0];
  assert_string_equal(c->id, "sum/3x5/packed/native/candidate");
  assert_string_equal(c->op, "sum");
  assert_string_equal(c->variant, "candidate");
  assert_string_equal(c->view_kind, "packed");
  assert_int_equal(c->m, 3);
  assert_int_equal(c->n, 5);
  assert_false(c->has_k);
  assert_false(c->has_round);
  assert_false(c->has_realization);
  assert_true(c->has_validation);
  assert_double_equal(c->max_abs_error, 0.0, 0.0);
  assert_double_equal(c->host_throughput.p50_ns, 194.57725694444446, 0.0);
  assert_true(c->host_throughput.count > 0);
  assert_true(isnan(c->control_throughput.p50_ns)); /* no device phase on the CPU */
  assert_false(c->control_complete);
  assert_false(c->probe.present);
  assert_null(c->error);
  assert_false(m.replay.present);
  assert_true(m.artifact_count > 0);
  assert_string_equal(m.artifacts[0].role, "executable");
  tb_results_model_free(&m);
}

/* A schema-2 replay: rounds typed, and its summary. */
static void loads_schema_2_replay(void **state) {
  struct tb_results_model m;
  load_corpus(CORPUS "v2-replay", &m);
  assert_int_equal(m.schema_version, 2);
  assert_int_equal(m.case_count, 8);
  assert_true(m.cases[0].has_round);
  assert_int_equal(m.cases[0].round, 0);
  assert_true(m.replay.present);
  assert_string_equal(m.replay.reference, "reference");
  assert_string_equal(m.replay.candidate, "candidate");
  assert_true(m.replay.case_count > 0);
  assert_non_null(m.replay.cases[0].name);
  tb_results_model_free(&m);
}

/* A stopped run: incomplete, with the reason. */
static void loads_interrupted_run(void **state) {
  struct tb_results_model m;
  load_corpus(CORPUS "v2-interrupted", &m);
  assert_true(m.incomplete);
  assert_non_null(m.error);
  assert_non_null(strstr(m.error, "interrupted by"));
  tb_results_model_free(&m);
}

/* Schema 6 stopping records of both phases, and their absence before it. */
static void stopping_records_are_typed(void **state) {
  const char *text =
      "{\"schema\": \"tilebench.results\", \"schema_version\": 6, \"run\": {}, "
      "\"provenance\": {}, \"cases\": [{\"id\": \"sum/2x3/packed/native/automatic\", "
      "\"op\": \"sum\", \"provider\": \"native\", \"valid\": true, \"m\": 2, \"n\": 3, "
      "\"host\": {\"stopping\": {\"rule\": \"noise\", \"reason\": \"timeout\", "
      "\"samples_taken\": 7, \"noise\": 0.2, \"max_noise\": 0.01, "
      "\"flags\": [\"not_converged: noise 0.2 above the bound 0.01 after 7 samples (timeout)\"]}}, "
      "\"device\": {\"throughput\": {\"stopping\": {\"rule\": \"noise\", "
      "\"reason\": \"converged\", \"samples_taken\": 4, \"noise\": 0.001, "
      "\"max_noise\": 0.01, \"flags\": []}}}}]}";
  json_t *doc = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_results_parse(text, strlen(text), "r.json", &doc, &err), TB_OK);
  struct tb_results_model m;
  assert_int_equal(tb_results_model_fill(doc, &m, &err), TB_OK);
  json_decref(doc);
  const struct tb_model_stopping *host = &m.cases[0].host_stopping;
  assert_string_equal(host->rule, "noise");
  assert_string_equal(host->reason, "timeout");
  assert_int_equal(host->taken, 7);
  assert_double_equal(host->noise, 0.2, 0.0);
  assert_double_equal(host->max_noise, 0.01, 0.0);
  assert_non_null(strstr(host->flag, "not_converged: "));
  const struct tb_model_stopping *device = &m.cases[0].device_stopping;
  assert_string_equal(device->reason, "converged");
  assert_int_equal(device->taken, 4);
  assert_null(device->flag);
  char *md = tb_report_markdown(&m, &err);
  assert_non_null(md);
  assert_non_null(strstr(md, "| host throughput | 7 | 0.2 | 0.01 | timeout | not_converged |"));
  assert_non_null(
      strstr(md, "| device throughput (eager control) | 4 | 0.001 | 0.01 | converged | none |"));
  free(md);
  tb_results_model_free(&m);
}

/* The least a record may hold: everything else is typed as absent. */
static void minimal_record_is_absent_everywhere(void **state) {
  const char *text = "{\"schema\": \"tilebench.results\", \"schema_version\": 1, \"run\": {}, "
                     "\"provenance\": {}, \"cases\": [{\"id\": \"gemm/2x3x4/packed/native/simt\", "
                     "\"op\": \"gemm\", \"provider\": \"native\", \"valid\": false, \"m\": 2, "
                     "\"n\": 3, \"k\": 4, \"round\": 1, \"realization\": \"simt\", "
                     "\"device\": {\"flags\": [\"clock change: 12 %\", 7]}}]}";
  json_t *doc = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_results_parse(text, strlen(text), "r.json", &doc, &err), TB_OK);
  struct tb_results_model m;
  assert_int_equal(tb_results_model_fill(doc, &m, &err), TB_OK);
  json_decref(doc); /* the model keeps its own reference */
  assert_int_equal(m.schema_version, 1);
  assert_null(m.tool_version);
  assert_null(m.command);
  assert_null(m.git_commit);
  assert_false(m.git_dirty);
  assert_false(m.incomplete); /* `complete` absent is not false */
  assert_int_equal(m.background[0].count, 0);
  assert_int_equal(m.artifact_count, 0);
  const struct tb_model_case *c = &m.cases[0];
  assert_string_equal(c->id, "gemm/2x3x4/packed/native/simt");
  assert_true(c->has_k);
  assert_int_equal(c->k, 4);
  assert_true(c->has_round);
  assert_int_equal(c->round, 1);
  assert_string_equal(c->realization, "simt");
  assert_null(c->variant);
  assert_null(c->backend);
  assert_null(c->view_kind);
  assert_null(c->precision);
  assert_null(c->buffer_state);
  assert_null(c->source_sha256);
  assert_false(c->has_validation);
  assert_true(isnan(c->max_abs_error));
  assert_true(isnan(c->host_throughput.p50_ns));
  assert_int_equal(c->host_throughput.count, 0);
  assert_true(isnan(c->selected_kernel_score));
  assert_double_equal(c->minimal_bytes, 0.0, 0.0);
  assert_true(c->probe.present == false);
  assert_int_equal(c->flag_count, 2);
  assert_string_equal(c->flags[0], "clock change: 12 %");
  assert_null(c->flags[1]); /* not text */
  tb_results_model_free(&m);
}

/* The replay summary, recomputed from the model of a replay's own case
 * records, is exactly the summary that replay wrote. */
static void replay_summary_reproduces_the_file(void **state) {
  struct tb_results_model m;
  load_corpus(CORPUS "v4-replay", &m); /* the summary as this build writes it */
  struct tb_replay_record summary;
  struct tb_error err = {0};
  assert_int_equal(tb_replay_summary(&m, m.replay.reference, m.replay.candidate,
                                     (unsigned)m.replay.rounds, &summary, &err),
                   TB_OK);
  json_t *again = tb_replay_record_to_json(&summary);
  const json_t *written = json_object_get(m.doc, "replay");
  if (!json_equal(again, written)) {
    char *a = json_dumps(again, JSON_SORT_KEYS), *b = json_dumps(written, JSON_SORT_KEYS);
    fail_msg("recomputed %s\nwritten %s", a, b);
  }
  assert_int_equal(summary.case_count, m.replay.case_count);
  json_decref(again);
  tb_replay_record_free(&summary);
  tb_results_model_free(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(loads_schema_1),
      cmocka_unit_test(loads_schema_2_replay),
      cmocka_unit_test(loads_interrupted_run),
      cmocka_unit_test(minimal_record_is_absent_everywhere),
      cmocka_unit_test(stopping_records_are_typed),
      cmocka_unit_test(replay_summary_reproduces_the_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
