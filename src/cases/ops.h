/* The operations tilebench measures, and what each reads and writes.
 * All reductions run over the last axis of an m x n fp32 row-major matrix. */
#ifndef TB_CASES_OPS_H
#define TB_CASES_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "cases/shape.h"

enum tb_op {
  TB_OP_SUM,       /* out[i] = sum_j x[i,j]                                  */
  TB_OP_SOFTMAX,   /* out[i,j] = exp(x[i,j] - max_i) / sum_k exp(x[i,k] - max_i) */
  TB_OP_RMSNORM,   /* out = x / sqrt(mean(x^2) + 1e-6) * weight             */
  TB_OP_LAYERNORM, /* out = (x - mean) / sqrt(var + 1e-5) * weight + bias   */
  TB_OP_ADD,       /* out = a + b                                            */
  TB_OP_GELU_ADD,  /* out = GELU(a + b), exact erf form                      */
  TB_OP_GEMM,      /* out = a . b: a is m x k, b is k x n (shape MxNxK)     */
  TB_OP_COUNT
};

#define TB_RMSNORM_EPS 1e-6
#define TB_LAYERNORM_EPS 1e-5

struct tb_op_info {
  enum tb_op op;
  const char *name;
  bool is_row_reduction;  /* reduces over each row (the planner's domain) */
  bool has_second_matrix; /* a second m x n input (add, gelu_add) */
  bool has_weight;        /* a length-n weight vector */
  bool has_bias;          /* a length-n bias vector */
  bool output_is_vector;  /* output has m elements instead of m x n */
  bool is_matmul;         /* shapes are MxNxK; a is m x k, b is k x n */
};

const struct tb_op_info *tb_op_info(enum tb_op op);
/* Returns NULL for an unknown name. */
const struct tb_op_info *tb_op_by_name(const char *name);
/* "sum,softmax,..." for help and error messages. */
const char *tb_op_names(void);

/* Minimal bytes an implementation must move: every input read once and every
 * output written once (notes/kernels.md). Used for effective bandwidth. */
double tb_op_minimal_bytes(enum tb_op op, struct tb_shape shape);

/* Whether a shape fits an operation: MxNxK for gemm, MxN for the others. */
bool tb_op_accepts(const struct tb_op_info *op, struct tb_shape shape);

#endif
