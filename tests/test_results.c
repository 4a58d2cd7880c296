/* The results directory and file: never overwritten, never half-written. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/load.h"
#include "results/provider_json.h"
#include "results/results.h"
#include "test_support.h"

static size_t entries(const char *dir) {
  DIR *d = opendir(dir);
  size_t count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    count += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  }
  closedir(d);
  return count;
}

static void f_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void write_then_refuse_overwrite(void **state) {
  char *dir = make_temp_dir();
  struct tb_error err = {0};
  json_t *doc = json_pack("{s:i}", "answer", 42);
  assert_int_equal(tb_write_json_atomic(dir, "r.json", doc, &err), TB_OK);
  json_t *other = json_pack("{s:i}", "answer", 7);
  assert_int_not_equal(tb_write_json_atomic(dir, "r.json", other, &err), TB_OK);
  assert_non_null(strstr(err.message, "never overwritten"));
  assert_int_equal(entries(dir), 1); /* no temporary file left behind */
  char path[512];
  snprintf(path, sizeof path, "%s/r.json", dir);
  json_error_t jerr;
  json_t *back = json_load_file(path, 0, &jerr);
  assert_int_equal(json_integer_value(json_object_get(back, "answer")), 42);
  json_decref(back);
  json_decref(doc);
  json_decref(other);
  unlink(path);
  rmdir(dir);
  free(dir);
}

static void out_dir_claim_rules(void **state) {
  char *dir = make_temp_dir();
  struct tb_error err = {0};
  assert_int_equal(tb_claim_out_dir(dir, &err), TB_OK); /* empty: claimed */
  tb_error_clear(&err);
  /* a second run into the claimed directory is refused at once, and told why */
  assert_int_equal(tb_claim_out_dir(dir, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "claimed by a tilebench run in progress"));
  tb_release_out_dir(dir);
  assert_int_equal(entries(dir), 0);
  char nested[512], file[512], link_path[512];
  snprintf(nested, sizeof nested, "%s/a/b/c", dir);
  tb_error_clear(&err);
  assert_int_equal(tb_claim_out_dir(nested, &err), TB_OK); /* created with parents */
  tb_error_clear(&err);
  assert_int_equal(tb_claim_out_dir(dir, &err), TB_ERR_USAGE); /* not empty now */
  snprintf(file, sizeof file, "%s/a/b/c/f", dir);
  FILE *f = fopen(file, "w");
  fclose(f);
  tb_error_clear(&err);
  assert_int_equal(tb_claim_out_dir(file, &err), TB_ERR_USAGE); /* a file, not a dir */
  tb_error_clear(&err);
  assert_int_equal(tb_claim_out_dir("", &err), TB_ERR_USAGE); /* no name */
  snprintf(link_path, sizeof link_path, "%s/dangling", dir);
  assert_int_equal(symlink("/nonexistent/tilebench", link_path), 0);
  tb_error_clear(&err);
  assert_int_equal(tb_claim_out_dir(link_path, &err), TB_ERR_INPUT);
  assert_non_null(strstr(err.message, "not a usable directory"));
  char cleanup[600];
  snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
  assert_int_equal(system(cleanup), 0);
  free(dir);
}

/* A killed run's claim and partial file are named in the refusal. */
static void leftovers_are_named(void **state) {
  char *dir = make_temp_dir();
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, TB_CLAIM_FILE);
  FILE *f = fopen(path, "w");
  fputs("pid 999999999\n", f); /* no such process */
  fclose(f);
  snprintf(path, sizeof path, "%s/.results.json.partial-42", dir);
  f = fopen(path, "w");
  fclose(f);
  struct tb_error err = {0};
  assert_int_equal(tb_claim_out_dir(dir, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "no longer running"));
  assert_non_null(strstr(err.message, ".results.json.partial-42"));
  char cleanup[600];
  snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
  assert_int_equal(system(cleanup), 0);
  free(dir);
}

static void expect_refused(const char *text, const char *message) {
  json_t *doc = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_results_parse(text, strlen(text), "r.json", &doc, &err), TB_ERR_INPUT);
  assert_null(doc);
  if (strstr(err.message, message) == NULL) {
    fail_msg("'%s' -> '%s', expected '%s'", text, err.message, message);
  }
}

#define HEAD "{\"schema\": \"tilebench.results\", \"schema_version\": 2, \"run\": {}, "

