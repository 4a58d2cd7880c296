#include "backends/cuda/graph.h"

#include <stddef.h>

void tb_cuda_graph_destroy(const struct tb_cuda *cu, struct tb_cuda_graph *g) {
  if (g->exec != NULL) {
    cu->cuGraphExecDestroy(g->exec);
  }
  if (g->graph != NULL) {
    cu->cuGraphDestroy(g->graph);
  }
  g->exec = NULL;
  g->graph = NULL;
}

enum tb_status tb_cuda_graph_capture(const struct tb_cuda *cu, CUstream stream, tb_cuda_issue issue,
                                     void *context, unsigned long calls, struct tb_cuda_graph *g,
                                     struct tb_error *err) {
  tb_cuda_graph_destroy(cu, g);
  /* Thread-local: another thread's unrelated CUDA calls are not an error,
   * but a synchronising call of this thread inside the capture is. */
  CUresult rc = cu->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (rc != CUDA_SUCCESS) {
    return tb_cuda_fail(err, "cuStreamBeginCapture", rc);
  }
  struct tb_error issued = {0};
  enum tb_status status = issue(context, calls, &issued);
  rc = cu->cuStreamEndCapture(stream, &g->graph); /* always: the capture must not stay open */
  if (status != TB_OK) {
    tb_cuda_graph_destroy(cu, g);
    return tb_fail(err, issued.status, "a call could not be captured into a graph: %s",
                   issued.message);
  }
  if (rc != CUDA_SUCCESS) {
    tb_cuda_graph_destroy(cu, g);
    return tb_cuda_fail(err, "cuStreamEndCapture (a call did something a graph cannot hold)", rc);
  }
  rc = cu->cuGraphInstantiateWithFlags(&g->exec, g->graph, 0);
  if (rc != CUDA_SUCCESS) {
    g->exec = NULL;
    tb_cuda_graph_destroy(cu, g);
    return tb_cuda_fail(err, "cuGraphInstantiateWithFlags", rc);
  }
  return TB_OK;
}

enum tb_status tb_cuda_graph_launch(const struct tb_cuda *cu, const struct tb_cuda_graph *g,
                                    CUstream stream, struct tb_error *err) {
  if (g->exec == NULL) {
    return tb_fail(err, TB_ERR_RUN, "no graph has been captured");
  }
  CUresult rc = cu->cuGraphLaunch(g->exec, stream);
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "cuGraphLaunch", rc);
}

unsigned tb_cuda_next_graph(const unsigned *first_set, unsigned count, unsigned cursor,
                            unsigned sets) {
  unsigned best = 0, best_distance = sets;
  for (unsigned g = 0; g < count; ++g) {
    unsigned distance = (first_set[g] + sets - cursor % sets) % sets;
    if (distance < best_distance) {
      best = g;
      best_distance = distance;
    }
  }
  return best;
}
