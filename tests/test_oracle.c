/* The float64 oracle against values worked out by hand. */
#include <math.h>
#include <stdlib.h>

#include "oracle/oracle.h"
#include "test_support.h"

static double *oracle_of(struct hand_case *h) {
  struct tb_error err = {0};
  double *ref = NULL;
  assert_int_equal(tb_oracle_compute(&h->data, &ref, &err), TB_OK);
  return ref;
}

static void sum_of_rows(void **state) {
  const float x[] = {1, 2, 3, -4, 0.5f, 0.25f};
  struct hand_case h;
  hand_case_init(&h, TB_OP_SUM, 2, 3, x, NULL, NULL, NULL);
  double *ref = oracle_of(&h);
  assert_double_equal(ref[0], 6.0, 0.0);
  assert_double_equal(ref[1], -3.25, 0.0);
  free(ref);
  hand_case_free(&h);
}

static void softmax_of_log_ratios(void **state) {
  /* exp(0) : exp(ln 3) = 1 : 3, so the row is [1/4, 3/4]; shifting the
   * row by 1000 must not change it: without the max subtraction exp(1000)
   * overflows even in float64 and the row becomes NaN. */
  const float x[] = {0.0f, (float)log(3.0), 1000.0f, 1000.0f + (float)log(3.0)};
  struct hand_case h;
  hand_case_init(&h, TB_OP_SOFTMAX, 2, 2, x, NULL, NULL, NULL);
  double *ref = oracle_of(&h);
  double ln3 = (double)(float)log(3.0); /* the fp32 input, exactly */
  assert_double_equal(ref[0], 1.0 / (1.0 + exp(ln3)), 1e-15);
  assert_double_equal(ref[1], exp(ln3) / (1.0 + exp(ln3)), 1e-15);
  assert_double_equal(ref[0], 0.25, 1e-7);
  double gap = (double)x[3] - (double)x[2]; /* ln 3 as rounded near 1000 */
  assert_double_equal(ref[2], 1.0 / (1.0 + exp(gap)), 1e-15);
  assert_double_equal(ref[3], exp(gap) / (1.0 + exp(gap)), 1e-15);
  free(ref);
  hand_case_free(&h);
}

static void rmsnorm_of_three_four(void **state) {
  /* mean(x^2) = (9 + 16) / 2 = 12.5 */
  const float x[] = {3, 4}, w[] = {1, 2};
  struct hand_case h;
  hand_case_init(&h, TB_OP_RMSNORM, 1, 2, x, NULL, w, NULL);
  double *ref = oracle_of(&h);
  double inv = 1.0 / sqrt(12.5 + 1e-6);
  assert_double_equal(ref[0], 3.0 * inv, 1e-15);
  assert_double_equal(ref[1], 8.0 * inv, 1e-15);
  free(ref);
  hand_case_free(&h);
}

static void layernorm_of_one_three(void **state) {
  /* mean 2, variance 1 */
  const float x[] = {1, 3}, w[] = {2, 1}, b[] = {0.5f, -1};
  struct hand_case h;
  hand_case_init(&h, TB_OP_LAYERNORM, 1, 2, x, NULL, w, b);
  double *ref = oracle_of(&h);
  double inv = 1.0 / sqrt(1.0 + 1e-5);
  assert_double_equal(ref[0], -1.0 * inv * 2.0 + 0.5, 1e-15);
  assert_double_equal(ref[1], 1.0 * inv * 1.0 - 1.0, 1e-15);
  free(ref);
  hand_case_free(&h);
}

static void add_and_exact_gelu(void **state) {
  const float a[] = {0.25f, -3, 2}, b[] = {0.75f, 1, -2};
  struct hand_case h;
  hand_case_init(&h, TB_OP_ADD, 1, 3, a, b, NULL, NULL);
  double *ref = oracle_of(&h);
  assert_double_equal(ref[0], 1.0, 0.0);
  assert_double_equal(ref[1], -2.0, 0.0);
  assert_double_equal(ref[2], 0.0, 0.0);
  free(ref);
  hand_case_free(&h);
  hand_case_init(&h, TB_OP_GELU_ADD, 1, 3, a, b, NULL, NULL);
  ref = oracle_of(&h);
  /* GELU(1) = Phi(1) = 0.841344746068543; GELU(-2) = -2 * Phi(-2). */
  assert_double_equal(ref[0], 0.8413447460685429, 1e-15);
  assert_double_equal(ref[1], -2.0 * 0.022750131948179195, 1e-15);
  assert_double_equal(ref[2], 0.0, 0.0);
  free(ref);
  hand_case_free(&h);
}

/* [1 2; 3 4] . [5 6; 7 8] = [19 22; 43 50]; with a 2x3 . 3x1 beside it. */
static void gemm_by_hand(void **state) {
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  struct hand_case h;
  hand_case_init(&h, TB_OP_GEMM, 2, 2, a, b, NULL, NULL);
  h.data.c.shape.k = 2;
  double *ref = oracle_of(&h);
  assert_double_equal(ref[0], 19.0, 0.0);
  assert_double_equal(ref[1], 22.0, 0.0);
  assert_double_equal(ref[2], 43.0, 0.0);
  assert_double_equal(ref[3], 50.0, 0.0);
  free(ref);
  hand_case_free(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sum_of_rows),           cmocka_unit_test(softmax_of_log_ratios),
      cmocka_unit_test(rmsnorm_of_three_four), cmocka_unit_test(layernorm_of_one_three),
      cmocka_unit_test(add_and_exact_gelu),    cmocka_unit_test(gemm_by_hand),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
