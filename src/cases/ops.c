#include "cases/ops.h"

#include <string.h>

static const struct tb_op_info op_table[TB_OP_COUNT] = {
    {TB_OP_SUM, "sum", true, false, false, false, true, false},
    {TB_OP_SOFTMAX, "softmax", true, false, false, false, false, false},
    {TB_OP_RMSNORM, "rmsnorm", true, false, true, false, false, false},
    {TB_OP_LAYERNORM, "layernorm", true, false, true, true, false, false},
    {TB_OP_ADD, "add", false, true, false, false, false, false},
    {TB_OP_GELU_ADD, "gelu_add", false, true, false, false, false, false},
    {TB_OP_GEMM, "gemm", false, true, false, false, false, true},
};

const struct tb_op_info *tb_op_info(enum tb_op op) {
  return (op >= 0 && op < TB_OP_COUNT) ? &op_table[op] : NULL;
}

const struct tb_op_info *tb_op_by_name(const char *name) {
  for (int i = 0; i < TB_OP_COUNT; ++i) {
    if (strcmp(op_table[i].name, name) == 0) {
      return &op_table[i];
    }
  }
  return NULL;
}

const char *tb_op_names(void) {
  return "sum,softmax,rmsnorm,layernorm,add,gelu_add,gemm";
}

bool tb_op_accepts(const struct tb_op_info *op, struct tb_shape shape) {
  return op->is_matmul ? shape.k > 0 : shape.k == 0;
}

double tb_op_minimal_bytes(enum tb_op op, struct tb_shape shape) {
  const struct tb_op_info *info = tb_op_info(op);
  size_t m = shape.m, n = shape.n;
  if (info->is_matmul) { /* a (m x k) and b (k x n) read, out (m x n) written */
    return 4.0 *
           ((double)m * (double)shape.k + (double)shape.k * (double)n + (double)m * (double)n);
  }
  double elems = (double)m * (double)n;
  double bytes = elems * 4.0; /* the first matrix, read */
  bytes += info->has_second_matrix ? elems * 4.0 : 0.0;
  bytes += info->has_weight ? (double)n * 4.0 : 0.0;
  bytes += info->has_bias ? (double)n * 4.0 : 0.0;
  bytes += (info->output_is_vector ? (double)m : elems) * 4.0; /* output, written */
  return bytes;
}
