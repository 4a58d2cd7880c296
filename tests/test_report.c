/* The report's machine-readable formats (report/rows.h, tb_report_csv,
 * tb_report_json_summary) over hand-written records: which scope a case is
 * ranked by, its figures, RFC 4180 quoting, and absent figures left absent. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/rows.h"
#include "results/load.h"
#include "results/model.h"
#include "test_support.h"

/* Three cases: gap-free graph samples beside eager ones, eager only, host
 * only; a copy ceiling of 100 GB/s. The first id holds a comma, a quote and
 * a line break, which only quoting keeps inside one CSV field. */
static const char record[] =
    "{\"schema\": \"tilebench.results\", \"schema_version\": 3,"
    " \"run\": {\"backend\": \"cuda\", \"seed\": 7, \"copy_ceiling\": {\"gbps\": 100.0}},"
    " \"provenance\": {\"git\": {\"commit\": \"abc\"}, \"gpu\": {\"available\": true,"
    "   \"devices\": [{\"name\": \"Test GPU\"}]}},"
    " \"cases\": ["
    "  {\"id\": \"softmax/a,\\\"b\\\"\\nc\", \"op\": \"softmax\", \"provider\": \"native\","
    "   \"valid\": true, \"m\": 2, \"n\": 3, \"minimal_bytes\": 1000,"
    "   \"input_view\": {\"kind\": \"packed\"}, \"variant\": \"automatic\","
    "   \"host\": {\"throughput\": {\"per_call_ns\": [900, 950, 990]}},"
    "   \"device\": {\"control_complete\": true, \"throughput\": {"
    "     \"control\": {\"per_call_ns\": [40, 50, 60]},"
    "     \"gap_free\": {\"mode\": \"graph\"},"
    "     \"batch_modes\": {\"graph\": {\"control\": {\"per_call_ns\": [20, 10, 30]}}}}}},"
    "  {\"id\": \"rmsnorm/eager\", \"op\": \"rmsnorm\", \"provider\": \"torch\","
    "   \"valid\": false, \"m\": 4, \"n\": 5, \"minimal_bytes\": 500,"
    "   \"host\": {\"throughput\": {\"per_call_ns\": [70]}},"
    "   \"device\": {\"control_complete\": true, \"throughput\": {"
    "     \"control\": {\"per_call_ns\": [5, 4, 6, 5]}}}},"
    "  {\"id\": \"gemm/host\", \"op\": \"gemm\", \"provider\": \"native\", \"valid\": true,"
    "   \"m\": 2, \"n\": 2, \"k\": 8, \"host\": {\"throughput\": {\"per_call_ns\": [8, 9, 10]}}}"
    " ]}";

static int load(void **state) {
  json_t *doc = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_results_parse(record, strlen(record), "r.json", &doc, &err), TB_OK);
  struct tb_results_model *m = malloc(sizeof *m);
  assert_int_equal(tb_results_model_fill(doc, m, &err), TB_OK);
  json_decref(doc);
  *state = m;
  return 0;
}

static int unload(void **state) {
  tb_results_model_free(*state);
  free(*state);
  return 0;
}

/* Gap-free before eager before host; the bandwidth and the copy fraction of
 * the scope ranked, and no copy fraction for a host time. */
static void ranks_by_the_best_scope(void **state) {
  const struct tb_results_model *m = *state;
  struct tb_report_row r = tb_report_row(&m->cases[0], m->copy_ceiling_gbps);
  assert_int_equal(r.scope, TB_ROW_GAP_FREE);
  assert_string_equal(r.mode, "graph");
  assert_double_equal(r.p50_ns, 20.0, 0.0);
  assert_double_equal(r.min_ns, 10.0, 0.0);
  assert_double_equal(r.max_ns, 30.0, 0.0);
  assert_int_equal(r.samples, 3);
  assert_double_equal(r.gbps, 50.0, 0.0);
  assert_double_equal(r.copy_fraction, 0.5, 0.0);
  /* robust CV: 1.4826 x median |x - 20| (10) / 20 */
  assert_double_equal(r.robust_cv, 1.4826 * 10.0 / 20.0, 1e-12);

  r = tb_report_row(&m->cases[1], m->copy_ceiling_gbps);
  assert_int_equal(r.scope, TB_ROW_EAGER);
  assert_null(r.mode);
  assert_double_equal(r.p50_ns, 5.0, 0.0);
  assert_int_equal(r.samples, 4);
  assert_double_equal(r.gbps, 100.0, 0.0);
  assert_double_equal(r.copy_fraction, 1.0, 0.0);

  r = tb_report_row(&m->cases[2], m->copy_ceiling_gbps);
  assert_int_equal(r.scope, TB_ROW_HOST);
  assert_double_equal(r.p50_ns, 9.0, 0.0);
  assert_true(isnan(r.gbps)); /* no minimal_bytes recorded */
  assert_true(isnan(r.copy_fraction));
}

