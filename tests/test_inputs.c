/* The seeded generator: deterministic, view-independent, realistic. */
#include <math.h>
#include <string.h>

#include "inputs/generator.h"
#include "inputs/guard.h"
#include "inputs/tensor.h"
#include "oracle/validate.h"
#include "test_support.h"

static struct tb_case make_case(enum tb_op op, size_t m, size_t n, enum tb_view_kind view) {
  struct tb_case c = {.op = tb_op_info(op),
                      .shape = {m, n, 0},
                      .view = tb_view_for(view, n),
                      .provider = "native",
                      .variant = TB_VARIANT_AUTOMATIC};
  return c;
}

static void same_seed_same_values(void **state) {
  struct tb_case c = make_case(TB_OP_LAYERNORM, 5, 33, TB_VIEW_PACKED);
  struct tb_case_data a, b;
  struct tb_error err = {0};
  assert_int_equal(tb_case_data_create(&c, 42, &a, &err), TB_OK);
  assert_int_equal(tb_case_data_create(&c, 42, &b, &err), TB_OK);
  assert_int_equal(a.input_count, 3);
  for (size_t i = 0; i < a.input_count; ++i) {
    assert_memory_equal(a.inputs[i].storage, b.inputs[i].storage,
                        a.inputs[i].storage_elems * sizeof(float));
  }
  tb_case_data_free(&b);
  assert_int_equal(tb_case_data_create(&c, 43, &b, &err), TB_OK);
  assert_true(memcmp(a.inputs[0].storage, b.inputs[0].storage, 33 * sizeof(float)) != 0);
  tb_case_data_free(&a);
  tb_case_data_free(&b);
}

static void strided_view_holds_the_same_logical_values(void **state) {
  struct tb_case packed = make_case(TB_OP_ADD, 7, 13, TB_VIEW_PACKED);
  struct tb_case strided = make_case(TB_OP_ADD, 7, 13, TB_VIEW_STRIDED);
  struct tb_case_data p, s;
  struct tb_error err = {0};
  assert_int_equal(tb_case_data_create(&packed, 1, &p, &err), TB_OK);
  assert_int_equal(tb_case_data_create(&strided, 1, &s, &err), TB_OK);
  assert_int_equal(s.inputs[0].row_stride, 13 + TB_STRIDED_PAD);
  assert_int_equal(s.inputs[0].offset, TB_STRIDED_OFFSET);
  for (size_t t = 0; t < 2; ++t) {
    for (size_t r = 0; r < 7; ++r) {
      assert_memory_equal(tb_tensor_row(&p.inputs[t], r), tb_tensor_row(&s.inputs[t], r),
                          13 * sizeof(float));
      if (r + 1 < 7) { /* padding after each row is NaN */
        assert_true(isnan(tb_tensor_row(&s.inputs[t], r)[13]));
      }
    }
    assert_true(isnan(s.inputs[t].storage[0])); /* before the offset */
  }
  tb_case_data_free(&p);
  tb_case_data_free(&s);
}

/* A case large enough that both of its fills split over the cores
 * (core/parallel.h: ten million steps and more; its storage passes ten
 * million elements) holds, element for element, what the generator gives
 * each index, padding NaN, as a small one filled on one core does. */
static void a_parallel_fill_holds_each_index_value(void **state) {
  struct tb_case c = make_case(TB_OP_ADD, 2600, 3900, TB_VIEW_STRIDED);
  struct tb_case_data d;
  struct tb_error err = {0};
  assert_int_equal(tb_case_data_create(&c, 7, &d, &err), TB_OK);
  for (size_t t = 0; t < d.input_count; ++t) {
    const struct tb_tensor *x = &d.inputs[t];
    float lo, hi;
    tb_generator_range(x->role, &lo, &hi);
    uint64_t stream = tb_generator_stream(7, x->role, 2600, 3900);
    size_t checked = 0, padding = 0;
    for (size_t k = 0; k < x->storage_elems; ++k) {
      size_t logical = k - x->offset; /* wraps below the offset: padding */
      size_t r = logical / x->row_stride, j = logical % x->row_stride;
      if (k < x->offset || r >= x->rows || j >= x->cols) {
        padding += isnan(x->storage[k]);
        continue;
      }
      float want = tb_generator_uniform(stream, (uint64_t)r * x->cols + j, lo, hi);
      checked += memcmp(&x->storage[k], &want, sizeof want) == 0;
    }
    assert_int_equal(checked, x->rows * x->cols);
    assert_int_equal(padding, x->storage_elems - x->rows * x->cols);
    assert_true(x->storage_elems >= 10000000 && padding > 0);
  }
  tb_case_data_free(&d);
}

