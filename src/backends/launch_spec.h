/* The launch description of a user's CUDA source kernel (--launch,
 * docs/user-kernels.md): grid and block dimensions and the dynamic shared
 * memory as integer expressions of the case's sizes, for example
 *   grid=cdiv(m,4),block=128,smem=n*4
 * Expressions: non-negative integer literals, the names m and n, + - * /
 * (integer division, truncating), cdiv(a,b) (division rounding up) and
 * parentheses; spaces between tokens. grid and block take one to three
 * comma-separated expressions (x, y, z; missing ones are 1), smem one (0
 * when absent). Parsing needs no shape; evaluating for a shape checks every
 * dimension against CUDA's limits. Pure C: no driver, no device. */
#ifndef TB_BACKENDS_LAUNCH_SPEC_H
#define TB_BACKENDS_LAUNCH_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define TB_LAUNCH_TEXT_MAX 512
#define TB_LAUNCH_NODES_MAX 128

/* One node of an expression tree: a literal, m, n, or an operator over the
 * nodes at lhs and rhs (indices into the spec's nodes). */
struct tb_launch_node {
  char kind; /* '#' literal, 'm', 'n', '+', '-', '*', '/', 'c' (cdiv) */
  int64_t value;
  int lhs, rhs;
};

struct tb_launch_spec {
  char text[TB_LAUNCH_TEXT_MAX]; /* as given, for messages and the results */
  struct tb_launch_node nodes[TB_LAUNCH_NODES_MAX];
  int node_count;
  int grid[3], block[3], smem; /* root nodes; -1 where not given */
};

/* A spec evaluated for one shape. */
struct tb_launch_dims {
  uint32_t grid[3], block[3];
  uint32_t smem_bytes;
};

/* Parses `text`. TB_ERR_USAGE with a message naming the part that is wrong
 * (an unknown key or name, a repeated key, a missing grid or block, more
 * than three dimensions, a literal too large, a syntax error and where). */
enum tb_status tb_launch_spec_parse(const char *text, struct tb_launch_spec *spec,
                                    struct tb_error *err);

/* Evaluates `spec` for an m x n case. TB_ERR_USAGE naming the dimension and
 * the shape when a value overflows, divides by zero, is zero or negative,
 * or passes CUDA's limits (grid x < 2^31, y and z <= 65535; block x and y
 * <= 1024, z <= 64, at most 1024 threads; smem < 2^31 bytes). */
enum tb_status tb_launch_spec_eval(const struct tb_launch_spec *spec, int64_t m, int64_t n,
                                   struct tb_launch_dims *dims, struct tb_error *err);

/* The text of a --launch option: `text` itself, or with a leading '@' the
 * contents of that file (one description; surrounding white space and
 * lines starting with '#' ignored) into `out`. TB_ERR_USAGE when the file
 * cannot be read or is too long. */
enum tb_status tb_launch_text_resolve(const char *text, char *out, size_t out_size,
                                      struct tb_error *err);

#endif
