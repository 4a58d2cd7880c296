/* Shared helpers for the cmocka tests. */
#ifndef TB_TEST_SUPPORT_H
#define TB_TEST_SUPPORT_H

/* cmocka needs these before it */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "inputs/tensor.h"

/* cmocka 1.1.5 (Debian 12) has no double assertion and its float one casts
 * to float, which would hide errors below 1e-7. Exact when epsilon is 0. */
#undef assert_double_equal
#define assert_double_equal(a, b, epsilon)                                                         \
  assert_double_near((double)(a), (double)(b), (double)(epsilon), __FILE__, __LINE__)

void assert_double_near(double a, double b, double epsilon, const char *file, int line);

/* A case whose tensors the test fills by hand (packed layout). */
struct hand_case {
  struct tb_case_data data;
};

/* Builds an m x n case of `op` with inputs copied from the given arrays
 * (second/weight/bias may be NULL when the op has none). */
void hand_case_init(struct hand_case *h, enum tb_op op, size_t m, size_t n, const float *first,
                    const float *second, const float *weight, const float *bias);
void hand_case_free(struct hand_case *h);

/* Runs `argv` (argv[0] is the program) with stdout and stderr captured into
 * the buffers; returns the exit status, or -1 when it did not exit normally. */
int run_program(const char *const argv[], char *out, size_t out_size, char *errbuf,
                size_t err_size);

/* A fresh empty directory under /tmp; caller frees the path. */
char *make_temp_dir(void);

#endif
