/* The results directory and file: never overwritten, never half-written. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void out_dir_rules(void **state) {
  char *dir = make_temp_dir();
  struct tb_error err = {0};
  assert_int_equal(tb_prepare_out_dir(dir, &err), TB_OK); /* empty: fine */
  char nested[512], file[512];
  snprintf(nested, sizeof nested, "%s/a/b/c", dir);
  assert_int_equal(tb_prepare_out_dir(nested, &err), TB_OK); /* created with parents */
  tb_error_clear(&err);
  assert_int_equal(tb_prepare_out_dir(dir, &err), TB_ERR_USAGE); /* not empty now */
  snprintf(file, sizeof file, "%s/a/b/c/f", dir);
  FILE *f = fopen(file, "w");
  fclose(f);
  tb_error_clear(&err);
  assert_int_equal(tb_prepare_out_dir(file, &err), TB_ERR_USAGE); /* a file, not a dir */
  char cleanup[600];
  snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
  assert_int_equal(system(cleanup), 0);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(write_then_refuse_overwrite),
      cmocka_unit_test(out_dir_rules),
      cmocka_unit_test(non_finite_numbers_become_null),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
