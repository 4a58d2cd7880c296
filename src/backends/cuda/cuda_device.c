#include "backends/cuda/cuda_device.h"

#include <stdlib.h>
#include <string.h>

#include "inputs/poison.h"

enum tb_status tb_cuda_device_open(struct tb_cuda_device *d, struct tb_error *err) {
  if (tb_cuda_driver_open(err) != TB_OK) {
    return err->status;
  }
  d->cu = tb_cuda();
  CUdevice dev = 0;
  CUresult rc = tb_cuda_enter_device0(d->cu, &dev, &d->context);
  if (rc == CUDA_SUCCESS && tb_device_info_read(d->cu, dev, &d->info, err) != TB_OK) {
    return err->status;
  }
  if (rc == CUDA_SUCCESS) {
    rc = d->cu->cuStreamCreate(&d->stream, CU_STREAM_NON_BLOCKING);
  }
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "setting up the GPU (context, stream)", rc);
}

void tb_cuda_device_close(struct tb_cuda_device *d) {
  if (d->cu == NULL) {
    return;
  }
  tb_cuda_device_unload_case(d);
  if (d->stream) {
    d->cu->cuStreamDestroy(d->stream);
  }
  if (d->context) {
    d->cu->cuDevicePrimaryCtxRelease(d->info.device);
  }
  memset(d, 0, sizeof *d);
}

enum tb_status tb_cuda_device_load_case(struct tb_cuda_device *d, const struct tb_case *c,
                                        const struct tb_case_data *data, size_t workspace_floats,
                                        struct tb_error *err) {
  d->data = data;
  d->cursor = 0;
  d->view_offset = c->view.offset;
  d->capturing = false;
  d->cu->cuCtxSetCurrent(d->context);
  /* guarded: the defence guard_zones runs on every CUDA provider */
  if (tb_device_buffers_create(d->cu, data, workspace_floats, d->info.l2_bytes, true, &d->buffers,
                               err) != TB_OK) {
    return err->status;
  }
  free(d->reached);
  d->reached = calloc(d->buffers.count, 1);
  if (d->reached == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for %u buffer sets", d->buffers.count);
  }
  /* poisoned, so that a set no kernel wrote is told from one computed
   * (freed memory of an earlier case may hold a right answer); workspaces
   * zeroed, on the kernels' stream before its synchronisation (persistent
   * rows' group counters start at 0, and each launch adds the same number of
   * arrivals to them) */
  for (unsigned i = 0; i < d->buffers.count; ++i) {
    CUresult rc = d->cu->cuMemsetD32Async(d->buffers.sets[i].out, TB_POISON_BITS,
                                          d->buffers.out_bytes / sizeof(float), d->stream);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuMemsetD32Async (poisoning the outputs)", rc);
    }
    if (workspace_floats > 0) {
      rc = d->cu->cuMemsetD32Async(d->buffers.sets[i].workspace, 0, workspace_floats, d->stream);
      if (rc != CUDA_SUCCESS) {
        return tb_cuda_fail(err, "cuMemsetD32Async (zeroing the workspaces)", rc);
      }
    }
  }
  CUresult rc = d->cu->cuStreamSynchronize(d->stream);
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "cuStreamSynchronize", rc);
}

static void release_graphs(struct tb_cuda_device *d) {
  for (unsigned g = 0; d->cu != NULL && g < d->graph_count; ++g) {
    tb_cuda_graph_destroy(d->cu, &d->graphs[g]);
  }
  d->graph_count = 0;
  d->graph_calls = 0;
}

void tb_cuda_device_unload_case(struct tb_cuda_device *d) {
  if (d->buffers.count > 0) {
    d->cu->cuStreamSynchronize(d->stream);
  }
  release_graphs(d);
  tb_device_buffers_free(d->cu, &d->buffers);
  free(d->reached);
  d->reached = NULL;
  d->data = NULL;
}

struct tb_case_operands tb_cuda_device_next_operands(struct tb_cuda_device *d) {
  unsigned index = d->cursor;
  if (d->reached != NULL && !d->capturing) {
    d->reached[index] = 1;
  }
  d->cursor = (d->cursor + 1) % d->buffers.count;
  return tb_cuda_device_operands(d, index);
}

