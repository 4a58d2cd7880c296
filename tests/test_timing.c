/* The timing library's state machine against the fake driver/CUPTI table:
 * every misuse and every injected failure fails closed and leaves nothing
 * enabled, and the next session works. (cupti.md §6, items 3-7 and 10.) */
#include <dlfcn.h>
#include <string.h>

#include "fake_cuda.h"
#include "test_support.h"
#include "tilebench/timing.h"

#define STREAM_A ((uintptr_t)7)
#define STREAM_B ((uintptr_t)9)

/* Nothing of a session is left: no subscriber, records, callbacks or events. */
static void assert_restored(void) {
  assert_int_equal(F.subscribed, 0);
  assert_int_equal(F.activity_enabled, 0);
  assert_int_equal(F.enabled_callbacks, 0);
  assert_int_equal(F.events_live, 0);
}

/* A full probe cycle that must succeed: proves the state was clean. */
static void assert_probe_works(void) {
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 16), TB_TIMING_OK);
  fake_launch(STREAM_A, FAKE_RUNTIME);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  assert_int_equal(r.kernels_seen, 1);
  assert_restored();
}

static int setup(void **state) {
  fake_install();
  return 0;
}

static void abi_and_names(void **state) {
  assert_int_equal(tb_timing_abi_version(), TB_TIMING_ABI_VERSION);
  assert_int_equal(TB_TIMING_ABI_VERSION, 2);
  assert_string_equal(tb_timing_code_name(TB_TIMING_E_CAPACITY), "TB_TIMING_E_CAPACITY");
  assert_string_equal(tb_timing_code_name(TB_TIMING_E_HOLD_TIMEOUT), "TB_TIMING_E_HOLD_TIMEOUT");
  assert_string_equal(tb_timing_code_name(-999), "unknown");
  assert_int_equal(sizeof(struct tb_timing_result), 160);
  assert_int_equal(tb_timing_result_struct_size(), 160);
}

static void no_gpu_is_a_distinct_error(void **state) {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *loadable = driver ? driver : dlopen("libcuda.so.1", RTLD_NOW);
  if (loadable != NULL) {
    skip(); /* a machine with a driver: this is checked by the GPU script instead */
  }
  tb_timing_install_api(NULL);
  assert_int_equal(tb_timing_begin_control(NULL), TB_TIMING_E_NO_GPU);
  assert_int_equal(tb_timing_begin_probe(NULL, 8), TB_TIMING_E_NO_GPU);
  assert_non_null(strstr(tb_timing_last_error(), "libcuda.so.1"));
  struct tb_timing_gpu_state g = {.struct_size = sizeof g};
  assert_int_equal(tb_timing_gpu_state(&g), TB_TIMING_E_NO_GPU);
  assert_int_equal(g.valid, 0);
  fake_install();
}

static void control_measures_event_time(void **state) {
  assert_int_equal(tb_timing_begin_control((void *)STREAM_A), TB_TIMING_OK);
  for (int i = 0; i < 3; ++i) {
    fake_launch(STREAM_A, FAKE_RUNTIME);
  }
  assert_int_equal(tb_timing_declare_calls(3), TB_TIMING_OK);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  assert_int_equal(r.scope, TB_TIMING_SCOPE_CONTROL);
  assert_int_equal(r.declared_calls, 3);
  assert_true(r.gpu_elapsed_ns > 2999.0 && r.gpu_elapsed_ns < 3001.0); /* 3 x 1000 ns */
  assert_int_equal(r.kernels_seen, 0); /* control installs no hooks */
  assert_int_equal(F.subscribed, 0);   /* and never touches CUPTI */
  assert_true(r.end_host_ns >= r.begin_host_ns);
  assert_restored();
  assert_string_equal(tb_timing_last_error(), "");
}

