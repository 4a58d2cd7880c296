/* The tilebench binary as a user meets it: exit codes, messages, and an
 * end-to-end CPU run whose results.json parses back. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/devices.h"
#include "test_support.h"

#ifndef TB_BINARY
#error "TB_BINARY must name the tilebench executable"
#endif

static char out[1 << 16], errbuf[1 << 14];

#define RUN(...)                                                                                   \
  run_program((const char *const[]){TB_BINARY, __VA_ARGS__, NULL}, out, sizeof out, errbuf,        \
              sizeof errbuf)

static void expect_usage_error(int rc, const char *fragment) {
  if (rc != 2 || strstr(errbuf, fragment) == NULL) {
    print_error("rc=%d stderr=%s\n", rc, errbuf);
  }
  assert_int_equal(rc, 2);
  assert_non_null(strstr(errbuf, fragment));
}

static void bad_shapes_exit_2(void **state) {
  const char *bad[] = {"0x5", "-1x3", "axb", "5", "99999999999x99999999999"};
  for (int i = 0; i < 5; ++i) {
    expect_usage_error(RUN("run", "--shapes", bad[i], "--out", "/tmp/tb-never-created"), bad[i]);
  }
  assert_int_equal(access("/tmp/tb-never-created", F_OK), -1); /* nothing was created */
}

static void bad_flags_exit_2(void **state) {
  expect_usage_error(RUN("run", "--ops", "softmax,cube"), "unknown operation 'cube'");
  expect_usage_error(RUN("run", "--frobnicate"), "unknown or incomplete option");
  expect_usage_error(RUN("run", "--samples", "0"), "--samples");
  expect_usage_error(RUN("run", "--sample-ms", "-1"), "--sample-ms");
  expect_usage_error(RUN("run", "--profile", "fast", "--out", "/tmp/tb-never-created"),
                     "unknown planner profile 'fast'");
  expect_usage_error(RUN("run", "--input-views", "diagonal"), "unknown input view");
  expect_usage_error(RUN("run", "--providers", "magic"), "unknown provider 'magic'");
  expect_usage_error(RUN("run", "--backend", "fpga"), "unknown backend");
  expect_usage_error(RUN("run", "--ops", "sum,sum"), "twice");
  expect_usage_error(RUN("run", "--providers", "native,native"),
                     "--providers names 'native' twice");
  expect_usage_error(RUN("run", "--ops", "softmax", "--shapes", "3x4x5"), "takes shape 3x4xK");
  expect_usage_error(RUN("run", "--ops", "gemm", "--matrix-realization", "fp8"),
                     "unknown matrix realization 'fp8'");
  expect_usage_error(RUN("run", "--ops", "gemm", "--matrix-realization", "simt,simt"), "twice");
  expect_usage_error(RUN("run", "--ops", "gemm", "--gemm-block", "128,64"), "M,N,K");
  expect_usage_error(RUN("run", "--ops", "gemm", "--matrix-realization", "simt,tensor",
                         "--gemm-block", "128,64,8"),
                     "--gemm-block for simt");
  expect_usage_error(RUN("frobnicate"), "unknown command");
  expect_usage_error(RUN("report"), "exactly one run directory");
}

static void too_large_for_memory_exit_2(void **state) {
  expect_usage_error(RUN("run", "--ops", "softmax", "--shapes", "2147483648x2147483648"),
                     "GB of host memory");
}

static void help_exits_0(void **state) {
  assert_int_equal(RUN("run", "--help"), 0);
  assert_non_null(strstr(out, "--shapes"));
  assert_int_equal(RUN("--help"), 0);
  assert_int_equal(RUN("env", "--help"), 0);
}

static void non_empty_out_refused(void **state) {
  char *dir = make_temp_dir();
  char marker[512];
  snprintf(marker, sizeof marker, "%s/keep.txt", dir);
  FILE *f = fopen(marker, "w");
  fputs("precious", f);
  fclose(f);
  expect_usage_error(RUN("run", "--ops", "sum", "--shapes", "2x2", "--out", dir), "not empty");
  f = fopen(marker, "r");
  char text[32] = {0};
  fgets(text, sizeof text, f);
  fclose(f);
  assert_string_equal(text, "precious");
  unlink(marker);
  rmdir(dir);
  free(dir);
}

