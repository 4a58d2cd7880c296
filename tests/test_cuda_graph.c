/* The CUDA backend's graph capture against a fake driver table: a failure
 * at every step (begin, a call, end, instantiate, launch) leaves no capture
 * open and no graph or executable graph alive, and says which step failed. */
#include <string.h>

#include "backends/cuda/graph.h"
#include "test_support.h"

static struct {
  const char *fail_at;
  int capturing, graphs, execs, launches, issued;
} G;

static int failing(const char *name) {
  return G.fail_at != NULL && strcmp(G.fail_at, name) == 0;
}
static CUresult f_begin(CUstream s, CUstreamCaptureMode mode) {
  if (failing("begin")) {
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  G.capturing = 1;
  return CUDA_SUCCESS;
}
static CUresult f_end(CUstream s, CUgraph *graph) {
  G.capturing = 0;
  if (failing("end")) {
    *graph = NULL; /* an invalidated capture yields no graph */
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  *graph = (CUgraph)(uintptr_t)0x6A;
  G.graphs++;
  return CUDA_SUCCESS;
}
static CUresult f_instantiate(CUgraphExec *exec, CUgraph graph, unsigned long long flags) {
  if (failing("instantiate")) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *exec = (CUgraphExec)(uintptr_t)0x6B;
  G.execs++;
  return CUDA_SUCCESS;
}
static CUresult f_launch(CUgraphExec exec, CUstream s) {
  if (failing("launch")) {
    return CUDA_ERROR_LAUNCH_FAILED;
  }
  G.launches++;
  return CUDA_SUCCESS;
}
static CUresult f_exec_destroy(CUgraphExec exec) {
  G.execs--;
  return CUDA_SUCCESS;
}
static CUresult f_destroy(CUgraph graph) {
  G.graphs--;
  return CUDA_SUCCESS;
}
static CUresult f_error_string(CUresult rc, const char **text) {
  *text = "fake CUDA error";
  return CUDA_SUCCESS;
}

static const struct tb_cuda fake = {
    .cuGetErrorString = f_error_string,
    .cuStreamBeginCapture = f_begin,
    .cuStreamEndCapture = f_end,
    .cuGraphInstantiateWithFlags = f_instantiate,
    .cuGraphLaunch = f_launch,
    .cuGraphExecDestroy = f_exec_destroy,
    .cuGraphDestroy = f_destroy,
};

static enum tb_status issue(void *context, unsigned long calls, struct tb_error *err) {
  if (failing("call")) {
    return tb_fail(err, TB_ERR_RUN, "cuLaunchKernel failed: operation not permitted");
  }
  G.issued += (int)calls;
  return TB_OK;
}

static void assert_nothing_left(void) {
  assert_int_equal(G.capturing, 0);
  assert_int_equal(G.graphs, 0);
  assert_int_equal(G.execs, 0);
}

static void capture_replay_destroy(void **state) {
  memset(&G, 0, sizeof G);
  struct tb_cuda_graph g = {0};
  struct tb_error err = {0};
  assert_int_equal(tb_cuda_graph_capture(&fake, NULL, issue, NULL, 12, &g, &err), TB_OK);
  assert_int_equal(G.issued, 12);
  assert_int_equal(G.capturing, 0);
  assert_int_equal(tb_cuda_graph_launch(&fake, &g, NULL, &err), TB_OK);
  assert_int_equal(tb_cuda_graph_launch(&fake, &g, NULL, &err), TB_OK);
  assert_int_equal(G.launches, 2);
  /* capturing again replaces the graph */
  assert_int_equal(tb_cuda_graph_capture(&fake, NULL, issue, NULL, 3, &g, &err), TB_OK);
  assert_int_equal(G.graphs, 1);
  assert_int_equal(G.execs, 1);
  tb_cuda_graph_destroy(&fake, &g);
  tb_cuda_graph_destroy(&fake, &g); /* idempotent */
  assert_nothing_left();
  assert_int_equal(tb_cuda_graph_launch(&fake, &g, NULL, &err), TB_ERR_RUN);
  assert_non_null(strstr(err.message, "no graph"));
}

static void every_step_failing_leaves_nothing(void **state) {
  static const struct {
    const char *step, *message;
  } steps[] = {
      {"begin", "cuStreamBeginCapture failed"},
      {"call", "a call could not be captured into a graph: cuLaunchKernel failed"},
      {"end", "cuStreamEndCapture (a call did something a graph cannot hold) failed"},
      {"instantiate", "cuGraphInstantiateWithFlags failed"},
  };
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i) {
    memset(&G, 0, sizeof G);
    G.fail_at = steps[i].step;
    struct tb_cuda_graph g = {0};
    struct tb_error err = {0};
    assert_int_equal(tb_cuda_graph_capture(&fake, NULL, issue, NULL, 4, &g, &err), TB_ERR_RUN);
    if (strstr(err.message, steps[i].message) == NULL) {
      print_error("step %s: %s\n", steps[i].step, err.message);
    }
    assert_non_null(strstr(err.message, steps[i].message));
    assert_nothing_left();
    assert_null(g.graph);
    assert_null(g.exec);
  }
  memset(&G, 0, sizeof G);
  struct tb_cuda_graph g = {0};
  struct tb_error err = {0};
  assert_int_equal(tb_cuda_graph_capture(&fake, NULL, issue, NULL, 4, &g, &err), TB_OK);
  G.fail_at = "launch";
  assert_int_equal(tb_cuda_graph_launch(&fake, &g, NULL, &err), TB_ERR_RUN);
  assert_non_null(strstr(err.message, "cuGraphLaunch failed"));
  tb_cuda_graph_destroy(&fake, &g);
  assert_nothing_left();
}

/* The replay takes the graph whose sets begin nearest ahead of the cursor:
 * after an eager batch the next sets, never those the batch just touched. */
static void a_replay_takes_the_sets_ahead_of_the_cursor(void **state) {
  /* 10 sets, graphs of 4 calls captured from set 2: they begin at 2, 6, 0 */
  const unsigned first[] = {2, 6, 0};
  assert_int_equal(tb_cuda_next_graph(first, 3, 2, 10), 0); /* exactly at a graph */
  assert_int_equal(tb_cuda_next_graph(first, 3, 3, 10), 1); /* mid graph 0: the next one */
  assert_int_equal(tb_cuda_next_graph(first, 3, 7, 10), 2); /* wraps to set 0 */
  assert_int_equal(tb_cuda_next_graph(first, 3, 1, 10), 0);
  /* graphs capped short of the rotation (64 sets, two graphs of 4 from 0):
   * past the last the rotation's start comes next */
  const unsigned capped[] = {0, 4};
  assert_int_equal(tb_cuda_next_graph(capped, 2, 20, 64), 0);
  assert_int_equal(tb_cuda_next_graph(capped, 2, 1, 64), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(capture_replay_destroy),
      cmocka_unit_test(every_step_failing_leaves_nothing),
      cmocka_unit_test(a_replay_takes_the_sets_ahead_of_the_cursor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