static void misuse_fails_closed(void **state) {
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_E_NOT_ACTIVE);
  assert_non_null(strstr(tb_timing_last_error(), "end without begin"));
  assert_int_equal(tb_timing_declare_calls(1), TB_TIMING_E_NOT_ACTIVE);
  assert_int_equal(tb_timing_abort(), TB_TIMING_E_NOT_ACTIVE);
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 0), TB_TIMING_E_ARGUMENT);
  F.have_context = 0;
  assert_int_equal(tb_timing_begin_control((void *)STREAM_A), TB_TIMING_E_NO_CONTEXT);
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 4), TB_TIMING_E_NO_CONTEXT);
  F.have_context = 1;
  F.capturing = 1;
  assert_int_equal(tb_timing_begin_control((void *)STREAM_A), TB_TIMING_E_CAPTURING);
  F.capturing = 0;
  /* control with nothing declared is an empty batch */
  assert_int_equal(tb_timing_begin_control((void *)STREAM_A), TB_TIMING_OK);
  fake_launch(STREAM_A, FAKE_RUNTIME);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_E_EMPTY);
  assert_true(r.gpu_elapsed_ns == 0.0); /* no timing on failure */
  assert_restored();
  /* a wrong struct size closes the session without writing a result */
  assert_int_equal(tb_timing_begin_control((void *)STREAM_A), TB_TIMING_OK);
  struct tb_timing_result small = tb_timing_result_for(NULL, 0);
  small.struct_size = 64;
  assert_int_equal(tb_timing_end(&small), TB_TIMING_E_ARGUMENT);
  assert_restored();
  assert_probe_works();
}

/* Nested begin is refused in all four combinations; the open session is
 * untouched and still ends correctly. */
static void nested_begin_refused(void **state) {
  for (int outer = 0; outer < 2; ++outer) {
    for (int inner = 0; inner < 2; ++inner) {
      int rc = outer ? tb_timing_begin_probe((void *)STREAM_A, 16)
                     : tb_timing_begin_control((void *)STREAM_A);
      assert_int_equal(rc, TB_TIMING_OK);
      rc = inner ? tb_timing_begin_probe((void *)STREAM_B, 16)
                 : tb_timing_begin_control((void *)STREAM_B);
      assert_int_equal(rc, TB_TIMING_E_BUSY);
      assert_non_null(strstr(tb_timing_last_error(), "nested begin"));
      fake_launch(STREAM_A, FAKE_RUNTIME);
      tb_timing_declare_calls(1);
      struct tb_timing_result r = tb_timing_result_for(NULL, 0);
      assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
      assert_int_equal(r.scope, outer ? TB_TIMING_SCOPE_PROBE : TB_TIMING_SCOPE_CONTROL);
      assert_restored();
    }
  }
}

static void probe_counts_launches_and_kernels(void **state) {
  for (int driver_id = 0; driver_id < 2; ++driver_id) {
    F.kernel_carries_driver_id = driver_id; /* either correlation scheme must match */
    struct tb_timing_kernel kernels[32];
    assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 32), TB_TIMING_OK);
    assert_int_equal(F.subscribed, 1);
    assert_int_equal(F.activity_enabled, 1);
    for (int i = 0; i < 5; ++i) {
      fake_launch(STREAM_A, FAKE_RUNTIME);
    }
    fake_launch(STREAM_B, FAKE_DRIVER);
    fake_launch(STREAM_B, FAKE_DRIVER);
    fake_graph_launch(STREAM_A, 3);
    assert_int_equal(tb_timing_declare_calls(6), TB_TIMING_OK);
    struct tb_timing_result r = tb_timing_result_for(kernels, 32);
    assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
    assert_int_equal(r.scope, TB_TIMING_SCOPE_PROBE);
    assert_int_equal(r.counted_launches, 8); /* 5 runtime + 2 driver + 1 graph */
    assert_int_equal(r.declared_calls, 6);   /* recorded beside the count, not checked */
    assert_int_equal(r.kernels_seen, 10);    /* the graph expands to 3 */
    assert_int_equal(r.kernels_written, 10);
    assert_int_equal(r.streams_seen, 2);
    assert_int_equal(r.side_stream_kernels, 2);
    assert_int_equal(r.timed_stream_id, (uint32_t)STREAM_A);
    assert_true(r.kernel_sum_ns == 10 * 1000.0);
    assert_true(r.gpu_elapsed_ns > 9999.0 && r.gpu_elapsed_ns < 10001.0);
    assert_true(r.calibration_width_ns >= 0.0);
    assert_int_equal(r.kernels_before_launch, 0);
    for (int k = 0; k < 10; ++k) { /* converted to the host clock */
      assert_true(kernels[k].start_ns >= r.begin_host_ns);
      assert_true(kernels[k].end_ns <= r.end_host_ns);
    }
    assert_restored();
  }
  assert_int_equal(F.finalize_calls, 2); /* detached after each session */
}

static void capacity_overflow_fails_closed(void **state) {
  struct tb_timing_kernel kernels[10];
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 10), TB_TIMING_OK);
  for (int i = 0; i < 100; ++i) {
    fake_launch(STREAM_A, FAKE_RUNTIME);
  }
  struct tb_timing_result r = tb_timing_result_for(kernels, 10);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_E_CAPACITY);
  assert_int_equal(r.kernels_written, 0); /* no intervals */
  assert_int_equal(r.kernels_seen, 0);
  assert_non_null(strstr(tb_timing_last_error(), "capacity 10"));
  assert_restored();
  assert_probe_works();
}