static json_t *load_results(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/results.json", dir);
  json_error_t jerr;
  json_t *doc = json_load_file(path, 0, &jerr);
  if (doc == NULL) {
    print_error("%s: %s\n", path, jerr.text);
  }
  assert_non_null(doc);
  return doc;
}

static void assert_phase_has_samples(json_t *phase, size_t samples) {
  assert_non_null(phase);
  assert_int_equal(json_array_size(json_object_get(phase, "elapsed_ns")), samples);
  assert_int_equal(json_array_size(json_object_get(phase, "per_call_ns")), samples);
  assert_true(json_integer_value(json_object_get(phase, "calls_per_sample")) >= 1);
}

static void end_to_end_cpu_run(void **state) {
  char *base = make_temp_dir();
  char dir[512];
  snprintf(dir, sizeof dir, "%s/run", base); /* a new directory is created */
  int rc = RUN("run", "--shapes", "3x5,1x1,2x9", "--samples", "4", "--warmup-ms", "1",
               "--sample-ms", "1", "--out", dir, "--seed", "5");
  if (rc != 0) {
    print_error("rc=%d stderr=%s\n", rc, errbuf);
  }
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "36 of 36 cases valid"));
  json_t *doc = load_results(dir);
  assert_string_equal(json_string_value(json_object_get(doc, "schema")), "tilebench.results");
  json_t *cases = json_object_get(doc, "cases");
  assert_int_equal(json_array_size(cases), 6 * 3 * 2); /* ops x shapes x views */
  size_t i;
  json_t *c;
  json_array_foreach(cases, i, c) {
    assert_true(json_is_true(json_object_get(c, "valid")));
    json_t *host = json_object_get(c, "host");
    assert_phase_has_samples(json_object_get(host, "throughput"), 4);
    assert_phase_has_samples(json_object_get(host, "latency"), 4);
    assert_true(json_is_null(json_object_get(c, "device"))); /* never faked on the CPU */
    assert_string_equal(json_string_value(json_object_get(c, "output_allocation")),
                        "preallocated_out");
  }
  json_t *prov = json_object_get(doc, "provenance");
  json_t *artifacts = json_object_get(prov, "artifacts");
  assert_true(json_array_size(artifacts) >= 1);
  assert_int_equal(
      strlen(json_string_value(json_object_get(json_array_get(artifacts, 0), "sha256"))), 64);
  assert_non_null(json_object_get(prov, "busy_processes_start"));
  assert_non_null(json_object_get(prov, "busy_processes_end"));
  assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "run"), "seed")), 5);
  json_decref(doc);

  /* report regenerates the same Markdown from results.json alone */
  char md_path[600];
  snprintf(md_path, sizeof md_path, "%s/results.md", dir);
  FILE *f = fopen(md_path, "r");
  assert_non_null(f);
  static char written[1 << 16];
  size_t len = fread(written, 1, sizeof written - 1, f);
  written[len] = '\0';
  fclose(f);
  assert_int_equal(RUN("report", dir), 0);
  assert_string_equal(out, written);
  assert_non_null(strstr(written, "softmax/2x9/strided/native"));
  /* report --output writes a new file once, never over an existing one */
  char report_path[700];
  snprintf(report_path, sizeof report_path, "%s/copy.md", base);
  assert_int_equal(RUN("report", dir, "--output", report_path), 0);
  expect_usage_error(RUN("report", dir, "--output", report_path), "never overwritten");
  /* a second run into the same directory is refused */
  expect_usage_error(RUN("run", "--ops", "sum", "--shapes", "2x2", "--out", dir), "not empty");
  char cleanup[700];
  snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", base);
  assert_int_equal(system(cleanup), 0);
  free(base);
}

