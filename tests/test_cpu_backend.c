/* The CPU backend through the provider interface against the fp64 oracle,
 * over awkward shapes (n = 1, m = 1, n not a multiple of 4, strided views). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "measure/case_runner.h"
#include "measure/defences.h"
#include "measure/plausible.h"
#include "oracle/oracle.h"
#include "providers/provider.h"
#include "registry/registry.h"
#include "test_support.h"

static const struct tb_measure_options quick = {
    0.5, 0.2, 3, true, 0, 1, {0}, 1.0, {0, "", 0, 0, 0, 0}, false};

static void run_and_check(enum tb_op op, size_t m, size_t n, enum tb_view_kind view,
                          enum tb_variant variant) {
  struct tb_case c = {.op = tb_op_info(op),
                      .shape = {m, n, 0},
                      .view = tb_view_for(view, n),
                      .provider = "native",
                      .planned = tb_op_info(op)->is_row_reduction,
                      .variant = variant};
  struct tb_case_data data;
  double *ref = NULL;
  struct tb_error err = {0};
  struct tb_provider *p = NULL;
  assert_int_equal(tb_case_data_create(&c, 7, &data, &err), TB_OK);
  assert_int_equal(tb_oracle_compute(&data, &ref, &err), TB_OK);
  assert_int_equal(tb_provider_create("native", "cpu", &p, &err), TB_OK);
  struct tb_case_result r;
  assert_int_equal(tb_run_case(p, &c, &data, ref, NULL, &quick, &r), TB_OK);
  assert_int_equal(r.plan.kind == TB_PLAN_REDUCTION, c.planned);
  if (!r.valid) {
    print_error("%s: %s\n", r.id, r.error);
  }
  assert_true(r.valid);
  assert_int_equal(r.host.throughput.count, 3);
  assert_int_equal(r.host.latency.count, 3);
  assert_int_equal(r.host.latency.calls_per_sample, 1);
  assert_int_equal(r.validation.checked, data.output.storage_elems);
  assert_true(r.defences_ran); /* the built-in provider passes every defence (method §8) */
  for (int d = 0; d < TB_DEFENCE_COUNT; ++d) {
    assert_int_equal(r.defences[d].outcome,
                     d == TB_DEFENCE_ON_STREAM ? TB_DEFENCE_NOT_RUN : TB_DEFENCE_PASSED);
  }
  /* a CPU provider has no kernels whose stream the probe could check */
  assert_non_null(strstr(r.defences[TB_DEFENCE_ON_STREAM].detail, "runs on the CPU"));
  tb_case_result_free(&r);
  tb_provider_destroy(p);
  free(ref);
  tb_case_data_free(&data);
}

static void every_op_on_awkward_shapes(void **state) {
  const size_t shapes[][2] = {{1, 1}, {1, 3}, {3, 1}, {5, 4}, {17, 257}, {2, 4099}, {1, 70000}};
  for (int op = 0; op < TB_OP_COUNT; ++op) {
    if (tb_op_info((enum tb_op)op)->is_matmul) {
      continue; /* MxNxK shapes: gemm_on_odd_shapes */
    }
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
      for (int v = 0; v < TB_VARIANT_COUNT; ++v) {
        run_and_check((enum tb_op)op, shapes[s][0], shapes[s][1], TB_VIEW_PACKED,
                      (enum tb_variant)v);
        run_and_check((enum tb_op)op, shapes[s][0], shapes[s][1], TB_VIEW_STRIDED,
                      (enum tb_variant)v);
      }
    }
  }
}

/* A provider whose kernel forgets the last element: the runner must say the
 * case is invalid and why, not pass it. */
static struct tb_provider_ops broken_ops;
static const struct tb_provider_ops *real_ops;

static enum tb_status broken_read(struct tb_provider *p, float *dst, size_t count,
                                  struct tb_error *err) {
  enum tb_status st = real_ops->read_output(p, dst, count, err);
  tb_poison(dst + count - 1, 1); /* the tail element never written */
  return st;
}

/* A softmax case on the native CPU provider whose primitives a test replaces
 * (broken_ops starts as a copy of the real ones; p uses it once opened). */
struct broken_case {
  struct tb_case c;
  struct tb_case_data data;
  double *ref;
  struct tb_provider *p;
};

