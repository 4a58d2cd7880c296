/* Shapes, lists and numbers: what is accepted and what is refused. */
#include <string.h>

#include "cases/ops.h"
#include "cases/shape.h"
#include "core/numbers.h"
#include "core/strlist.h"
#include "test_support.h"

static void valid_shapes(void **state) {
  struct tb_shape s;
  struct tb_error err = {0};
  assert_int_equal(tb_shape_parse("37x769", &s, &err), TB_OK);
  assert_int_equal(s.m, 37);
  assert_int_equal(s.n, 769);
  assert_int_equal(tb_shape_parse("1x1", &s, &err), TB_OK);
  assert_int_equal(s.m, 1);
}

static void gemm_shapes(void **state) {
  struct tb_shape s;
  struct tb_error err = {0};
  assert_int_equal(tb_shape_parse("127x193x61", &s, &err), TB_OK);
  assert_int_equal(s.m, 127);
  assert_int_equal(s.n, 193);
  assert_int_equal(s.k, 61);
  assert_int_equal(tb_shape_parse("37x769", &s, &err), TB_OK);
  assert_int_equal(s.k, 0);
  assert_true(tb_op_accepts(tb_op_by_name("gemm"), (struct tb_shape){2, 3, 4}));
  assert_false(tb_op_accepts(tb_op_by_name("gemm"), (struct tb_shape){2, 3, 0}));
  assert_false(tb_op_accepts(tb_op_by_name("softmax"), (struct tb_shape){2, 3, 4}));
}

static void refused_shapes(void **state) {
  const char *bad[] = {"0x5",  "5x0",  "-1x3",    "axb",   "5",    "99999999999x99999999999",
                       "5x",   "x5",   "5x5x5x5", "5x5x0", "5xx5", " 5x5",
                       "5x5 ", "+5x5", "5X5",     "",      "0x0",  "3x-1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    struct tb_shape s;
    struct tb_error err = {0};
    assert_int_equal(tb_shape_parse(bad[i], &s, &err), TB_ERR_USAGE);
    assert_true(strlen(err.message) > 0);
    assert_int_equal(tb_exit_code(err.status), 2);
  }
}

static void lists_split_and_refuse_empty_items(void **state) {
  struct tb_strlist l;
  struct tb_error err = {0};
  assert_int_equal(tb_strlist_split("a,bb,c", "--x", &l, &err), TB_OK);
  assert_int_equal(l.count, 3);
  assert_string_equal(l.items[1], "bb");
  tb_strlist_free(&l);
  const char *bad[] = {"", "a,", ",a", "a,,b"};
  for (size_t i = 0; i < 4; ++i) {
    tb_error_clear(&err);
    assert_int_equal(tb_strlist_split(bad[i], "--x", &l, &err), TB_ERR_USAGE);
  }
}

static void sizes_in_range(void **state) {
  unsigned long long v = 0;
  struct tb_error err = {0};
  assert_int_equal(tb_parse_size("9", "--samples", 1, 10, &v, &err), TB_OK);
  assert_int_equal(v, 9);
  const char *bad[] = {"0", "11", "-3", "3a", "", "99999999999999999999999"};
  for (size_t i = 0; i < 6; ++i) {
    tb_error_clear(&err);
    assert_int_equal(tb_parse_size(bad[i], "--samples", 1, 10, &v, &err), TB_ERR_USAGE);
  }
}

static void views(void **state) {
  struct tb_view packed = tb_view_for(TB_VIEW_PACKED, 10),
                 strided = tb_view_for(TB_VIEW_STRIDED, 10);
  assert_int_equal(packed.row_stride, 10);
  assert_int_equal(packed.offset, 0);
  assert_true(strided.row_stride > 10);
  assert_true(strided.offset > 0);
  enum tb_view_kind k;
  struct tb_error err = {0};
  assert_int_equal(tb_view_kind_parse("diagonal", &k, &err), TB_ERR_USAGE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(valid_shapes),   cmocka_unit_test(gemm_shapes),
      cmocka_unit_test(refused_shapes), cmocka_unit_test(lists_split_and_refuse_empty_items),
      cmocka_unit_test(sizes_in_range), cmocka_unit_test(views),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