/* Each native row reduction runs once per variant and records its plan.
 * sum over n = 5: 2 groups (4 + 1), so every width has slots 4 (r = 2),
 * rounds 12; (s 1, p 8) scores 12 + 2 + 2 = 16, s >= 2 score >= 12 + 4 + 16:
 * the automatic pick is index 7. */
/* gemm on the CPU: one case per realization and provider, the TF32 one at
 * its own tolerance and labelled; cublas, which needs the GPU, is recorded
 * invalid with the reason while the run goes on. */
static void gemm_realizations_on_the_cpu(void **state) {
  char *base = make_temp_dir();
  char dir[512];
  snprintf(dir, sizeof dir, "%s/run", base);
  int rc =
      RUN("run", "--backend", "cpu", "--ops", "gemm", "--shapes", "5x7x300", "--input-views",
          "packed", "--matrix-realization", "simt,tensor,tensor-3xtf32", "--providers",
          "native,cublas", "--samples", "2", "--warmup-ms", "1", "--sample-ms", "1", "--out", dir);
  assert_int_equal(rc, 1); /* the cublas cases are invalid */
  json_t *doc = load_results(dir);
  json_t *cases = json_object_get(doc, "cases");
  assert_int_equal(json_array_size(cases), 6);
  size_t i;
  json_t *c;
  double simt_error = -1, tf32_error = -1;
  json_array_foreach(cases, i, c) {
    const char *id = json_string_value(json_object_get(c, "id"));
    const char *realization = json_string_value(json_object_get(c, "realization"));
    assert_non_null(strstr(id, realization));
    json_t *v = json_object_get(c, "validation");
    if (strstr(id, "/cublas/") != NULL) {
      assert_false(json_is_true(json_object_get(c, "valid")));
      assert_non_null(strstr(json_string_value(json_object_get(c, "error")), "CUDA backend"));
      continue;
    }
    assert_true(json_is_true(json_object_get(c, "valid")));
    double atol = json_real_value(json_object_get(v, "atol"));
    double error = json_real_value(json_object_get(v, "max_abs_error"));
    if (strcmp(realization, "tensor") == 0) {
      assert_string_equal(json_string_value(json_object_get(c, "precision")), "tf32");
      assert_true(atol > 4e-2 * 17.3 && atol < 4e-2 * 17.4); /* 4e-2 * sqrt(300) */
      tf32_error = error;
    } else {
      assert_true(atol > 8e-5 * 17.3 && atol < 8e-5 * 17.4);
      simt_error = strcmp(realization, "simt") == 0 ? error : simt_error;
    }
  }
  /* rounding the operands to TF32 shows: far above fp32's error */
  assert_true(tf32_error > 10 * simt_error && simt_error >= 0);
  json_decref(doc);
  char cleanup[700];
  snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", base);
  assert_int_equal(system(cleanup), 0);
  free(base);
}

