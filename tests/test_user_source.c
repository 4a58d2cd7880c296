/* The CUDA source user kernel (--kernel X.cu): the file as read, hashed and
 * checked before a run, and the example compiled by NVRTC as the provider
 * compiles it, with its entry point in the cubin (skipped without NVRTC). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/cuda/nvrtc.h"
#include "backends/user_source.h"
#include "provenance/hash.h"
#include "test_support.h"

#ifndef TB_SOURCE_DIR
#error "TB_SOURCE_DIR: the source tree, for the example"
#endif
#define EXAMPLE TB_SOURCE_DIR "/examples/user-kernel-nvrtc/softmax.cu"

static void write_file(const char *path, const char *contents, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(contents, 1, size, f), size);
  fclose(f);
}

static void refused_with(enum tb_status st, const struct tb_error *err, const char *part) {
  assert_int_equal(st, TB_ERR_USAGE);
  if (strstr(err->message, part) == NULL) {
    print_error("refused as: %s (expected '%s')\n", err->message, part);
    fail();
  }
}

static void example_opens_and_checks(void **state) {
  struct tb_user_source src;
  struct tb_error err = {0};
  assert_true(tb_user_source_is_cu(EXAMPLE));
  assert_false(tb_user_source_is_cu("libk.so"));
  assert_false(tb_user_source_is_cu(".cu"));
  assert_int_equal(tb_user_source_open(EXAMPLE, "grid=m,block=256,smem=0", &src, &err), TB_OK);
  assert_string_equal(src.file_name, "softmax.cu");
  assert_true(src.path[0] == '/');
  char digest[TB_SHA256_HEX_LEN];
  assert_int_equal(tb_sha256_file(EXAMPLE, digest, &err), TB_OK);
  assert_string_equal(src.sha256, digest); /* the bytes compiled are the file's */
  const struct tb_op_info *softmax = tb_op_by_name("softmax"), *sum = tb_op_by_name("sum");
  assert_int_equal(tb_user_source_check_ops(&src, &softmax, 1, &err), TB_OK);
  refused_with(tb_user_source_check_ops(&src, &sum, 1, &err), &err, "no entry point tb_user_sum");
  tb_error_clear(&err);
  const struct tb_op_info *gemm = tb_op_by_name("gemm");
  refused_with(tb_user_source_check_ops(&src, &gemm, 1, &err), &err, "gemm");
  tb_error_clear(&err);
  struct tb_shape shapes[] = {{4096, 1024, 0}, {37, 769, 0}};
  assert_int_equal(tb_user_source_check_shapes(&src, shapes, 2, &err), TB_OK);
  tb_user_source_close(&src);
  assert_null(src.text);
}

static void bad_files_and_launches(void **state) {
  char dir[] = "/tmp/tb_user_source_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128];
  snprintf(path, sizeof path, "%s/k.cu", dir);
  struct tb_user_source src;
  struct tb_error err = {0};
  refused_with(tb_user_source_open("/nonexistent/k.cu", "grid=m,block=1", &src, &err), &err,
               "no such file");
  tb_error_clear(&err);
  write_file(path, "", 0);
  refused_with(tb_user_source_open(path, "grid=m,block=1", &src, &err), &err, "empty");
  tb_error_clear(&err);
  write_file(path, "a\0b", 3);
  refused_with(tb_user_source_open(path, "grid=m,block=1", &src, &err), &err, "binary");
  tb_error_clear(&err);
  /* a name that merely contains the entry point's is not it */
  const char *text = "extern \"C\" __global__ void tb_user_softmax_v2(float *o) {}\n";
  write_file(path, text, strlen(text));
  refused_with(tb_user_source_open(path, "grid=m,blk=1", &src, &err), &err, "unknown key 'blk'");
  tb_error_clear(&err);
  assert_int_equal(tb_user_source_open(path, "grid=m,block=n", &src, &err), TB_OK);
  const struct tb_op_info *softmax = tb_op_by_name("softmax");
  refused_with(tb_user_source_check_ops(&src, &softmax, 1, &err), &err,
               "no entry point tb_user_softmax");
  tb_error_clear(&err);
  struct tb_shape wide = {8, 2048, 0};
  refused_with(tb_user_source_check_shapes(&src, &wide, 1, &err), &err, "block x is 2048");
  tb_user_source_close(&src);
  unlink(path);
  rmdir(dir);
}

/* Whether `needle` occurs in the `size` bytes at `data`. */
static int contains(const void *data, size_t size, const char *needle) {
  size_t len = strlen(needle);
  const char *bytes = data;
  for (size_t i = 0; i + len <= size; ++i) {
    if (memcmp(bytes + i, needle, len) == 0) {
      return 1;
    }
  }
  return 0;
}

static void nvrtc_compiles_the_example(void **state) {
  struct tb_user_source src;
  struct tb_error err = {0};
  assert_int_equal(tb_user_source_open(EXAMPLE, "grid=m,block=256", &src, &err), TB_OK);
  struct tb_compiled c;
  enum tb_status st =
      tb_nvrtc_compile_named(src.text, src.file_name, "--kernel softmax.cu", "sm_90", &c, &err);
  tb_user_source_close(&src);
  if (st == TB_ERR_UNAVAILABLE) {
    tb_compiled_free(&c);
    skip(); /* no NVRTC on this machine */
  }
  if (st != TB_OK) {
    print_error("%s\n", err.message);
  }
  assert_int_equal(st, TB_OK);
  assert_true(c.cubin_size > 0);
  /* extern "C": the unmangled name is the ELF symbol the driver resolves */
  assert_true(contains(c.cubin, c.cubin_size, "tb_user_softmax"));
  assert_false(contains(c.cubin, c.cubin_size, "_Z15tb_user_softmax"));
  assert_int_equal(c.spill_store_bytes, 0);
  tb_compiled_free(&c);
}

static void nvrtc_reports_a_compile_error(void **state) {
  struct tb_compiled c;
  struct tb_error err = {0};
  enum tb_status st = tb_nvrtc_compile_named(
      "extern \"C\" __global__ void tb_user_sum(float *o) { o[0] = undefined_name; }\n", "bad.cu",
      "--kernel bad.cu", "sm_90", &c, &err);
  if (st == TB_ERR_UNAVAILABLE) {
    tb_compiled_free(&c);
    skip();
  }
  assert_int_equal(st, TB_ERR_RUN);
  /* the message names the file and carries the compiler's own line */
  assert_non_null(strstr(err.message, "NVRTC failed to compile --kernel bad.cu for sm_90"));
  assert_non_null(strstr(err.message, "bad.cu(1)"));
  assert_non_null(strstr(err.message, "undefined_name"));
  tb_compiled_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(example_opens_and_checks),
      cmocka_unit_test(bad_files_and_launches),
      cmocka_unit_test(nvrtc_compiles_the_example),
      cmocka_unit_test(nvrtc_reports_a_compile_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
