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

#define GUARD_BYTES ((size_t)TB_GUARD_ELEMS * sizeof(float))

/* `bytes` of device memory at *ptr, between two guard zones when `guarded`
 * (the allocation starts a zone before *ptr; 4 KiB keeps its alignment). */
static CUresult alloc_buffer(const struct tb_cuda *cu, bool guarded, size_t bytes,
                             CUdeviceptr *ptr) {
  size_t guard = guarded ? GUARD_BYTES : 0;
  CUdeviceptr base = 0;
  CUresult rc = cu->cuMemAlloc(&base, bytes + 2 * guard);
  *ptr = rc == CUDA_SUCCESS ? base + guard : 0;
  if (rc == CUDA_SUCCESS && guarded) {
    float zone[TB_GUARD_ELEMS];
    tb_guard_fill(zone);
    rc = cu->cuMemcpyHtoD(base, zone, guard);
    if (rc == CUDA_SUCCESS) {
      rc = cu->cuMemcpyHtoD(base + guard + bytes, zone, guard);
    }
  }
  return rc;
}

static void free_buffer(const struct tb_cuda *cu, bool guarded, CUdeviceptr ptr) {
  if (ptr) {
    cu->cuMemFree(ptr - (guarded ? GUARD_BYTES : 0));
  }
}

static enum tb_status alloc_set(const struct tb_cuda *cu, const struct tb_case_data *data,
                                size_t workspace_floats, bool guarded, struct tb_buffer_set *set,
                                struct tb_error *err) {
  CUresult rc = CUDA_SUCCESS;
  for (size_t i = 0; i < data->input_count && rc == CUDA_SUCCESS; ++i) {
    size_t bytes = data->inputs[i].storage_elems * sizeof(float);
    rc = alloc_buffer(cu, guarded, bytes, &set->inputs[i]);
    if (rc == CUDA_SUCCESS) {
      rc = cu->cuMemcpyHtoD(set->inputs[i], data->inputs[i].storage, bytes);
    }
  }
  if (rc == CUDA_SUCCESS) {
    rc = alloc_buffer(cu, guarded, data->output.storage_elems * sizeof(float), &set->out);
  }
  if (rc == CUDA_SUCCESS && workspace_floats > 0) {
    rc = cu->cuMemAlloc(&set->workspace, workspace_floats * sizeof(float));
  }
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "allocating device buffers", rc);
}

enum tb_status tb_device_buffers_create(const struct tb_cuda *cu, const struct tb_case_data *data,
                                        size_t workspace_floats, int l2_bytes, bool guarded,
                                        struct tb_device_buffers *b, struct tb_error *err) {
  memset(b, 0, sizeof *b);
  b->bytes_per_set = set_bytes(data, workspace_floats);
  b->out_bytes = data->output.storage_elems * sizeof(float);
  b->guarded = guarded;
  b->input_count = data->input_count;
  for (size_t i = 0; i < data->input_count; ++i) {
    b->input_bytes[i] = data->inputs[i].storage_elems * sizeof(float);
  }
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
    if (alloc_set(cu, data, workspace_floats, guarded, &b->sets[s], err) != TB_OK) {
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
      free_buffer(cu, b->guarded, set->inputs[i]);
    }
    free_buffer(cu, b->guarded, set->out);
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

enum tb_status tb_device_buffers_load_inputs(const struct tb_cuda *cu,
                                             const struct tb_device_buffers *b,
                                             const struct tb_case_data *data,
                                             struct tb_error *err) {
  if (data->input_count != b->input_count) {
    return tb_fail(err, TB_ERR_RUN, "the case has %zu inputs, the buffer sets %zu",
                   data->input_count, b->input_count);
  }
  for (unsigned s = 0; s < b->count; ++s) {
    for (size_t i = 0; i < b->input_count; ++i) {
      if (data->inputs[i].storage_elems * sizeof(float) != b->input_bytes[i]) {
        return tb_fail(err, TB_ERR_RUN, "input %s changed size", data->inputs[i].role);
      }
      CUresult rc =
          cu->cuMemcpyHtoD(b->sets[s].inputs[i], data->inputs[i].storage, b->input_bytes[i]);
      if (rc != CUDA_SUCCESS) {
        return tb_cuda_fail(err, "cuMemcpyHtoD (loading inputs)", rc);
      }
    }
  }
  return TB_OK;
}

enum tb_status tb_device_buffers_read_input(const struct tb_cuda *cu,
                                            const struct tb_device_buffers *b, size_t index,
                                            const float *expected, float *dst,
                                            struct tb_error *err) {
  if (index >= b->input_count || b->count == 0) {
    return tb_fail(err, TB_ERR_RUN, "no input %zu in the buffer sets", index);
  }
  /* every set, from the first: the timed calls rotated over all of them */
  for (unsigned s = 0; s < b->count; ++s) {
    CUresult rc = cu->cuMemcpyDtoH(dst, b->sets[s].inputs[index], b->input_bytes[index]);
    if (rc != CUDA_SUCCESS) {
      return tb_cuda_fail(err, "cuMemcpyDtoH (reading an input back)", rc);
    }
    if (memcmp(dst, expected, b->input_bytes[index]) != 0) {
      return TB_OK; /* this set's copy changed: it is what the caller hashes */
    }
  }
  return TB_OK; /* the last set's, the same as every other */
}

/* One buffer's two zones; false (and the report filled) when one changed. */
static bool buffer_intact(const struct tb_cuda *cu, CUdeviceptr ptr, size_t bytes, const char *role,
                          unsigned set, struct tb_guard_report *r, CUresult *rc) {
  float zone[TB_GUARD_ELEMS];
  const CUdeviceptr zones[2] = {ptr - GUARD_BYTES, ptr + bytes};
  r->buffers++;
  for (int z = 0; z < 2; ++z) {
    *rc = cu->cuMemcpyDtoH(zone, zones[z], GUARD_BYTES);
    long long first = *rc == CUDA_SUCCESS ? tb_guard_first_damage(zone) : -1;
    if (first >= 0) {
      snprintf(r->damaged, sizeof r->damaged, "%s %s of buffer set %u: element %lld",
               z == 0 ? "before" : "after", role, set,
               z == 0 ? first - (long long)TB_GUARD_ELEMS
                      : (long long)(bytes / sizeof(float)) + first);
      return false;
    }
  }
  return true;
}

enum tb_status tb_device_buffers_check_guards(const struct tb_cuda *cu,
                                              const struct tb_device_buffers *b,
                                              struct tb_guard_report *r, struct tb_error *err) {
  static const char *const roles[TB_MAX_INPUTS] = {"input 1", "input 2", "input 3", "input 4"};
  memset(r, 0, sizeof *r);
  r->intact = true;
  if (!b->guarded) {
    return tb_fail(err, TB_ERR_RUN, "the buffer sets have no guard zones");
  }
  CUresult rc = CUDA_SUCCESS;
  for (unsigned s = 0; s < b->count && r->intact && rc == CUDA_SUCCESS; ++s) {
    r->intact = buffer_intact(cu, b->sets[s].out, b->out_bytes, "out", s, r, &rc);
    for (size_t i = 0; i < b->input_count && r->intact && rc == CUDA_SUCCESS; ++i) {
      r->intact = buffer_intact(cu, b->sets[s].inputs[i], b->input_bytes[i], roles[i], s, r, &rc);
    }
  }
  return rc == CUDA_SUCCESS ? TB_OK : tb_cuda_fail(err, "cuMemcpyDtoH (guard zones)", rc);
}
