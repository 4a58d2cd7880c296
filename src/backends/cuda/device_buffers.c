#include "backends/cuda/device_buffers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Leave this share of free device memory to others (and the allocator). */
#define TB_DEVICE_MEMORY_SHARE 0.5

static size_t set_bytes(const struct tb_case_data *data, size_t workspace_floats) {
  size_t total = data->output.storage_elems * sizeof(float) + workspace_floats * sizeof(float);
  for (size_t i = 0; i < data->input_count; ++i) {
    total += data->inputs[i].storage_elems * sizeof(float);
  }
  return total;
}

static enum tb_status alloc_set(const struct tb_cuda *cu, const struct tb_case_data *data,
                                size_t workspace_floats, struct tb_buffer_set *set,
                                struct tb_error *err) {
  CUresult rc = CUDA_SUCCESS;
  for (size_t i = 0; i < data->input_count && rc == CUDA_SUCCESS; ++i) {
    size_t bytes = data->inputs[i].storage_elems * sizeof(float);
    rc = cu->cuMemAlloc(&set->inputs[i], bytes);
    if (rc == CUDA_SUCCESS) {
      rc = cu->cuMemcpyHtoD(set->inputs[i], data->inputs[i].storage, bytes);
    }
  }
  if (rc == CUDA_SUCCESS) {
    rc = cu->cuMemAlloc(&set->out, data->output.storage_elems * sizeof(float));
  }
  if (rc == CUDA_SUCCESS && workspace_floats > 0) {
    rc = cu->cuMemAlloc(&set->workspace, workspace_floats * sizeof(float));
  }
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "allocating device buffers", rc);
}

enum tb_status tb_device_buffers_create(const struct tb_cuda *cu, const struct tb_case_data *data,
                                        size_t workspace_floats, int l2_bytes,
                                        struct tb_device_buffers *b, struct tb_error *err) {
  memset(b, 0, sizeof *b);
  b->bytes_per_set = set_bytes(data, workspace_floats);
  b->out_bytes = data->output.storage_elems * sizeof(float);
  b->l2_bytes = l2_bytes;
  size_t free_bytes = 0, total_bytes = 0;
  cu->cuMemGetInfo(&free_bytes, &total_bytes);
  size_t want =
      ((size_t)TB_COLD_L2_FACTOR * (size_t)l2_bytes + b->bytes_per_set - 1) / b->bytes_per_set;
  size_t fit = (size_t)((double)free_bytes * TB_DEVICE_MEMORY_SHARE) / b->bytes_per_set;
  if (fit == 0) {
    return tb_fail(err, TB_ERR_INPUT, "the case needs %.3g GB of device memory, %.3g GB is free",
                   (double)b->bytes_per_set / 1e9, (double)free_bytes / 1e9);
  }
  size_t count = want < 1 ? 1 : want;
  count = count > TB_MAX_BUFFER_SETS ? TB_MAX_BUFFER_SETS : count;
  count = count > fit ? fit : count;
  b->sets = calloc(count, sizeof *b->sets);
  if (b->sets == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for %zu buffer sets", count);
  }
  for (size_t s = 0; s < count; ++s) {
    b->count = (unsigned)s + 1; /* counted first, so a partial set is freed too */
    if (alloc_set(cu, data, workspace_floats, &b->sets[s], err) != TB_OK) {
      tb_device_buffers_free(cu, b);
      return err->status;
    }
  }
  b->cold = (double)b->count * (double)b->bytes_per_set >= (double)TB_COLD_L2_FACTOR * l2_bytes;
  return TB_OK;
}

void tb_device_buffers_free(const struct tb_cuda *cu, struct tb_device_buffers *b) {
  for (unsigned s = 0; s < b->count && b->sets != NULL; ++s) {
    struct tb_buffer_set *set = &b->sets[s];
    for (size_t i = 0; i < TB_MAX_INPUTS; ++i) {
      if (set->inputs[i]) {
        cu->cuMemFree(set->inputs[i]);
      }
    }
    if (set->out) {
      cu->cuMemFree(set->out);
    }
    if (set->workspace) {
      cu->cuMemFree(set->workspace);
    }
  }
  free(b->sets);
  memset(b, 0, sizeof *b);
}

void tb_device_buffers_facts(const struct tb_device_buffers *b, struct tb_buffer_facts *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->policy, sizeof out->policy, "%s",
           "rotate buffer sets call by call (inputs, output and workspace)");
  out->sets = b->count;
  out->bytes_per_set = (long long)b->bytes_per_set;
  out->total_bytes = (long long)(b->bytes_per_set * b->count);
  out->l2_bytes = b->l2_bytes;
  snprintf(out->state, sizeof out->state, "%s", b->cold ? "cold" : "warm");
}