/* Every field a reader relies on is checked when the file is loaded. */
static void loader_checks_structure(void **state) {
  expect_refused("[1, 2]", "not a tilebench results file");
  expect_refused("{\"schema\": \"tilebench.results\", \"schema_version\": 99}", "version");
  expect_refused(HEAD "\"provenance\": {}}", "'cases' is not an array");
  expect_refused(HEAD "\"provenance\": {}, \"cases\": [{\"op\": \"sum\"}]}", "case 0: 'id'");
  expect_refused(HEAD "\"provenance\": {}, \"cases\": [{\"id\": null}]}", "case 0: 'id'");
  expect_refused(HEAD "\"provenance\": {\"artifacts\": [{\"path\": \"x\"}]}, \"cases\": []}",
                 "provenance.artifacts[0]");
  expect_refused(HEAD "\"provenance\": {}, \"cases\": [{\"id\": \"a\", \"op\": \"sum\", "
                      "\"provider\": \"native\", \"valid\": true, \"m\": -1, \"n\": 2}]}",
                 "whole number");
  const char *good = HEAD "\"provenance\": {}, \"cases\": [{\"id\": \"a\", \"op\": \"sum\", "
                          "\"provider\": \"native\", \"valid\": true, \"m\": 1, \"n\": 2}]}";
  json_t *doc = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_results_parse(good, strlen(good), "r.json", &doc, &err), TB_OK);
  assert_string_equal(tb_json_str(json_array_get(json_object_get(doc, "cases"), 0), "id", "?"),
                      "a");
  assert_string_equal(tb_json_str(doc, "absent", "fallback"), "fallback");
  json_decref(doc);
}

/* A FIFO is refused without blocking; a .gz is read decompressed. */
static void loader_reads_files_safely(void **state) {
  char *dir = make_temp_dir();
  char path[600], command[1400];
  snprintf(path, sizeof path, "%s/results.json", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  json_t *doc = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_results_load(path, &doc, NULL, &err), TB_ERR_INPUT);
  assert_non_null(strstr(err.message, "not a regular file"));
  unlink(path);
  f_write(path, HEAD "\"provenance\": {}, \"cases\": []}");
  snprintf(command, sizeof command, "gzip -n '%s'", path);
  assert_int_equal(system(command), 0);
  tb_error_clear(&err);
  assert_int_equal(tb_results_load_dir(dir, &doc, &err), TB_OK);
  json_decref(doc);
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  assert_int_equal(system(command), 0);
  free(dir);
}

static void non_finite_numbers_become_null(void **state) {
  json_t *v = tb_json_number(1.0 / 0.0);
  assert_true(json_is_null(v));
  json_decref(v);
  v = tb_json_number(2.5);
  assert_true(json_is_real(v));
  json_decref(v);
}

/* A case record as measure/ fills it: a gemm on the native CUDA provider. */
static struct tb_case_result native_cuda_gemm(void) {
  struct tb_case_result r;
  memset(&r, 0, sizeof r);
  r.c = (struct tb_case){.op = tb_op_info(TB_OP_GEMM),
                         .shape = {64, 64, 64},
                         .view = tb_view_for(TB_VIEW_PACKED, 64),
                         .provider = "native",
                         .realization = TB_REALIZATION_SIMT};
  snprintf(r.id, sizeof r.id, "gemm/64x64x64/packed/native/simt");
  r.backend = "cuda";
  r.output_allocation = "preallocated_out";
  struct tb_error err = {0};
  struct tb_plan_target target = {.plans_gemm = true, .gemm = tb_gemm_target_h200()};
  assert_int_equal(tb_plan_case(&r.c, &target, &r.plan, &err), TB_OK);
  r.provider_details.kind = TB_DETAILS_CUDA_NATIVE;
  struct tb_cuda_native_details *d = &r.provider_details.as.cuda;
  d->kernel_count = 1;
  snprintf(d->kernels[0].name, sizeof d->kernels[0].name, "tb_gemm");
  d->kernels[0].registers = 128;
  d->contract.min_cc_major = 8;
  snprintf(d->buffers.state, sizeof d->buffers.state, "cold");
  snprintf(d->device, sizeof d->device, "NVIDIA H200");
  return r;
}

/* One writer for every plan: the gemm plan is the execution plan, and
 * schema 2's copy inside the native CUDA details is the same record. */