static void dropped_records_fail_closed(void **state) {
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 16), TB_TIMING_OK);
  fake_launch(STREAM_A, FAKE_RUNTIME);
  F.drops_to_report = 3;
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_E_DROPPED);
  assert_restored();
  /* no buffer left: every record in its own buffer exhausts the slabs */
  F.records_per_buffer = 1;
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 1), TB_TIMING_OK);
  for (int i = 0; i < 64; ++i) {
    fake_launch(STREAM_A, FAKE_RUNTIME);
  }
  assert_int_equal(tb_timing_end(&r), TB_TIMING_E_DROPPED);
  assert_non_null(strstr(tb_timing_last_error(), "no buffer"));
  assert_restored();
  F.records_per_buffer = 0;
  assert_probe_works();
}

static void empty_mismatched_and_untimed_probes(void **state) {
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 16), TB_TIMING_OK);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_E_EMPTY);
  assert_restored();
  const enum fake_launch_kind bad[] = {FAKE_UNHOOKED, FAKE_NO_KERNEL, FAKE_BAD_TIMESTAMPS};
  const int expected[] = {TB_TIMING_E_MISMATCH, TB_TIMING_E_MISMATCH, TB_TIMING_E_TIMESTAMPS};
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 16), TB_TIMING_OK);
    fake_launch(STREAM_A, FAKE_RUNTIME);
    fake_launch(STREAM_A, bad[i]);
    assert_int_equal(tb_timing_end(&r), expected[i]);
    assert_int_equal(r.kernels_seen, 0);
    assert_restored();
  }
  assert_probe_works();
}

static void refusals_name_their_cause(void **state) {
  F.foreign_subscriber = 1;
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 8), TB_TIMING_E_CUPTI_BUSY);
  assert_non_null(strstr(tb_timing_last_error(), "Nsight Systems"));
  F.foreign_subscriber = 0;
  assert_restored();
  F.cupti_version = 130200;
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 8), TB_TIMING_E_CUPTI_VERSION);
  assert_non_null(strstr(tb_timing_last_error(), "130200"));
  F.cupti_version = 130001;
  assert_restored();
  fake_remove_cupti();
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 8), TB_TIMING_E_CUPTI_MISSING);
  assert_non_null(strstr(tb_timing_last_error(), "libcupti.so.13"));
  assert_int_equal(tb_timing_begin_control((void *)STREAM_A),
                   TB_TIMING_OK); /* control still works */
  tb_timing_declare_calls(1);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  fake_launch(STREAM_A, FAKE_RUNTIME);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
}

/* A failure injected at each step of begin_probe undoes the steps before it. */
static void fault_at_every_begin_step(void **state) {
  static const struct {
    const char *call;
    int code;
  } steps[] = {
      {"cuCtxSynchronize", TB_TIMING_E_CUDA},
      {"cuptiSubscribe_v2", TB_TIMING_E_CUPTI},
      {"cuptiGetTimestamp", TB_TIMING_E_CUPTI},
      {"cuptiActivityRegisterCallbacks", TB_TIMING_E_CUPTI},
      {"cuptiEnableCallback", TB_TIMING_E_CUPTI},
      {"cuptiGetStreamIdEx", TB_TIMING_E_CUPTI},
      {"cuptiActivityEnable", TB_TIMING_E_CUPTI},
      {"cuEventCreate", TB_TIMING_E_CUDA},
      {"cuEventRecord", TB_TIMING_E_CUDA},
  };
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i) {
    F.fail_at = steps[i].call;
    int rc = tb_timing_begin_probe((void *)STREAM_A, 8);
    if (rc != steps[i].code) {
      print_error("step %s: got %s\n", steps[i].call, tb_timing_code_name(rc));
    }
    assert_int_equal(rc, steps[i].code);
    F.fail_at = NULL;
    assert_restored();
    assert_probe_works();
  }
}

static void fifty_cycles(void **state) {
  int before = F.finalize_calls;
  for (int i = 0; i < 50; ++i) {
    assert_probe_works();
    assert_int_equal(tb_timing_begin_control((void *)STREAM_A), TB_TIMING_OK);
    fake_launch(STREAM_A, FAKE_RUNTIME);
    tb_timing_declare_calls(1);
    struct tb_timing_result r = tb_timing_result_for(NULL, 0);
    assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  }
  assert_int_equal(F.finalize_calls - before, 50);
  assert_int_equal(F.unsubscribe_calls, 0); /* detached through the callback path */
}