struct tb_case_operands tb_cuda_device_operands(const struct tb_cuda_device *d, unsigned index) {
  const struct tb_buffer_set *set = &d->buffers.sets[index];
  const struct tb_op_info *op = d->data->c.op;
  struct tb_case_operands o = {.set = index};
  /* x (or a), y (b), weight, bias: views start `offset` elements in */
  o.x = set->inputs[0] + d->view_offset * sizeof(float);
  o.y = op->has_second_matrix ? set->inputs[1] + d->view_offset * sizeof(float) : 0;
  size_t next = op->has_second_matrix ? 2 : 1;
  o.weight = op->has_weight ? set->inputs[next++] : 0;
  o.bias = op->has_bias ? set->inputs[next] : 0;
  o.out = set->out;
  o.workspace = set->workspace;
  return o;
}

void tb_cuda_device_buffer_facts(const struct tb_cuda_device *d, struct tb_buffer_facts *out) {
  tb_device_buffers_facts(&d->buffers, out);
}

static struct tb_cuda_device *device_of(const struct tb_provider *p) {
  return p->state;
}

enum tb_status tb_cuda_device_op_synchronize(struct tb_provider *p, struct tb_error *err) {
  struct tb_cuda_device *d = device_of(p);
  CUresult rc = d->cu->cuStreamSynchronize(d->stream);
  return rc == CUDA_SUCCESS ? TB_OK
                            : tb_cuda_fail(err, "cuStreamSynchronize (a kernel failed?)", rc);
}

enum tb_status tb_cuda_device_op_poison(struct tb_provider *p, struct tb_error *err) {
  struct tb_cuda_device *d = device_of(p);
  for (unsigned i = 0; i < d->buffers.count; ++i) {
    CUresult rc = d->cu->cuMemsetD32Async(d->buffers.sets[i].out, TB_POISON_BITS,
                                          d->buffers.out_bytes / sizeof(float), d->stream);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuMemsetD32Async", rc);
    }
  }
  d->cursor = 0;
  return tb_cuda_device_op_synchronize(p, err);
}

enum tb_status tb_cuda_device_op_read_output(struct tb_provider *p, float *dst, size_t count,
                                             struct tb_error *err) {
  struct tb_cuda_device *d = device_of(p);
  if (count * sizeof(float) != d->buffers.out_bytes) {
    return tb_fail(err, TB_ERR_RUN, "output size mismatch");
  }
  if (tb_cuda_device_op_synchronize(p, err) != TB_OK) {
    return err->status;
  }
  CUresult rc = d->cu->cuMemcpyDtoH(dst, d->buffers.sets[0].out, d->buffers.out_bytes);
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "cuMemcpyDtoH", rc);
}

unsigned tb_cuda_device_op_output_sets(const struct tb_provider *p) {
  return device_of(p)->buffers.count;
}

enum tb_status tb_cuda_device_op_read_set_output(struct tb_provider *p, unsigned set, float *dst,
                                                 size_t count, bool *reached,
                                                 struct tb_error *err) {
  struct tb_cuda_device *d = device_of(p);
  *reached = false;
  if (set >= d->buffers.count || count * sizeof(float) != d->buffers.out_bytes) {
    return tb_fail(err, TB_ERR_RUN, "no buffer set %u with an output of %zu elements", set, count);
  }
  if (tb_cuda_device_op_synchronize(p, err) != TB_OK) {
    return err->status;
  }
  *reached = d->reached != NULL && d->reached[set];
  if (!*reached) {
    return TB_OK; /* nothing to judge: not copied (thousands of sets at small shapes) */
  }
  CUresult rc = d->cu->cuMemcpyDtoH(dst, d->buffers.sets[set].out, d->buffers.out_bytes);
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "cuMemcpyDtoH (a set's output)", rc);
}

void *tb_cuda_device_op_stream(const struct tb_provider *p) {
  return device_of(p)->stream;
}

bool tb_cuda_device_op_has_device(const struct tb_provider *p) {
  return true;
}

const char *tb_cuda_device_op_no_source(const struct tb_provider *p, const char **sha256) {
  *sha256 = NULL;
  return NULL;
}

struct tb_provider *tb_cuda_provider_new(const struct tb_provider_ops *ops, const char *name,
                                         bool plans_reductions, void *state) {
  struct tb_provider *p = calloc(1, sizeof *p);
  if (p == NULL) {
    return NULL;
  }
  p->ops = ops;
  p->name = name;
  p->backend = "cuda";
  p->output_allocation = "preallocated_out";
  p->plans_reductions = plans_reductions;
  p->state = state;
  return p;
}