static void open_broken_case(struct broken_case *b, size_t m, size_t n, enum tb_view_kind view) {
  b->c = (struct tb_case){.op = tb_op_info(TB_OP_SOFTMAX),
                          .shape = {m, n, 0},
                          .view = tb_view_for(view, n),
                          .provider = "native",
                          .planned = true,
                          .variant = TB_VARIANT_AUTOMATIC};
  struct tb_error err = {0};
  b->ref = NULL;
  b->p = NULL;
  assert_int_equal(tb_case_data_create(&b->c, 7, &b->data, &err), TB_OK);
  assert_int_equal(tb_oracle_compute(&b->data, &b->ref, &err), TB_OK);
  assert_int_equal(tb_provider_create("native", "cpu", &b->p, &err), TB_OK);
  real_ops = b->p->ops;
  broken_ops = *b->p->ops;
  b->p->ops = &broken_ops;
}

static void close_broken_case(struct broken_case *b) {
  b->p->ops = real_ops;
  tb_provider_destroy(b->p);
  free(b->ref);
  tb_case_data_free(&b->data);
}

static void unwritten_tail_makes_the_case_invalid(void **state) {
  struct broken_case b;
  open_broken_case(&b, 3, 10, TB_VIEW_PACKED);
  broken_ops.read_output = broken_read;
  struct tb_case_result r;
  assert_int_equal(tb_run_case(b.p, &b.c, &b.data, b.ref, NULL, &quick, &r), TB_OK);
  assert_false(r.valid);
  assert_true(r.host_measured);
  assert_int_equal(r.validation.unwritten, 1);
  assert_non_null(strstr(r.error, "1 unwritten"));
  tb_case_result_free(&r);
  close_broken_case(&b);
}

/* The native provider made to cheat in one way at a time, each caught by its
 * defence (method §8) and named first in the error; without the optional
 * primitives the defences are recorded as not run and the case stays valid. */
enum cheat {
  CHEAT_NONE,
  CHEAT_SKIP_EVERY_OTHER,
  CHEAT_WRITE_INPUT,
  CHEAT_KEEP_OUTPUT,
  CHEAT_SKIP_BATCHES /* computes the first two calls after a poison only */
};
static enum cheat cheat;
static unsigned long cheat_calls, since_poison;
static struct tb_case_data *cheat_data;

static enum tb_status cheating_launch(struct tb_provider *p, unsigned long calls,
                                      struct tb_error *err) {
  for (unsigned long i = 0; i < calls; ++i, ++cheat_calls) {
    bool skip = (cheat == CHEAT_SKIP_EVERY_OTHER && cheat_calls % 2 == 1) ||
                (cheat == CHEAT_KEEP_OUTPUT && cheat_calls > 0) ||
                (cheat == CHEAT_SKIP_BATCHES && since_poison++ >= 2);
    if (!skip && real_ops->launch(p, 1, err) != TB_OK) {
      return err->status;
    }
    if (cheat == CHEAT_WRITE_INPUT) {
      /* [0,0], not storage[0]: the strided view's padding is NaN, and NaN + 1 keeps its bits */
      cheat_data->inputs[0].storage[cheat_data->inputs[0].offset] += 1.0f;
    }
  }
  return TB_OK;
}

/* A provider that keeps its output ignores the poison too, and the decoy. */
static enum tb_status cheating_poison(struct tb_provider *p, struct tb_error *err) {
  since_poison = 0;
  return cheat == CHEAT_KEEP_OUTPUT ? TB_OK : real_ops->poison_output(p, err);
}

static enum tb_status cheating_decoy(struct tb_provider *p, const float *values, size_t count,
                                     struct tb_error *err) {
  return cheat == CHEAT_KEEP_OUTPUT ? TB_OK : real_ops->decoy_output(p, values, count, err);
}

static void run_cheat(enum cheat how, bool primitives, struct tb_case_result *r) {
  struct broken_case b;
  open_broken_case(&b, 5, 33, TB_VIEW_STRIDED);
  cheat = how;
  cheat_calls = since_poison = 0;
  cheat_data = &b.data;
  broken_ops.launch = cheating_launch;
  broken_ops.poison_output = cheating_poison;
  broken_ops.decoy_output = cheating_decoy;
  if (!primitives) {
    broken_ops.read_input = NULL;
    broken_ops.check_guards = NULL;
    broken_ops.load_inputs = NULL;
    broken_ops.output_sets = NULL;
    broken_ops.read_set_output = NULL;
    broken_ops.decoy_output = NULL;
  }
  assert_int_equal(tb_run_case(b.p, &b.c, &b.data, b.ref, NULL, &quick, r), TB_OK);
  close_broken_case(&b);
}