static void abort_closes_an_open_session(void **state) {
  assert_int_equal(tb_timing_begin_probe((void *)STREAM_A, 8), TB_TIMING_OK);
  assert_int_equal(tb_timing_abort(), TB_TIMING_OK);
  assert_restored();
  assert_probe_works();
}

/* A held session: the hold is launched before the start event, the calls
 * queue behind it, end releases it; the result says it was held. */
static void held_control_times_queued_calls(void **state) {
  assert_int_equal(tb_timing_begin_control_held((void *)STREAM_A, 1000000000ull), TB_TIMING_OK);
  assert_int_equal(F.holds_launched, 1);
  assert_int_equal(F.modules_loaded, 1);
  for (int i = 0; i < 3; ++i) {
    fake_launch(STREAM_A, FAKE_DRIVER);
  }
  assert_int_equal(tb_timing_declare_calls(3), TB_TIMING_OK);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  assert_int_equal(r.held, 1);
  assert_int_equal(r.declared_calls, 3);
  assert_int_equal(r.counted_launches, 0);
  assert_true(r.gpu_elapsed_ns > 2999.0 && r.gpu_elapsed_ns < 3001.0);
  assert_false(fake_hold_pending_unreleased());
  assert_restored();
  /* the module is loaded once per context; a plain control is not held */
  assert_int_equal(tb_timing_begin_control_held((void *)STREAM_A, 1000000ull), TB_TIMING_OK);
  tb_timing_declare_calls(1);
  fake_launch(STREAM_A, FAKE_DRIVER);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  assert_int_equal(F.modules_loaded, 1);
  assert_int_equal(tb_timing_begin_control((void *)STREAM_A), TB_TIMING_OK);
  tb_timing_declare_calls(1);
  fake_launch(STREAM_A, FAKE_DRIVER);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  assert_int_equal(r.held, 0);
  assert_int_equal(F.holds_launched, 2);
}

/* A hold its time-out released (a stuck flag, or a synchronising call
 * inside the session) fails closed, and the next session works. */
static void hold_time_out_fails_closed(void **state) {
  F.hold_stuck = 1;
  assert_int_equal(tb_timing_begin_control_held((void *)STREAM_A, 1000ull), TB_TIMING_OK);
  fake_launch(STREAM_A, FAKE_DRIVER);
  tb_timing_declare_calls(1);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_E_HOLD_TIMEOUT);
  assert_non_null(strstr(tb_timing_last_error(), "time-out released the stream"));
  assert_true(r.gpu_elapsed_ns == 0.0);
  assert_restored();
  F.hold_stuck = 0;
  assert_int_equal(tb_timing_begin_control_held((void *)STREAM_A, 1000ull), TB_TIMING_OK);
  fake_launch(STREAM_A, FAKE_DRIVER);
  tb_timing_declare_calls(1);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  assert_probe_works();
}

/* A held probe: the library's hold launch and its kernel record are left
 * out (only the calls are counted), the result says it was held, a stuck
 * hold fails closed, and misuse is refused with nothing left open. */
static void held_probe_counts_only_the_calls(void **state) {
  (void)state;
  assert_int_equal(tb_timing_begin_probe_held((void *)STREAM_A, 16, 1000000000ull), TB_TIMING_OK);
  assert_int_equal(F.holds_launched, 1);
  for (int i = 0; i < 3; ++i) {
    fake_launch(STREAM_A, FAKE_RUNTIME);
  }
  assert_int_equal(tb_timing_declare_calls(3), TB_TIMING_OK);
  struct tb_timing_result r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  assert_int_equal(r.held, 1);
  assert_int_equal(r.kernels_seen, 3);
  assert_int_equal(r.counted_launches, 3);
  assert_int_equal(r.side_stream_kernels, 0);
  assert_false(fake_hold_pending_unreleased());

  F.hold_stuck = 1;
  assert_int_equal(tb_timing_begin_probe_held((void *)STREAM_A, 16, 1000ull), TB_TIMING_OK);
  fake_launch(STREAM_A, FAKE_RUNTIME);
  assert_int_equal(tb_timing_declare_calls(1), TB_TIMING_OK);
  r = tb_timing_result_for(NULL, 0);
  assert_int_equal(tb_timing_end(&r), TB_TIMING_E_HOLD_TIMEOUT);
  assert_int_equal(r.kernels_seen, 0);
  F.hold_stuck = 0;

  assert_int_equal(tb_timing_begin_probe_held((void *)STREAM_A, 0, 1000ull), TB_TIMING_E_ARGUMENT);
  assert_int_equal(tb_timing_begin_probe_held((void *)STREAM_A, 16, 0), TB_TIMING_E_ARGUMENT);
  F.fail_at = "cuLaunchKernel";
  assert_int_equal(tb_timing_begin_probe_held((void *)STREAM_A, 16, 1000ull), TB_TIMING_E_CUDA);
  F.fail_at = NULL;
  assert_false(fake_hold_pending_unreleased());
  assert_probe_works();
}

