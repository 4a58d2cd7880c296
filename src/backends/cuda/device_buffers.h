/* Device-resident copies of a case's tensors. Throughput over one buffer set
 * would measure L2 once the working set fits in it, so the backend keeps
 * several sets whose total is at least 4x the L2 size and rotates through
 * them call by call ("cold"); it says "warm" when memory did not allow that. */
#ifndef TB_BACKENDS_CUDA_DEVICE_BUFFERS_H
#define TB_BACKENDS_CUDA_DEVICE_BUFFERS_H

#include <stdbool.h>

#include "backends/cuda/driver.h"
#include "inputs/guard.h"
#include "providers/provider.h" /* struct tb_guard_report */
#include "inputs/tensor.h"
#include "providers/provider_details.h"

#define TB_MAX_BUFFER_SETS 4096
#define TB_COLD_L2_FACTOR 4

struct tb_buffer_set {
  CUdeviceptr inputs[TB_MAX_INPUTS]; /* whole storage, padding included */
  CUdeviceptr out;
  CUdeviceptr workspace;
};

struct tb_device_buffers {
  struct tb_buffer_set *sets;
  unsigned count;
  size_t bytes_per_set;
  size_t out_bytes;
  size_t input_count, input_bytes[TB_MAX_INPUTS];
  /* every input and output between two guard zones (inputs/guard.h) of
   * TB_GUARD_ELEMS floats each, for the defences (method §8) */
  bool guarded;
  int l2_bytes;
  int cold; /* count * bytes_per_set >= 4 x L2 */
};

/* Allocates and fills the sets (inputs copied from the host tensors);
 * `guarded`: each input and output between guard zones. */
enum tb_status tb_device_buffers_create(const struct tb_cuda *cu, const struct tb_case_data *data,
                                        size_t workspace_floats, int l2_bytes, bool guarded,
                                        struct tb_device_buffers *b, struct tb_error *err);

/* Copies `data`'s inputs (the same case's layout) into every set. */
enum tb_status tb_device_buffers_load_inputs(const struct tb_cuda *cu,
                                             const struct tb_device_buffers *b,
                                             const struct tb_case_data *data, struct tb_error *err);

/* Input `index` as the calls left it: the first set whose copy differs from
 * `expected` (the host tensor it was loaded from), else set 0's. */
enum tb_status tb_device_buffers_read_input(const struct tb_cuda *cu,
                                            const struct tb_device_buffers *b, size_t index,
                                            const float *expected, float *dst,
                                            struct tb_error *err);

/* Checks the guard zones of every buffer of every set (b->guarded). */
enum tb_status tb_device_buffers_check_guards(const struct tb_cuda *cu,
                                              const struct tb_device_buffers *b,
                                              struct tb_guard_report *report, struct tb_error *err);
void tb_device_buffers_free(const struct tb_cuda *cu, struct tb_device_buffers *b);

/* The policy, the sets and their bytes, L2 and the state ("cold"|"warm"). */
void tb_device_buffers_facts(const struct tb_device_buffers *b, struct tb_buffer_facts *out);

#endif