static void assert_caught(enum cheat how, enum tb_defence by) {
  struct tb_case_result r;
  run_cheat(how, true, &r);
  assert_false(r.valid);
  assert_true(r.host_measured);
  assert_int_equal(r.defences[by].outcome, TB_DEFENCE_FAILED);
  char expected[64];
  snprintf(expected, sizeof expected, "defence %s failed: ", tb_defence_name(by));
  if (strncmp(r.error, expected, strlen(expected)) != 0) {
    print_error("%s\n", r.error);
    fail();
  }
  tb_case_result_free(&r);
}

static void cheats_are_caught_by_their_defence(void **state) {
  assert_caught(CHEAT_SKIP_EVERY_OTHER, TB_DEFENCE_EVERY_CALL);
  assert_caught(CHEAT_WRITE_INPUT, TB_DEFENCE_INPUTS_UNCHANGED);
  assert_caught(CHEAT_KEEP_OUTPUT, TB_DEFENCE_FRESH_INPUTS);

  assert_caught(CHEAT_SKIP_BATCHES, TB_DEFENCE_TIMED_OUTPUTS);

  struct tb_case_result r; /* a kept output passes the poisoned calls: only fresh inputs show it */
  run_cheat(CHEAT_KEEP_OUTPUT, true, &r);
  assert_int_equal(r.defences[TB_DEFENCE_EVERY_CALL].outcome, TB_DEFENCE_PASSED);
  assert_int_equal(r.defences[TB_DEFENCE_TIMED_OUTPUTS].outcome, TB_DEFENCE_PASSED);
  assert_true(r.validation.passed);
  tb_case_result_free(&r);

  /* skipped batches leave the decoy: the validation calls and the fresh
   * inputs, two calls after a poison, cannot tell */
  run_cheat(CHEAT_SKIP_BATCHES, true, &r);
  assert_int_equal(r.defences[TB_DEFENCE_EVERY_CALL].outcome, TB_DEFENCE_PASSED);
  assert_int_equal(r.defences[TB_DEFENCE_FRESH_INPUTS].outcome, TB_DEFENCE_PASSED);
  assert_true(r.timed_outputs.decoy && r.timed_outputs.failed);
  assert_non_null(strstr(r.defences[TB_DEFENCE_TIMED_OUTPUTS].detail, "a decoy written over it"));
  tb_case_result_free(&r);

  run_cheat(CHEAT_NONE, false, &r);
  assert_true(r.valid);
  assert_int_equal(r.defences[TB_DEFENCE_EVERY_CALL].outcome, TB_DEFENCE_PASSED);
  assert_int_equal(r.defences[TB_DEFENCE_INPUTS_UNCHANGED].outcome, TB_DEFENCE_NOT_RUN);
  assert_int_equal(r.defences[TB_DEFENCE_GUARD_ZONES].outcome, TB_DEFENCE_NOT_RUN);
  assert_int_equal(r.defences[TB_DEFENCE_FRESH_INPUTS].outcome, TB_DEFENCE_NOT_RUN);
  assert_int_equal(r.defences[TB_DEFENCE_TIMED_OUTPUTS].outcome, TB_DEFENCE_NOT_RUN);
  assert_non_null(strstr(r.defences[TB_DEFENCE_GUARD_ZONES].detail, "no guard zones"));
  assert_non_null(strstr(r.defences[TB_DEFENCE_TIMED_OUTPUTS].detail, "cannot read a buffer set"));
  tb_case_result_free(&r);
}

/* gemm over odd sizes in every dimension, both views (a's and b's leading
 * dimensions then exceed their rows), against the float64 oracle. */