static void plans_and_details_from_the_record(void **state) {
  struct tb_case_result r = native_cuda_gemm();
  json_t *j = tb_case_result_to_json(&r);
  json_t *plans = json_object_get(j, "execution_plans");
  assert_int_equal(json_array_size(plans), 1);
  assert_string_equal(json_string_value(json_object_get(json_array_get(plans, 0), "kind")), "gemm");
  json_t *details = json_object_get(j, "provider_details");
  assert_true(json_equal(json_object_get(details, "gemm_plan"), json_array_get(plans, 0)));
  json_t *kernel = json_array_get(json_object_get(details, "kernels"), 0);
  assert_string_equal(json_string_value(json_object_get(kernel, "name")), "tb_gemm");
  assert_int_equal(json_integer_value(json_object_get(kernel, "registers")), 128);
  json_t *contract = json_object_get(details, "capability_contract");
  assert_string_equal(json_string_value(json_object_get(contract, "min_compute_capability")),
                      "8.0");
  assert_true(json_is_null(json_object_get(details, "compile"))); /* nothing compiled */
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(details, "buffers"), "state")), "cold");
  json_decref(j);

  /* no plan, no details: [] and null, never a plan made up by the writer */
  r.plan.kind = TB_PLAN_NONE;
  r.provider_details.kind = TB_DETAILS_NONE;
  r.c.op = tb_op_info(TB_OP_ADD);
  r.c.shape = (struct tb_shape){4, 8, 0};
  j = tb_case_result_to_json(&r);
  assert_int_equal(json_array_size(json_object_get(j, "execution_plans")), 0);
  assert_true(json_is_null(json_object_get(j, "provider_details")));
  json_decref(j);
  tb_case_result_free(&r);
}

/* A worker's fact keeps the shape it came in: left out, null or a value. */
static void torch_details_keep_the_workers_shape(void **state) {
  struct tb_provider_details d;
  memset(&d, 0, sizeof d);
  d.kind = TB_DETAILS_TORCH;
  d.as.torch.has_worker = true;
  d.as.torch.worker.torch = tb_text_fact_of("2.5.0");
  d.as.torch.worker.cudnn.state = TB_FACT_NULL;
  d.as.torch.implementation = tb_text_fact_of("torch.sum(dim=-1, out=)");
  d.as.torch.compile_ms.state = TB_FACT_NULL;
  json_t *j = tb_provider_details_to_json(&d);
  json_t *worker = json_object_get(j, "worker");
  assert_string_equal(json_string_value(json_object_get(worker, "torch")), "2.5.0");
  assert_true(json_is_null(json_object_get(worker, "cudnn")));
  assert_null(json_object_get(worker, "threads")); /* never sent: left out */
  assert_true(json_is_null(json_object_get(j, "buffers")));
  assert_true(json_is_null(json_object_get(j, "compile_ms")));
  assert_true(json_is_false(json_object_get(j, "torch_compile")));
  json_decref(j);
  tb_provider_details_free(&d);
  assert_int_equal(d.kind, TB_DETAILS_NONE);
}

/* A CUDA source kernel's details add how it was compiled and launched; a
 * library's stay as they were (no "source"). */
static void user_source_details_record_compile_and_launch(void **state) {
  struct tb_provider_details d;
  memset(&d, 0, sizeof d);
  d.kind = TB_DETAILS_USER;
  d.as.user.abi_version = 1;
  json_t *j = tb_provider_details_to_json(&d);
  assert_null(json_object_get(j, "source"));
  json_decref(j);
  d.as.user.from_source = true;
  snprintf(d.as.user.launch, sizeof d.as.user.launch, "grid=m,block=256");
  snprintf(d.as.user.compile.options, sizeof d.as.user.compile.options, "--gpu-architecture=sm_90");
  snprintf(d.as.user.compile_log, sizeof d.as.user.compile_log, "ptxas info: Used 20 registers");
  d.as.user.grid[0] = 4096, d.as.user.grid[1] = d.as.user.grid[2] = 1;
  d.as.user.block[0] = 256, d.as.user.block[1] = d.as.user.block[2] = 1;
  d.as.user.dynamic_shared_bytes = 128;
  j = tb_provider_details_to_json(&d);
  json_t *source = json_object_get(j, "source");
  assert_non_null(source);
  assert_string_equal(json_string_value(json_object_get(source, "launch")), "grid=m,block=256");
  assert_int_equal(json_integer_value(json_array_get(json_object_get(source, "grid"), 0)), 4096);
  assert_int_equal(json_integer_value(json_array_get(json_object_get(source, "block"), 0)), 256);
  assert_int_equal(json_integer_value(json_object_get(source, "dynamic_shared_bytes")), 128);
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(source, "compile"), "options")),
      "--gpu-architecture=sm_90");
  assert_non_null(strstr(json_string_value(json_object_get(source, "compile_log")), "registers"));
  json_decref(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(write_then_refuse_overwrite),
      cmocka_unit_test(out_dir_claim_rules),
      cmocka_unit_test(leftovers_are_named),
      cmocka_unit_test(loader_checks_structure),
      cmocka_unit_test(loader_reads_files_safely),
      cmocka_unit_test(non_finite_numbers_become_null),
      cmocka_unit_test(plans_and_details_from_the_record),
      cmocka_unit_test(torch_details_keep_the_workers_shape),
      cmocka_unit_test(user_source_details_record_compile_and_launch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
