/* Float64 reference implementations of every operation. Inputs are the
 * case's fp32 tensors (views honoured); the result is packed (m x n, or m for
 * sum) in float64. */
#ifndef TB_ORACLE_ORACLE_H
#define TB_ORACLE_ORACLE_H

#include "core/error.h"
#include "inputs/tensor.h"

/* Allocates *ref (caller frees) and computes the reference output. */
enum tb_status tb_oracle_compute(const struct tb_case_data *data, double **ref,
                                 struct tb_error *err);

/* Exact GELU: x/2 * (1 + erf(x / sqrt 2)). */
double tb_gelu_exact(double x);

#endif