static void values_are_realistic(void **state) {
  uint64_t stream = tb_generator_stream(1, "x", 100, 100);
  double sum = 0.0;
  int nonzero = 0;
  for (uint64_t k = 0; k < 10000; ++k) {
    float v = tb_generator_uniform(stream, k, -4.0f, 4.0f);
    assert_true(v >= -4.0f && v < 4.0f);
    sum += v;
    nonzero += v != 0.0f;
  }
  assert_true(fabs(sum / 10000.0) < 0.2); /* centred */
  assert_true(nonzero > 9990);
  float lo, hi;
  tb_generator_range("weight", &lo, &hi);
  assert_true(lo > 0.0f); /* weights never zero out a column */
}

/* Known answers of the generator as docs/inputs.md defines it, computed by
 * an implementation of that text alone (Python integers): the C generator
 * and the text agree, so a port of the text (tests/gpu/graph_replay_check.py
 * regenerates a run's inputs with one) makes tilebench's very inputs. */
static void generator_matches_its_documentation(void **state) {
  static const struct {
    unsigned long long seed;
    const char *role;
    size_t m, n;
    uint64_t index;
    uint32_t bits;
  } known[] = {
      {1, "x", 100, 100, 0, 0x403199d4u},
      {1, "x", 100, 100, 9999, 0xbfe9cf94u},
      {7, "weight", 8, 65536, 65535, 0x3f4d0612u},
      {123456789, "bias", 3, 5, 4, 0x3e780100u},
  };
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
    float lo, hi;
    tb_generator_range(known[i].role, &lo, &hi);
    uint64_t stream = tb_generator_stream(known[i].seed, known[i].role, known[i].m, known[i].n);
    float v = tb_generator_uniform(stream, known[i].index, lo, hi);
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    assert_int_equal(bits, known[i].bits);
  }
}

static void output_starts_poisoned(void **state) {
  struct tb_case c = make_case(TB_OP_SUM, 4, 9, TB_VIEW_PACKED);
  struct tb_case_data d;
  struct tb_error err = {0};
  assert_int_equal(tb_case_data_create(&c, 1, &d, &err), TB_OK);
  assert_int_equal(d.output.storage_elems, 4);
  assert_true(tb_is_poison(d.output.storage[3]));
  tb_case_data_free(&d);
}

static void oversized_case_refused_before_allocating(void **state) {
  struct tb_case c = make_case(TB_OP_SOFTMAX, (size_t)1 << 31, (size_t)1 << 31, TB_VIEW_PACKED);
  struct tb_case_data d;
  struct tb_error err = {0};
  assert_int_equal(tb_case_data_create(&c, 1, &d, &err), TB_ERR_INPUT);
  assert_non_null(strstr(err.message, "GB of host memory"));
  assert_null(d.inputs[0].storage);
}

/* A write just before or just past a guarded buffer is found, with its
 * offset from the first element; writes inside it are not. */
static void guard_zones_find_writes_outside(void **state) {
  struct tb_guarded g;
  long long offset = 99;
  assert_true(tb_guarded_alloc(&g, 10));
  for (size_t i = 0; i < g.count; ++i) {
    g.data[i] = (float)i;
  }
  assert_true(tb_guarded_intact(&g, &offset));
  assert_int_equal(offset, 0);
  g.data[10] = 1.0f;
  assert_false(tb_guarded_intact(&g, &offset));
  assert_int_equal(offset, 10);
  tb_guarded_free(&g);
  assert_true(tb_guarded_alloc(&g, 10));
  g.data[-1] = 0.0f;
  assert_false(tb_guarded_intact(&g, &offset));
  assert_int_equal(offset, -1);
  g.data[-(long)TB_GUARD_ELEMS] = 0.0f; /* the farthest damage is reported first */
  assert_false(tb_guarded_intact(&g, &offset));
  assert_int_equal(offset, -(long long)TB_GUARD_ELEMS);
  tb_guarded_free(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_seed_same_values),
      cmocka_unit_test(strided_view_holds_the_same_logical_values),
      cmocka_unit_test(a_parallel_fill_holds_each_index_value),
      cmocka_unit_test(values_are_realistic),
      cmocka_unit_test(generator_matches_its_documentation),
      cmocka_unit_test(output_starts_poisoned),
      cmocka_unit_test(guard_zones_find_writes_outside),
      cmocka_unit_test(oversized_case_refused_before_allocating),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