static void variants_and_plan_records(void **state) {
  char *base = make_temp_dir();
  char dir[512];
  snprintf(dir, sizeof dir, "%s/run", base);
  int rc = RUN("run", "--shapes", "3x5", "--input-views", "packed", "--variants",
               "reference,candidate,automatic", "--samples", "2", "--warmup-ms", "1", "--sample-ms",
               "1", "--out", dir);
  assert_int_equal(rc, 0);
  json_t *doc = load_results(dir);
  json_t *cases = json_object_get(doc, "cases");
  assert_int_equal(json_array_size(cases),
                   4 * 3 + 2); /* 4 reductions x 3 variants + 2 elementwise */
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(doc, "run"), "planner_profile")),
      "calibrated-2");
  size_t i, planned = 0;
  json_t *c;
  json_array_foreach(cases, i, c) {
    json_t *plans = json_object_get(c, "execution_plans");
    assert_int_equal(json_array_size(plans), 1);
    json_t *plan = json_array_get(plans, 0);
    const char *kind = json_string_value(json_object_get(plan, "kind"));
    if (strcmp(kind, "row_reduction") != 0) {
      assert_string_equal(kind, "elementwise");
      assert_true(json_is_null(json_object_get(c, "variant")));
      continue;
    }
    planned++;
    assert_string_equal(json_string_value(json_object_get(plan, "variant")),
                        json_string_value(json_object_get(c, "variant")));
    assert_int_equal(json_array_size(json_object_get(plan, "candidates")), 39);
    /* the default profile (no candidate of whole groups at n = 5, one wave: calibrated's
     * pick); sum 3x5 (s 1, p 8): slots 4, rounds 12, 12 + 2 + 32/8 = 18, the best candidate,
     * recorded; what runs (n <= 32) is subwarp rows: 1 lane a row
     * caching its 5 elements, 256 rows a block, 1 block. The fixed variants keep (s, p). */
    assert_string_equal(json_string_value(json_object_get(plan, "profile")), "calibrated-2");
    const char *id = json_string_value(json_object_get(c, "id"));
    const char *mapping = json_string_value(json_object_get(plan, "mapping"));
    if (strcmp(id, "sum/3x5/packed/native/automatic") == 0) {
      assert_int_equal(json_integer_value(json_object_get(plan, "best_register_candidate")), 7);
      json_t *best = json_array_get(json_object_get(plan, "candidates"), 7);
      assert_int_equal(json_integer_value(json_object_get(best, "slots")), 4);
      assert_true(json_real_value(json_object_get(best, "kernel_score")) == 18.0);
      assert_string_equal(mapping, "subwarp_rows");
      assert_true(json_is_null(json_object_get(plan, "chosen_candidate")));
      json_t *subwarp = json_object_get(plan, "subwarp");
      assert_int_equal(json_integer_value(json_object_get(subwarp, "lanes")), 1);
      assert_int_equal(json_integer_value(json_object_get(subwarp, "slots")), 5);
      assert_int_equal(json_integer_value(json_object_get(subwarp, "rows_per_block")), 256);
      assert_int_equal(json_integer_value(json_object_get(subwarp, "thread_blocks")), 1);
    } else if (strstr(id, "/automatic") == NULL) {
      assert_string_equal(mapping, "register_rows");
      assert_true(json_is_null(json_object_get(plan, "subwarp")));
    }
  }
  assert_int_equal(planned, 12);
  json_decref(doc);
  char cleanup[700];
  snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", base);
  assert_int_equal(system(cleanup), 0);
  free(base);
}

/* softmax 64x258: the profiles pick different plans (docs/planner.md), and a
 * run records the one it was asked for in the run and in every plan
 * (calibrated-2's preferences hold nowhere at n = 258 in one wave). */
static void profile_of_a_run(void **state) {
  const char *profiles[] = {"analytic", "calibrated", "calibrated-2"};
  const long chosen[] = {9, 7, 7}; /* (s 3, p 1) and (s 1, p 8) twice */
  for (int i = 0; i < 3; ++i) {
    char *base = make_temp_dir();
    char dir[512];
    snprintf(dir, sizeof dir, "%s/run", base);
    assert_int_equal(RUN("run", "--ops", "softmax", "--shapes", "64x258", "--input-views", "packed",
                         "--profile", profiles[i], "--samples", "2", "--warmup-ms", "1",
                         "--sample-ms", "1", "--out", dir),
                     0);
    json_t *doc = load_results(dir);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "run"), "planner_profile")),
        profiles[i]);
    json_t *plan = json_array_get(
        json_object_get(json_array_get(json_object_get(doc, "cases"), 0), "execution_plans"), 0);
    assert_string_equal(json_string_value(json_object_get(plan, "profile")), profiles[i]);
    assert_int_equal(json_integer_value(json_object_get(plan, "chosen_candidate")), chosen[i]);
    json_decref(doc);
    char cleanup[700];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", base);
    assert_int_equal(system(cleanup), 0);
    free(base);
  }
}

