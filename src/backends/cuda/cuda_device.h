/* What every provider on the CUDA backend shares, whatever computes (our
 * generated kernels, cuBLAS): device 0's primary context and facts, one
 * non-blocking stream, the case's rotating device buffer sets, and the
 * primitives over them (poison, read the output, synchronise). A provider's
 * state starts with a struct tb_cuda_device, so the tb_cuda_device_op_*
 * functions serve as its provider ops. */
#ifndef TB_BACKENDS_CUDA_CUDA_DEVICE_H
#define TB_BACKENDS_CUDA_CUDA_DEVICE_H

#include "backends/cuda/device_buffers.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/graph.h"
#include "providers/provider.h"

#define TB_CUDA_MAX_GRAPHS 64

struct tb_cuda_device {
  const struct tb_cuda *cu;
  struct tb_device_info info;
  CUcontext context;
  CUstream stream;
  /* the prepared case */
  const struct tb_case_data *data;
  struct tb_device_buffers buffers;
  unsigned cursor; /* next buffer set */
  size_t view_offset;
  /* The graph mode's batches: consecutive graphs of `calls` calls that
   * together walk the whole rotation (one graph alone would keep re-reading
   * the same few sets, warm in L2). graph g's calls begin at buffer set
   * graph_first_set[g]; a replay takes the graph that begins nearest ahead
   * of the cursor and moves the cursor past its sets, so eager calls and
   * replays walk the sets as one sequence and a replay never re-reads sets
   * an eager batch of the same sample has just left in L2. */
  struct tb_cuda_graph graphs[TB_CUDA_MAX_GRAPHS];
  unsigned graph_first_set[TB_CUDA_MAX_GRAPHS];
  unsigned graph_count;
  unsigned long graph_calls;
  /* timed_outputs (method.md §8): per set, whether a call outside a graph
   * capture used it since the case was loaded (its output was poisoned at
   * loading, so a set a call reached and a kernel never wrote shows it) */
  unsigned char *reached;
  bool capturing;
};

/* A call's device pointers: x (or a), y (b), weight, bias with the view's
 * offset applied, the output and the workspace, of one buffer set. */
struct tb_case_operands {
  CUdeviceptr x, y, weight, bias, out, workspace;
  unsigned set; /* which buffer set */
};

/* Loads the driver, enters device 0, reads its facts and creates the
 * stream; TB_ERR_UNAVAILABLE (with the reason) without a usable GPU. On
 * failure the caller still closes `d`. */
enum tb_status tb_cuda_device_open(struct tb_cuda_device *d, struct tb_error *err);
void tb_cuda_device_close(struct tb_cuda_device *d);

/* Makes the context current and copies the case's inputs into the buffer
 * sets (with `workspace_floats` of scratch each), every output poisoned;
 * the rotation starts at set 0. */
enum tb_status tb_cuda_device_load_case(struct tb_cuda_device *d, const struct tb_case *c,
                                        const struct tb_case_data *data, size_t workspace_floats,
                                        struct tb_error *err);
/* Waits for the stream and frees the buffer sets. */
void tb_cuda_device_unload_case(struct tb_cuda_device *d);

/* The operands of the next call: the next buffer set of the rotation. */
struct tb_case_operands tb_cuda_device_next_operands(struct tb_cuda_device *d);
/* Buffer set `index`'s operands, the cursor left where it is. */
struct tb_case_operands tb_cuda_device_operands(const struct tb_cuda_device *d, unsigned index);

/* The buffer sets as provider details. */
void tb_cuda_device_buffer_facts(const struct tb_cuda_device *d, struct tb_buffer_facts *out);

/* Provider ops for any state that starts with a struct tb_cuda_device. */
enum tb_status tb_cuda_device_op_synchronize(struct tb_provider *p, struct tb_error *err);
/* Poisons every set's output and restarts the rotation at set 0, so the
 * validated call writes set 0. */
enum tb_status tb_cuda_device_op_poison(struct tb_provider *p, struct tb_error *err);
enum tb_status tb_cuda_device_op_read_output(struct tb_provider *p, float *dst, size_t count,
                                             struct tb_error *err);
void *tb_cuda_device_op_stream(const struct tb_provider *p);
bool tb_cuda_device_op_has_device(const struct tb_provider *p);
/* The graph mode (provider.h): the provider's own launch op captured on the
 * device's stream, as many graphs as the rotation needs (at most
 * TB_CUDA_MAX_GRAPHS); a replay launches the next one. They go with the case. */
enum tb_status tb_cuda_device_op_capture_graph(struct tb_provider *p, unsigned long calls,
                                               struct tb_error *err);
enum tb_status tb_cuda_device_op_replay_graph(struct tb_provider *p, struct tb_error *err);
void tb_cuda_device_op_release_graph(struct tb_provider *p);
/* The defences' primitives (method.md §8), on every CUDA provider (the
 * built-in ones are checked as a user's kernel is; every input and output
 * of every set lies between guard zones, a workspace does not): an input of set 0 as the calls left
 * it (every set compared, the first differing one returned), the guard zones of every set, and
 * other inputs into every set (the rotation restarts at set 0, where read_output reads, so the
 * fresh-input call, made without a poison, lands over the output the last validation call left). */
enum tb_status tb_cuda_device_op_read_input(struct tb_provider *p, size_t index, float *dst,
                                            size_t count, struct tb_error *err);
enum tb_status tb_cuda_device_op_check_guards(struct tb_provider *p, struct tb_guard_report *r,
                                              struct tb_error *err);
enum tb_status tb_cuda_device_op_load_inputs(struct tb_provider *p, const struct tb_case_data *data,
                                             struct tb_error *err);
/* timed_outputs: the buffer sets, and set `set`'s output as the calls left
 * it, with whether a call outside a capture reached it. */
unsigned tb_cuda_device_op_output_sets(const struct tb_provider *p);
enum tb_status tb_cuda_device_op_read_set_output(struct tb_provider *p, unsigned set, float *dst,
                                                 size_t count, bool *reached, struct tb_error *err);
/* No generated source (a library call). */
const char *tb_cuda_device_op_no_source(const struct tb_provider *p, const char **sha256);

/* The provider ops every CUDA provider takes from the device base, for its
 * struct tb_provider_ops initializer. */
#define TB_CUDA_DEVICE_OPS                                                                         \
  .synchronize = tb_cuda_device_op_synchronize, .poison_output = tb_cuda_device_op_poison,         \
  .read_output = tb_cuda_device_op_read_output, .device_stream = tb_cuda_device_op_stream,         \
  .capture_graph = tb_cuda_device_op_capture_graph,                                                \
  .replay_graph = tb_cuda_device_op_replay_graph,                                                  \
  .release_graph = tb_cuda_device_op_release_graph, .has_device = tb_cuda_device_op_has_device,    \
  .output_sets = tb_cuda_device_op_output_sets,                                                    \
  .read_set_output = tb_cuda_device_op_read_set_output,                                            \
  .read_input = tb_cuda_device_op_read_input, .check_guards = tb_cuda_device_op_check_guards,      \
  .load_inputs = tb_cuda_device_op_load_inputs

/* A provider struct named `name` on the CUDA backend with `state` (which
 * starts with a struct tb_cuda_device), or NULL when out of memory. */
struct tb_provider *tb_cuda_provider_new(const struct tb_provider_ops *ops, const char *name,
                                         bool plans_reductions, void *state);

#endif