/* The provider's launch op, as the calls a capture records. */
static enum tb_status launch_for_capture(void *provider, unsigned long calls,
                                         struct tb_error *err) {
  struct tb_provider *p = provider;
  return p->ops->launch(p, calls, err);
}

enum tb_status tb_cuda_device_op_capture_graph(struct tb_provider *p, unsigned long calls,
                                               struct tb_error *err) {
  struct tb_cuda_device *d = p->state;
  release_graphs(d);
  unsigned long sets = d->buffers.count > 0 ? d->buffers.count : 1;
  unsigned long wanted = (sets + calls - 1) / calls;
  unsigned count = wanted < TB_CUDA_MAX_GRAPHS ? (unsigned)wanted : TB_CUDA_MAX_GRAPHS;
  d->graph_calls = calls;
  d->capturing = true; /* captured calls do not count as reaching their sets */
  for (unsigned g = 0; g < count; ++g) {
    d->graph_first_set[g] = d->cursor;
    if (tb_cuda_graph_capture(d->cu, d->stream, launch_for_capture, p, calls, &d->graphs[g], err) !=
        TB_OK) {
      d->capturing = false;
      release_graphs(d);
      return err->status;
    }
    d->graph_count = g + 1;
  }
  d->capturing = false;
  /* one untimed launch each: a graph's first launch also uploads it */
  for (unsigned g = 0; g < d->graph_count; ++g) {
    if (tb_cuda_graph_launch(d->cu, &d->graphs[g], d->stream, err) != TB_OK) {
      release_graphs(d);
      return err->status;
    }
  }
  return TB_OK;
}

enum tb_status tb_cuda_device_op_replay_graph(struct tb_provider *p, struct tb_error *err) {
  struct tb_cuda_device *d = p->state;
  if (d->graph_count == 0) {
    return tb_fail(err, TB_ERR_RUN, "no graph has been captured");
  }
  unsigned g = tb_cuda_next_graph(d->graph_first_set, d->graph_count, d->cursor,
                                  d->buffers.count > 0 ? d->buffers.count : 1);
  d->cursor = (unsigned)((d->graph_first_set[g] + d->graph_calls) %
                         (d->buffers.count > 0 ? d->buffers.count : 1));
  return tb_cuda_graph_launch(d->cu, &d->graphs[g], d->stream, err);
}

void tb_cuda_device_op_release_graph(struct tb_provider *p) {
  release_graphs(p->state);
}

enum tb_status tb_cuda_device_op_read_input(struct tb_provider *p, size_t index, float *dst,
                                            size_t count, struct tb_error *err) {
  struct tb_cuda_device *d = p->state;
  const struct tb_case_data *data = d->data;
  if (index >= data->input_count || count != data->inputs[index].storage_elems) {
    return tb_fail(err, TB_ERR_RUN, "no input %zu of %zu elements", index, count);
  }
  if (tb_cuda_device_op_synchronize(p, err) != TB_OK) {
    return err->status;
  }
  return tb_device_buffers_read_input(d->cu, &d->buffers, index, data->inputs[index].storage, dst,
                                      err);
}

enum tb_status tb_cuda_device_op_check_guards(struct tb_provider *p, struct tb_guard_report *r,
                                              struct tb_error *err) {
  struct tb_cuda_device *d = p->state;
  if (tb_cuda_device_op_synchronize(p, err) != TB_OK) {
    return err->status;
  }
  return tb_device_buffers_check_guards(d->cu, &d->buffers, r, err);
}

/* Other inputs into every set; the device base then refers to `data`, and
 * the next call is on set 0 again: read_output reads set 0, and the fresh-
 * input call (made without a poison, which is what otherwise rewinds the
 * sets) must land there, over the output the last validation call left. */
enum tb_status tb_cuda_device_op_load_inputs(struct tb_provider *p, const struct tb_case_data *data,
                                             struct tb_error *err) {
  struct tb_cuda_device *d = p->state;
  if (tb_cuda_device_op_synchronize(p, err) != TB_OK ||
      tb_device_buffers_load_inputs(d->cu, &d->buffers, data, err) != TB_OK) {
    return err->status;
  }
  d->data = data;
  d->cursor = 0;
  return TB_OK;
}