/* `tilebench plan --json` of a gemm shape under a realization, parsed. */
static json_t *plan_gemm_json(const char *shape, const char *realization) {
  assert_int_equal(
      RUN("plan", "--op", "gemm", "--shape", shape, "--matrix-realization", realization, "--json"),
      0);
  json_error_t jerr;
  json_t *plan = json_loads(out, 0, &jerr);
  assert_non_null(plan);
  return plan;
}

static void plan_command(void **state) {
  assert_int_equal(RUN("plan", "--op", "softmax", "--shape", "129x3000"), 0);
  assert_non_null(strstr(out, "<= chosen"));
  assert_non_null(strstr(out, "profile calibrated"));
  assert_non_null(strstr(out, "rule: first candidate with the least kernel score"));
  /* n = 257: the profiles part (docs/planner.md); analytic packs one 3-warp row per block */
  assert_int_equal(RUN("plan", "--op", "softmax", "--shape", "16384x257", "--json"), 0);
  json_t *calibrated = json_loads(out, 0, NULL);
  assert_int_equal(json_integer_value(json_object_get(calibrated, "chosen_candidate")), 7);
  json_decref(calibrated);
  assert_int_equal(
      RUN("plan", "--op", "softmax", "--shape", "16384x257", "--profile", "analytic", "--json"), 0);
  json_t *analytic = json_loads(out, 0, NULL);
  assert_int_equal(json_integer_value(json_object_get(analytic, "chosen_candidate")), 9);
  assert_string_equal(json_string_value(json_object_get(analytic, "profile")), "analytic");
  json_decref(analytic);
  expect_usage_error(RUN("plan", "--op", "softmax", "--shape", "4x4", "--profile", "fast"),
                     "unknown planner profile 'fast'");
  assert_int_equal(RUN("plan", "--op", "softmax", "--shape", "129x3000", "--json"), 0);
  json_error_t jerr;
  json_t *plan = json_loads(out, 0, &jerr);
  assert_non_null(plan);
  assert_int_equal(json_integer_value(json_object_get(plan, "chosen_candidate")), 18);
  json_decref(plan);
  assert_int_equal(RUN("plan", "--op", "layernorm", "--shape", "4x1000000"), 0);
  assert_non_null(strstr(out, "split_row"));
  /* the H200's limits: what run plans there, offline (one row of 10^6 on every SM) */
  assert_int_equal(
      RUN("plan", "--op", "softmax", "--shape", "1x1000000", "--device-limits", "h200", "--json"),
      0);
  json_t *persistent = json_loads(out, 0, NULL);
  assert_string_equal(json_string_value(json_object_get(persistent, "mapping")), "persistent_row");
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(persistent, "device_limits"), "source")),
      "H200 reference");
  json_decref(persistent);
  assert_int_equal(
      RUN("plan", "--op", "softmax", "--shape", "1x1000000", "--device-limits", "default"), 0);
  assert_non_null(strstr(out, "mapping: split_row"));
  expect_usage_error(RUN("plan", "--op", "softmax", "--shape", "4x4", "--device-limits", "h100"),
                     "unknown device limits 'h100'");
  expect_usage_error(RUN("plan", "--op", "gemm", "--shape", "64x64x64", "--device-limits", "h200"),
                     "--device-limits is for row reductions");
  /* very short rows: 4 lanes a row (2 * 8 < 17 <= 4 * 8), 8 rows a warp, 64 a block */
  assert_int_equal(RUN("plan", "--op", "softmax", "--shape", "65536x17"), 0);
  assert_non_null(strstr(out, "mapping: subwarp_rows"));
  assert_non_null(strstr(out, "lanes/row 4 (2 shuffle levels a reduction), slots 5, rows/warp 8"));
  assert_null(strstr(out, "<= chosen"));
  assert_int_equal(RUN("plan", "--op", "rmsnorm", "--shape", "65536x17", "--json"), 0);
  json_t *short_rows = json_loads(out, 0, NULL);
  json_t *subwarp = json_object_get(short_rows, "subwarp");
  assert_int_equal(json_integer_value(json_object_get(subwarp, "lanes")), 4);
  assert_int_equal(json_integer_value(json_object_get(subwarp, "rows_per_block")), 64);
  assert_int_equal(json_integer_value(json_object_get(subwarp, "thread_blocks")), 1024);
  assert_true(json_is_null(json_object_get(short_rows, "stream")));
  json_decref(short_rows);
  expect_usage_error(RUN("plan", "--op", "add", "--shape", "4x4"), "not a row reduction");
  expect_usage_error(RUN("plan", "--op", "softmax"), "needs --op and --shape");
  expect_usage_error(RUN("plan", "--op", "softmax", "--shape", "64x64x64"), "MxNxK is for gemm");
  expect_usage_error(RUN("plan", "--op", "gemm", "--shape", "64x64"), "MxNxK shape");
  expect_usage_error(RUN("plan", "--op", "gemm", "--shape", "64x64x64", "--gemm-block", "96,96,8"),
                     "--gemm-block for simt");
  expect_usage_error(RUN("plan", "--op", "gemm", "--shape", "8x8x8", "--matrix-realization", "x"),
                     "unknown matrix realization");
  /* gemm: the rule's tile, as run records it */
  json_t *gemm = plan_gemm_json("4096x4096x4096", "simt");
  json_t *tile = json_object_get(gemm, "tile");
  assert_int_equal(json_integer_value(json_object_get(tile, "block_m")), 128);
  assert_int_equal(json_integer_value(json_object_get(tile, "block_n")), 256);
  assert_int_equal(json_integer_value(json_object_get(gemm, "thread_blocks")), 512);
  json_decref(gemm);
  /* tensor on the H200 the plan command describes: wgmma in one launch, its
   * operands copied by TMA */
  gemm = plan_gemm_json("4096x4096x4096", "tensor");
  assert_string_equal(json_string_value(json_object_get(gemm, "instruction")), "wgmma.m64n256k8");
  assert_int_equal(json_integer_value(json_object_get(gemm, "launches")), 1);
  assert_true(json_is_true(json_object_get(gemm, "tensor_maps")));
  assert_int_equal(json_integer_value(json_object_get(gemm, "threads")), 384);
  json_decref(gemm);
  /* k = 4095: A's rows do not start on 16 bytes, which TMA needs, so the packing launch */
  gemm = plan_gemm_json("4096x4096x4095", "tensor");
  assert_int_equal(json_integer_value(json_object_get(gemm, "launches")), 2);
  assert_true(json_is_false(json_object_get(gemm, "tensor_maps")));
  json_decref(gemm);
  expect_usage_error(RUN("plan", "--op", "gemm", "--shape", "64x64x64", "--matrix-realization",
                         "tensor-3xtf32", "--gemm-block", "128,256,32"),
                     "--gemm-block for tensor-3xtf32");
  expect_usage_error(RUN("plan", "--op", "softmax", "--shape", "0x4"), "0x4");
  expect_usage_error(RUN("plan", "--op", "softmax", "--shape", "4x4", "--variant", "best"),
                     "unknown variant");
  expect_usage_error(RUN("plan", "--op", "softmax", "--shape", "4x4", "--profile", "learned"),
                     "unknown planner profile");
  expect_usage_error(RUN("run", "--variants", "reference,reference"), "twice");
}