/* Misuse of a held begin, and a failure at each of its steps: refused,
 * nothing left open, the hold never left armed, the next session works. */
static void held_begin_fails_closed(void **state) {
  assert_int_equal(tb_timing_begin_control_held((void *)STREAM_A, 0), TB_TIMING_E_ARGUMENT);
  F.capturing = 1;
  assert_int_equal(tb_timing_begin_control_held((void *)STREAM_A, 1000ull), TB_TIMING_E_CAPTURING);
  F.capturing = 0;
  assert_int_equal(tb_timing_begin_control_held((void *)STREAM_A, 1000ull), TB_TIMING_OK);
  assert_int_equal(tb_timing_begin_control_held((void *)STREAM_B, 1000ull), TB_TIMING_E_BUSY);
  assert_int_equal(tb_timing_abort(), TB_TIMING_OK);
  assert_false(fake_hold_pending_unreleased()); /* abort released it */
  assert_restored();
  /* (the mapped words are allocated once per process, by the first hold) */
  static const char *const steps[] = {"cuModuleLoadData", "cuLaunchKernel", "cuEventCreate",
                                      "cuEventRecord"};
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i) {
    fake_install(); /* a new context: the hold is loaded again */
    F.fail_at = steps[i];
    int rc = tb_timing_begin_control_held((void *)STREAM_A, 1000ull);
    F.fail_at = NULL;
    if (rc != TB_TIMING_E_CUDA) {
      print_error("step %s: got %s\n", steps[i], tb_timing_code_name(rc));
    }
    assert_int_equal(rc, TB_TIMING_E_CUDA);
    assert_false(fake_hold_pending_unreleased());
    assert_restored();
    assert_int_equal(tb_timing_begin_control_held((void *)STREAM_A, 1000ull), TB_TIMING_OK);
    fake_launch(STREAM_A, FAKE_DRIVER);
    tb_timing_declare_calls(1);
    struct tb_timing_result r = tb_timing_result_for(NULL, 0);
    assert_int_equal(tb_timing_end(&r), TB_TIMING_OK);
  }
}

static void gpu_state_without_nvml(void **state) {
  struct tb_timing_gpu_state g;
  memset(&g, 0, sizeof g);
  assert_int_equal(tb_timing_gpu_state(&g), TB_TIMING_E_ARGUMENT);
  g.struct_size = sizeof g;
  assert_int_equal(tb_timing_gpu_state(&g), TB_TIMING_OK);
  assert_int_equal(g.valid, 0);
  assert_true(g.host_ns > 0);
  assert_non_null(strstr(tb_timing_last_error(), "NVML"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(abi_and_names, setup),
      cmocka_unit_test_setup(no_gpu_is_a_distinct_error, setup),
      cmocka_unit_test_setup(control_measures_event_time, setup),
      cmocka_unit_test_setup(misuse_fails_closed, setup),
      cmocka_unit_test_setup(nested_begin_refused, setup),
      cmocka_unit_test_setup(probe_counts_launches_and_kernels, setup),
      cmocka_unit_test_setup(capacity_overflow_fails_closed, setup),
      cmocka_unit_test_setup(dropped_records_fail_closed, setup),
      cmocka_unit_test_setup(empty_mismatched_and_untimed_probes, setup),
      cmocka_unit_test_setup(refusals_name_their_cause, setup),
      cmocka_unit_test_setup(fault_at_every_begin_step, setup),
      cmocka_unit_test_setup(fifty_cycles, setup),
      cmocka_unit_test_setup(abort_closes_an_open_session, setup),
      cmocka_unit_test_setup(gpu_state_without_nvml, setup),
      cmocka_unit_test_setup(held_control_times_queued_calls, setup),
      cmocka_unit_test_setup(hold_time_out_fails_closed, setup),
      cmocka_unit_test_setup(held_begin_fails_closed, setup),
      cmocka_unit_test_setup(held_probe_counts_only_the_calls, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