static void gemm_on_odd_shapes(void **state) {
  const size_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {32, 32, 32}, {17, 9, 130}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    for (int view = 0; view < TB_VIEW_COUNT; ++view) {
      struct tb_case c = {.op = tb_op_info(TB_OP_GEMM),
                          .shape = {shapes[s][0], shapes[s][1], shapes[s][2]},
                          .view = tb_view_for((enum tb_view_kind)view, shapes[s][1]),
                          .provider = "native",
                          .variant = TB_VARIANT_AUTOMATIC};
      struct tb_case_data data;
      double *ref = NULL;
      struct tb_error err = {0};
      struct tb_provider *p = NULL;
      assert_int_equal(tb_case_data_create(&c, 3, &data, &err), TB_OK);
      assert_int_equal(data.inputs[0].cols, shapes[s][2]); /* a is m x k */
      assert_int_equal(data.inputs[1].rows, shapes[s][2]); /* b is k x n */
      assert_int_equal(tb_oracle_compute(&data, &ref, &err), TB_OK);
      assert_int_equal(tb_provider_create("native", "cpu", &p, &err), TB_OK);
      struct tb_case_result r;
      assert_int_equal(tb_run_case(p, &c, &data, ref, NULL, &quick, &r), TB_OK);
      if (!r.valid) {
        print_error("%s: %s\n", r.id, r.error);
      }
      assert_true(r.valid);
      assert_int_equal(r.validation.checked, shapes[s][0] * shapes[s][1]);
      tb_case_result_free(&r);
      tb_provider_destroy(p);
      free(ref);
      tb_case_data_free(&data);
    }
  }
}

/* The plan step, before any prepare: a planned reduction under the default
 * limits, the fixed elementwise walk, and no plan for gemm (plain loops). */
static void cpu_plan_step(void **state) {
  struct tb_provider *p = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_provider_create("native", "cpu", &p, &err), TB_OK);
  struct tb_exec_plan plan;
  struct tb_case sum = {.op = tb_op_info(TB_OP_SUM),
                        .shape = {64, 257, 0},
                        .view = tb_view_for(TB_VIEW_PACKED, 257),
                        .provider = "native",
                        .planned = true,
                        .variant = TB_VARIANT_AUTOMATIC};
  assert_int_equal(p->ops->plan(p, &sum, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_REDUCTION);
  assert_int_equal(plan.as.reduction.m, 64);
  assert_int_equal(plan.as.reduction.n, 257);
  assert_string_equal(plan.as.reduction.limits.source, tb_device_limits_default().source);
  struct tb_case add = sum;
  add.op = tb_op_info(TB_OP_ADD);
  add.planned = false;
  assert_int_equal(p->ops->plan(p, &add, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_ELEMENTWISE);
  assert_true(plan.as.elementwise.flat); /* packed rows walk as one */
  struct tb_case gemm = add;
  gemm.op = tb_op_info(TB_OP_GEMM);
  gemm.shape = (struct tb_shape){16, 16, 16};
  assert_int_equal(p->ops->plan(p, &gemm, &plan, &err), TB_OK);
  assert_int_equal(plan.kind, TB_PLAN_NONE);
  tb_provider_destroy(p);
}

/* cuBLAS is a provider of the CUDA backend only. */
static void cublas_needs_the_cuda_backend(void **state) {
  struct tb_provider *p = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_provider_create("cublas", "cpu", &p, &err), TB_ERR_UNAVAILABLE);
  assert_null(p);
  assert_non_null(strstr(err.message, "needs the CUDA backend"));
}

/* The user provider needs its library and a backend it has; it never
 * starts over a missing file, whatever the backend. */
static void user_provider_needs_a_library_and_a_backend(void **state) {
  struct tb_provider *p = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_provider_create("user", "cpu", &p, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "needs --kernel PATH"));
  tb_error_clear(&err);
  assert_int_equal(tb_user_provider_create("/nonexistent/libk.so", "fpga", &p, &err),
                   TB_ERR_UNAVAILABLE);
  assert_non_null(strstr(err.message, "no fpga backend"));
  tb_error_clear(&err);
  assert_int_equal(tb_user_provider_create("/nonexistent/libk.so", "cpu", &p, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "no such file"));
  tb_error_clear(&err);
  /* CUDA: no GPU here (unavailable), or the missing file on a GPU machine */
  enum tb_status st = tb_user_provider_create("/nonexistent/libk.so", "cuda", &p, &err);
  assert_true(st == TB_ERR_UNAVAILABLE || st == TB_ERR_USAGE);
  assert_null(p);
}