static void env_describes_the_machine(void **state) {
  assert_int_equal(RUN("env"), 0);
  assert_non_null(strstr(out, "cpu:"));
  assert_non_null(strstr(out, "gpu"));
  assert_int_equal(RUN("env", "--json"), 0);
  json_error_t jerr;
  json_t *doc = json_loads(out, 0, &jerr);
  assert_non_null(doc);
  json_t *gpu = json_object_get(doc, "gpu");
  assert_true(json_is_boolean(json_object_get(gpu, "available")));
  if (!json_is_true(json_object_get(gpu, "available"))) {
    assert_non_null(json_string_value(json_object_get(gpu, "reason")));
  }
  json_decref(doc);
}

static void report_of_a_non_results_file(void **state) {
  char *dir = make_temp_dir();
  char path[512];
  snprintf(path, sizeof path, "%s/results.json", dir);
  FILE *f = fopen(path, "w");
  fputs("{\"schema\": \"something.else\"}", f);
  fclose(f);
  expect_usage_error(RUN("report", dir), "not a tilebench results file");
  unlink(path);
  expect_usage_error(RUN("report", dir), "has no results.json");
  rmdir(dir);
  free(dir);
}

/* --devices' processes (cli/devices.h) with the CPU backend standing in for
 * GPUs (the command refuses --devices off the CUDA backend before it gets
 * here): one shard per device, each with CUDA_VISIBLE_DEVICES naming its
 * device alone, merged into --out, each case naming its shard and device. */
