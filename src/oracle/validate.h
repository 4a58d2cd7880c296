/* Full-output validation against a float64 reference (docs/method.md §2.4):
 * |out - ref| <= atol + rtol * |ref| for every element; NaN never passes, so
 * an element left at its poison value is caught as unwritten. */
#ifndef TB_ORACLE_VALIDATE_H
#define TB_ORACLE_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cases/ops.h"
#include "inputs/poison.h" /* the pattern `unwritten` counts */

struct tb_tolerance {
  double atol;
  double rtol;
  double scale; /* what atol and rtol were multiplied by (--tolerance-scale); 0 means 1 */
};

/* Tolerance of an operation over reductions of length n (the row length; k
 * for gemm); tf32: gemm with TF32-rounded operands. docs/tolerances.md says
 * why. Scale 1. */
struct tb_tolerance tb_tolerance_for(enum tb_op op, size_t n, bool tf32);

/* tb_tolerance_for widened by `scale` (>= 1; the run's --tolerance-scale):
 * atol and rtol both multiplied by it, and the scale kept. */
struct tb_tolerance tb_tolerance_scaled(enum tb_op op, size_t n, bool tf32, double scale);

struct tb_validation {
  bool passed;
  double atol, rtol;
  double tolerance_scale;   /* the factor atol and rtol carry: 1 unless the run widened them */
  double max_abs_error;     /* over finite outputs; +inf when any output is NaN/inf */
  double max_rel_error;     /* |out-ref| / |ref| over elements with ref != 0 */
  double max_abs_reference; /* largest |ref|: passed implies max_abs_error <= atol + rtol * it */
  size_t checked;           /* elements compared (the whole output) */
  size_t failed;            /* elements outside tolerance */
  size_t unwritten;         /* elements still holding the poison bit pattern */
  size_t first_failure;     /* index of the first failing element, when failed > 0 */
  double first_failure_got, first_failure_expected;
};

void tb_validate(const float *out, const double *ref, size_t count, struct tb_tolerance tol,
                 struct tb_validation *result);

#endif