/* A provider that never started has no figures at all. */
static void unavailable_provider_has_no_row_figures(void **state) {
  (void)state;
  struct tb_model_case c = {.backend = "none", .id = "x", .op = "sum", .provider = "torch"};
  double host[] = {1.0};
  c.host_throughput = (struct tb_model_scope){.p50_ns = 1.0, .per_call_ns = host, .count = 1};
  struct tb_report_row r = tb_report_row(&c, NAN);
  assert_int_equal(r.scope, TB_ROW_NONE);
  assert_null(tb_row_scope_name(r.scope));
  assert_true(isnan(r.p50_ns));
  assert_int_equal(r.samples, 0);
}

static void csv_quotes_and_leaves_absent_cells_empty(void **state) {
  struct tb_error err = {0};
  char *csv = tb_report_csv(*state, &err);
  assert_non_null(csv);
  const char *expected =
      "id,op,m,n,k,view,provider,variant,valid,scope,mode,p50_ns,min_ns,max_ns,samples,"
      "robust_cv,minimal_bytes,gbps,copy_fraction\r\n"
      "\"softmax/a,\"\"b\"\"\nc\",softmax,2,3,,packed,native,automatic,true,gap_free,graph,"
      "20,10,30,3,0.74129999999999996,1000,50,0.5\r\n"
      "rmsnorm/eager,rmsnorm,4,5,,,torch,,false,eager_gpu,,5,4,6,4,0.14826,500,100,1\r\n"
      "gemm/host,gemm,2,2,8,,native,,true,host,,9,8,10,3,0.16473333333333331,,,\r\n";
  assert_string_equal(csv, expected);
  free(csv);
}

/* The summary's rows are the CSV's, typed: absent figures are null. */
static void json_summary_types_the_rows(void **state) {
  struct tb_error err = {0};
  char *text = tb_report_json_summary(*state, &err);
  assert_non_null(text);
  json_error_t jerr;
  json_t *doc = json_loads(text, 0, &jerr);
  free(text);
  assert_non_null(doc);
  assert_string_equal(json_string_value(json_object_get(doc, "format")),
                      "tilebench.report-summary");
  const json_t *run = json_object_get(doc, "run");
  assert_string_equal(json_string_value(json_object_get(run, "device")), "Test GPU");
  assert_string_equal(json_string_value(json_object_get(run, "commit")), "abc");
  assert_int_equal(json_integer_value(json_object_get(run, "seed")), 7);
  assert_int_equal(json_integer_value(json_object_get(run, "results_schema_version")), 3);
  const json_t *cases = json_object_get(doc, "cases");
  assert_int_equal(json_array_size(cases), 3);
  const json_t *first = json_array_get(cases, 0);
  assert_string_equal(json_string_value(json_object_get(first, "id")), "softmax/a,\"b\"\nc");
  assert_true(json_is_true(json_object_get(first, "valid")));
  assert_double_equal(json_number_value(json_object_get(first, "p50_ns")), 20.0, 0.0);
  assert_true(json_is_null(json_object_get(first, "k")));
  const json_t *host = json_array_get(cases, 2);
  assert_int_equal(json_integer_value(json_object_get(host, "k")), 8);
  assert_string_equal(json_string_value(json_object_get(host, "scope")), "host");
  assert_true(json_is_null(json_object_get(host, "gbps")));
  assert_true(json_is_null(json_object_get(host, "copy_fraction")));
  json_decref(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ranks_by_the_best_scope),
      cmocka_unit_test(unavailable_provider_has_no_row_figures),
      cmocka_unit_test(csv_quotes_and_leaves_absent_cells_empty),
      cmocka_unit_test(json_summary_types_the_rows),
  };
  return cmocka_run_group_tests(tests, load, unload);
}
