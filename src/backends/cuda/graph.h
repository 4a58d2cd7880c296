/* A batch of a provider's calls as one CUDA graph (the device phase's graph
 * mode, docs/method.md §2.3): captured from the provider's own launches on
 * its stream, so the graph rotates over the same buffer sets as eager calls,
 * then instantiated; replaying it is one cuGraphLaunch. */
#ifndef TB_BACKENDS_CUDA_GRAPH_H
#define TB_BACKENDS_CUDA_GRAPH_H

#include "backends/cuda/driver.h"
#include "core/error.h"

struct tb_cuda_graph {
  CUgraph graph;    /* NULL when none */
  CUgraphExec exec; /* NULL when none */
};

/* Issues `calls` calls on the stream being captured. */
typedef enum tb_status (*tb_cuda_issue)(void *context, unsigned long calls, struct tb_error *err);

/* Captures issue(context, calls) on `stream` into *g (replacing what it
 * held). Every failure ends the capture, destroys what was made and says
 * which step failed: no capture stays open, no graph leaks. */
enum tb_status tb_cuda_graph_capture(const struct tb_cuda *cu, CUstream stream, tb_cuda_issue issue,
                                     void *context, unsigned long calls, struct tb_cuda_graph *g,
                                     struct tb_error *err);

/* One replay on `stream` (asynchronous). */
enum tb_status tb_cuda_graph_launch(const struct tb_cuda *cu, const struct tb_cuda_graph *g,
                                    CUstream stream, struct tb_error *err);

/* Of `count` graphs whose calls begin at buffer sets first_set[], the one
 * beginning nearest at or after `cursor` in a rotation of `sets` sets: the
 * least recently used sets, as the next eager call would take them. */
unsigned tb_cuda_next_graph(const unsigned *first_set, unsigned count, unsigned cursor,
                            unsigned sets);

/* Destroys the graph, if any (idempotent). */
void tb_cuda_graph_destroy(const struct tb_cuda *cu, struct tb_cuda_graph *g);

#endif