static void devices_run_one_shard_per_device(void **state) {
  char *base = make_temp_dir();
  char dir[512], shard_dir[600];
  snprintf(dir, sizeof dir, "%s/devices", base);
  static const char *const campaign[] = {
      "run",       "--backend", "cpu",         "--ops", "add,sum",     "--shapes", "8x8,16x16",
      "--samples", "3",         "--warmup-ms", "1",     "--sample-ms", "1"};
  static const char *const devices[] = {"0", "GPU-00000000-0000-0000-0000-000000000001"};
  char *argv[] = {"run", "--devices", "0,1"};
  struct tb_devices_plan plan = {.executable = TB_BINARY,
                                 .campaign_argv = campaign,
                                 .campaign_argc = sizeof campaign / sizeof campaign[0],
                                 .devices = devices,
                                 .device_count = 2,
                                 .out = dir,
                                 .quiet = true,
                                 .argc = 3,
                                 .argv = argv};
  assert_int_equal(tb_devices_run(&plan), 0);
  json_t *doc = load_results(dir);
  json_t *run = json_object_get(doc, "run");
  json_t *merge = json_object_get(run, "merge");
  assert_int_equal(json_integer_value(json_object_get(merge, "shard_count")), 2);
  json_t *cases = json_object_get(doc, "cases");
  assert_int_equal(json_array_size(cases), 2 * 2 * 2); /* ops x shapes x views */
  size_t i;
  json_t *c;
  unsigned on[2] = {0, 0};
  json_array_foreach(cases, i, c) {
    json_int_t shard = json_integer_value(json_object_get(c, "shard"));
    assert_true(shard == 0 || shard == 1);
    on[shard]++;
    const char *visible = json_string_value(
        json_object_get(json_object_get(c, "measured_on"), "cuda_visible_devices"));
    assert_non_null(visible);
    assert_string_equal(visible, devices[shard]);
  }
  assert_true(on[0] == 4 && on[1] == 4);
  json_decref(doc);
  for (int k = 0; k < 2; ++k) { /* each shard's own run and log stay */
    snprintf(shard_dir, sizeof shard_dir, "%s/shards/%d/results.json", dir, k);
    assert_int_equal(access(shard_dir, F_OK), 0);
    snprintf(shard_dir, sizeof shard_dir, "%s/shards/%d.log", dir, k);
    assert_int_equal(access(shard_dir, F_OK), 0);
  }
  snprintf(shard_dir, sizeof shard_dir, "%s/.tilebench-claim", dir);
  assert_int_equal(access(shard_dir, F_OK), -1);
  /* the same --out again: refused, nothing replaced */
  assert_int_equal(tb_devices_run(&plan), 2);
  free(base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_shapes_exit_2),
      cmocka_unit_test(bad_flags_exit_2),
      cmocka_unit_test(too_large_for_memory_exit_2),
      cmocka_unit_test(help_exits_0),
      cmocka_unit_test(non_empty_out_refused),
      cmocka_unit_test(end_to_end_cpu_run),
      cmocka_unit_test(devices_run_one_shard_per_device),
      cmocka_unit_test(variants_and_plan_records),
      cmocka_unit_test(profile_of_a_run),
      cmocka_unit_test(gemm_realizations_on_the_cpu),
      cmocka_unit_test(plan_command),
      cmocka_unit_test(env_describes_the_machine),
      cmocka_unit_test(report_of_a_non_results_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