static void unknown_provider_and_backend(void **state) {
  struct tb_provider *p = NULL;
  struct tb_error err = {0};
  assert_int_equal(tb_provider_create("magic", "cpu", &p, &err), TB_ERR_USAGE);
  tb_error_clear(&err);
  assert_int_equal(tb_provider_create("native", "fpga", &p, &err), TB_ERR_UNAVAILABLE);
  assert_null(p);
}

/* TF32 keeps 10 of fp32's 23 mantissa bits, rounding to nearest with ties
 * away from zero (cvt.rna.tf32.f32); 2^-10 is one TF32 ulp at 1. */
static void tf32_rounding(void **state) {
  assert_true(tb_round_tf32(1.0f) == 1.0f);
  assert_true(tb_round_tf32(1.0f + 0x1p-12f) == 1.0f);              /* below half an ulp */
  assert_true(tb_round_tf32(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);   /* a tie: away from 0 */
  assert_true(tb_round_tf32(-1.0f - 0x1p-11f) == -1.0f - 0x1p-10f); /* symmetric */
  assert_true(tb_round_tf32(1.0f + 0x1p-10f + 0x1p-13f) == 1.0f + 0x1p-10f);
  assert_true(tb_round_tf32(3.99999f) == 4.0f); /* carries into the exponent */
  assert_true(isinf(tb_round_tf32(INFINITY)));
  assert_true(isnan(tb_round_tf32(NAN)));
}

/* The plausibility gate on figures built here (docs/method.md §8): a host
 * figure above 4 x the host copy of the case's footprint times the CPUs
 * fails, the native kernel's own figure passes; on a GPU the run's device
 * copy ceiling bounds the device figures, and gemm's FLOP rate the peak of
 * its realization (the H200's facts: 132 SMs at 1980 MHz, compute 9.0). */
static struct tb_case_result gate_case(enum tb_op op, struct tb_shape shape, const char *backend,
                                       double *per_call, size_t count) {
  struct tb_case_result r;
  memset(&r, 0, sizeof r);
  r.c = (struct tb_case){.op = tb_op_info(op),
                         .shape = shape,
                         .view = tb_view_for(TB_VIEW_PACKED, shape.n),
                         .provider = "user",
                         .variant = TB_VARIANT_AUTOMATIC};
  r.backend = backend;
  r.minimal_bytes = tb_op_minimal_bytes(op, shape);
  r.host_measured = true;
  r.host.throughput.per_call_ns = per_call;
  r.host.throughput.count = count;
  return r;
}

static void plausibility_gate(void **state) {
  struct tb_measure_options opt = quick;
  const struct tb_shape shape = {4096, 1024, 0};
  double claimed[] = {120.0, 125.0, 130.0}; /* a sum of 16 MiB in 125 ns: 134 TB/s */
  struct tb_case_result r = gate_case(TB_OP_SUM, shape, "cpu", claimed, 3);
  tb_measure_host_copies(r.minimal_bytes, &r.plausible);
  assert_true(r.plausible.copy_count >= 1 && r.plausible.copies[0].gbps > 0.0);
  tb_defend_plausible(&opt, &r);
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_FAILED);
  assert_non_null(strstr(r.defences[TB_DEFENCE_PLAUSIBLE].detail, "host p50 125 ns"));
  assert_non_null(strstr(r.defences[TB_DEFENCE_PLAUSIBLE].detail, "one thread's copy"));
  char why[600];
  assert_true(tb_defence_failure(&r, why, sizeof why));
  assert_non_null(strstr(why, "defence plausible failed"));

  double honest[] = {4e6, 4e6, 4e6}; /* 4 ms: 4 GB/s, what a plain loop does */
  r.host.throughput.per_call_ns = honest;
  tb_defend_plausible(&opt, &r);
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_PASSED);

  /* a GPU: the device figures against the run's ceiling, none without one */
  double host_gpu[] = {2e4}, eager[] = {5e3, 5e3, 5e3}, graph[] = {4e3, 4e3, 4e3};
  struct tb_device_result dev;
  memset(&dev, 0, sizeof dev);
  dev.throughput.modes[TB_BATCH_EAGER].control.per_call_ns = eager;
  dev.throughput.modes[TB_BATCH_EAGER].control.taken = 3;
  dev.throughput.modes[TB_BATCH_GRAPH].control.per_call_ns = graph;
  dev.throughput.modes[TB_BATCH_GRAPH].control.taken = 3;
  r = gate_case(TB_OP_SUM, shape, "cuda", host_gpu, 1);
  r.device = &dev;
  tb_defend_plausible(&opt, &r); /* opt has no ceiling: nothing to judge a sum by */
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_NOT_RUN);
  opt.plausibility.copy_ceiling_gbps = 4000.0;
  tb_defend_plausible(&opt, &r); /* graph: 16.8 MB in 4 us, 4198 GB/s */
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_PASSED);
  assert_int_equal(r.plausible.figure_count, 3);
  assert_non_null(strstr(r.defences[TB_DEFENCE_PLAUSIBLE].detail, "fastest figure (graph)"));
  graph[1] = 1e3; /* p50 of 1, 4, 4 us stays 4; all three at 1 us: 16792 GB/s */
  graph[0] = graph[2] = 1e3;
  tb_defend_plausible(&opt, &r);
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_FAILED);
  assert_non_null(strstr(r.defences[TB_DEFENCE_PLAUSIBLE].detail, "the run's device copy"));
  /* at 2 us (8396 GB/s, 2.1 x the ceiling): within 4 x over warm sets, out
   * of reach over cold ones (2 x) */
  graph[0] = graph[1] = graph[2] = 2e3;
  tb_defend_plausible(&opt, &r);
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_PASSED);
  assert_string_equal(r.plausible.margin_basis, "warm device buffers");
  r.provider_details.kind = TB_DETAILS_CUDA_NATIVE;
  snprintf(r.provider_details.as.cuda.buffers.state,
           sizeof r.provider_details.as.cuda.buffers.state, "cold");
  tb_defend_plausible(&opt, &r);
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_FAILED);
  assert_true(r.plausible.margin == 2.0);
  assert_string_equal(r.plausible.margin_basis, "cold device buffers");
  r.provider_details.kind = TB_DETAILS_NONE;

  /* gemm 4096^3: 137 GFLOP; in 1 ms that is 137 TFLOP/s, over the H200's FP32
   * peak (67 TFLOP/s), under its TF32 one (535 TFLOP/s) */
  opt.plausibility = (struct tb_plausibility_facts){4000.0, "", 9, 0, 132, 1980000};
  double one_ms[] = {1e6};
  r = gate_case(TB_OP_GEMM, (struct tb_shape){4096, 4096, 4096}, "cuda", one_ms, 1);
  r.c.realization = TB_REALIZATION_SIMT;
  tb_defend_plausible(&opt, &r);
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_FAILED);
  assert_non_null(
      strstr(r.defences[TB_DEFENCE_PLAUSIBLE].detail, "GFLOP/s, above 1.05 x the peak"));
  assert_true(fabs(r.plausible.peak_gflops - 132 * 256 * 1.98) < 1e-6);
  r.c.realization = TB_REALIZATION_TENSOR;
  tb_defend_plausible(&opt, &r);
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_PASSED);
  assert_non_null(strstr(r.plausible.peak_basis, "2048 TF32 tensor-core FLOP/cycle"));
  /* a compute capability without a known rate: the bandwidth alone */
  opt.plausibility.cc_major = 12;
  tb_defend_plausible(&opt, &r);
  assert_int_equal(r.defences[TB_DEFENCE_PLAUSIBLE].outcome, TB_DEFENCE_PASSED);
  assert_true(isnan(r.plausible.peak_gflops));
  assert_non_null(strstr(r.defences[TB_DEFENCE_PLAUSIBLE].detail, "FLOP rate not judged"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_op_on_awkward_shapes),
      cmocka_unit_test(unwritten_tail_makes_the_case_invalid),
      cmocka_unit_test(cheats_are_caught_by_their_defence),
      cmocka_unit_test(plausibility_gate),
      cmocka_unit_test(gemm_on_odd_shapes),
      cmocka_unit_test(tf32_rounding),
      cmocka_unit_test(unknown_provider_and_backend),
      cmocka_unit_test(cpu_plan_step),
      cmocka_unit_test(cublas_needs_the_cuda_backend),
      cmocka_unit_test(user_provider_needs_a_library_and_a_backend),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
