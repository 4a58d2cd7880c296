#include "oracle/validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"

struct tb_tolerance tb_tolerance_for(enum tb_op op, size_t n, bool tf32) {
  struct tb_tolerance tol = {1e-5, 1e-5, 1.0};
  switch (op) {
  case TB_OP_SUM:
    /* fp32 tree/blocked accumulation errs by ~u*sqrt(log n)*sqrt(n)*rms(x);
     * 2e-5*sqrt(n) is ~30x that, yet far below one dropped element (|x|~2). */
    tol.atol = 2e-5 * sqrt((double)n);
    tol.rtol = 1e-5;
    break;
  case TB_OP_SOFTMAX:
    /* outputs are small (~1/n), so the bound is relative: fast exp is within
     * ~12 ulp (1.4e-6) on [-8, 0] and the row sum adds ~u*log2(n). */
    tol.atol = 1e-8;
    tol.rtol = 5e-5;
    break;
  case TB_OP_RMSNORM:
  case TB_OP_LAYERNORM:
    /* outputs are O(1); rsqrt and the fp32 row statistics err by a few ulp. */
    tol.atol = 1e-5;
    tol.rtol = 1e-5;
    break;
  case TB_OP_ADD:
    /* one fp32 rounding: |fl(a+b) - (a+b)| <= 2^-24 |a+b|. */
    tol.atol = 0.0;
    tol.rtol = 0x1p-23;
    break;
  case TB_OP_GEMM:
    /* n is k here: like sum, a dot product of k terms (|a*b| ~ 4 on average),
     * fp32 blocked accumulation; one wrong term exceeds the bound. */
    tol.atol = 8e-5 * sqrt((double)n);
    tol.rtol = 1e-5;
    if (tf32) {
      /* each operand rounded to 10 mantissa bits: a term a*b (rms 16/3)
       * errs by at most ~5.6e-3 rms even if the hardware truncates, and the
       * errors add up independently over k terms; 4e-2*sqrt(k) is 7 of those
       * standard deviations (over 1e7 outputs, the largest is ~5.5). */
      tol.atol = 4e-2 * sqrt((double)n);
    }
    break;
  case TB_OP_GELU_ADD:
    /* erf in fp32 is within a few ulp; GELU's output near 0 needs an atol. */
    tol.atol = 1e-6;
    tol.rtol = 1e-5;
    break;
  default: break;
  }
  return tol;
}

struct tb_tolerance tb_tolerance_scaled(enum tb_op op, size_t n, bool tf32, double scale) {
  struct tb_tolerance tol = tb_tolerance_for(op, n, tf32);
  if (scale > 0.0) {
    tol.atol *= scale;
    tol.rtol *= scale;
    tol.scale = scale;
  }
  return tol;
}

static void record_failure(struct tb_validation *r, size_t i, double got, double expected) {
  if (r->failed == 0) {
    r->first_failure = i;
    r->first_failure_got = got;
    r->first_failure_expected = expected;
  }
  r->failed++;
}

/* Elements [lo, hi) into r's maxima and counts. */
static void validate_range(const float *out, const double *ref, size_t lo, size_t hi,
                           struct tb_tolerance tol, struct tb_validation *r) {
  for (size_t i = lo; i < hi; ++i) {
    double got = (double)out[i], expected = ref[i];
    if (fabs(expected) > r->max_abs_reference) {
      r->max_abs_reference = fabs(expected);
    }
    if (tb_is_poison(out[i])) {
      r->unwritten++;
    }
    if (!isfinite(got)) {
      r->max_abs_error = INFINITY;
      r->max_rel_error = INFINITY;
      record_failure(r, i, got, expected);
      continue;
    }
    double abs_err = fabs(got - expected);
    if (abs_err > r->max_abs_error) {
      r->max_abs_error = abs_err;
    }
    if (expected != 0.0 && abs_err / fabs(expected) > r->max_rel_error) {
      r->max_rel_error = abs_err / fabs(expected);
    }
    /* Written so that a NaN reference also fails. */
    if (!(abs_err <= tol.atol + tol.rtol * fabs(expected))) {
      record_failure(r, i, got, expected);
    }
  }
}

struct validate_job {
  const float *out;
  const double *ref;
  struct tb_tolerance tol;
  struct tb_validation parts[TB_PARALLEL_MAX_PARTS];
};

static void validate_part(void *ctx, size_t k, size_t lo, size_t hi) {
  struct validate_job *j = ctx;
  validate_range(j->out, j->ref, lo, hi, j->tol, &j->parts[k]);
}

/* The parts in order: maxima and counts combined, the first failure the
 * earliest part's. */
static void merge_part(struct tb_validation *r, const struct tb_validation *p) {
  r->max_abs_reference = fmax(r->max_abs_reference, p->max_abs_reference);
  r->max_abs_error = fmax(r->max_abs_error, p->max_abs_error);
  r->max_rel_error = fmax(r->max_rel_error, p->max_rel_error);
  r->unwritten += p->unwritten;
  if (p->failed > 0 && r->failed == 0) {
    r->first_failure = p->first_failure;
    r->first_failure_got = p->first_failure_got;
    r->first_failure_expected = p->first_failure_expected;
  }
  r->failed += p->failed;
}

void tb_validate(const float *out, const double *ref, size_t count, struct tb_tolerance tol,
                 struct tb_validation *r) {
  memset(r, 0, sizeof *r);
  r->atol = tol.atol;
  r->rtol = tol.rtol;
  r->tolerance_scale = tol.scale > 0.0 ? tol.scale : 1.0;
  r->checked = count;
  struct validate_job *job = calloc(1, sizeof *job);
  if (job == NULL) { /* no room for the parts: one pass here */
    validate_range(out, ref, 0, count, tol, r);
  } else {
    job->out = out;
    job->ref = ref;
    job->tol = tol;
    /* about ten floating-point steps an element */
    size_t parts = tb_parallel_ranges(count, 10.0 * (double)count, validate_part, job);
    for (size_t k = 0; k < parts; ++k) {
      merge_part(r, &job->parts[k]);
    }
    free(job);
  }
  r->passed = (r->failed == 0 && count > 0);
}
