/* What a probe session collects from CUPTI's threads: kernel records,
 * counted launches and their aliases, overflow and starvation flags. Written
 * by callbacks with atomics only (no allocation, no CUDA calls); read by the
 * session after CUPTI is flushed and detached. */
#ifndef TB_TIMING_PROBE_STATE_H
#define TB_TIMING_PROBE_STATE_H

#include <cuda.h>
#include <stdatomic.h>
#include <stdint.h>

#include "tilebench/timing.h"

struct tb_launch_record {
  uint32_t correlation_id; /* of the outermost launch API call */
  uint32_t domain;         /* CUpti_CallbackDomain */
  uint32_t cbid;
  uint32_t reserved;
  uint64_t host_ns; /* CLOCK_MONOTONIC at API entry */
};

/* A driver launch nested in a runtime launch gets its own correlation id;
 * kernels may carry either, so the nested id is mapped to the outer one. */
struct tb_alias_record {
  uint32_t nested_id;
  uint32_t outer_id;
};

struct tb_raw_kernel {
  uint64_t start, end; /* CUPTI clock */
  uint32_t stream_id, correlation_id, device_id, graph_id;
};

struct tb_probe_state {
  unsigned capacity;
  struct tb_raw_kernel *kernels;
  struct tb_launch_record *launches;
  struct tb_alias_record *aliases;
  unsigned char *launch_used;        /* scratch for the end-of-session check */
  atomic_uint_fast64_t kernel_count; /* may exceed capacity: then overflowed */
  atomic_uint_fast64_t launch_count;
  atomic_uint_fast64_t alias_count;
  /* A held probe's hold kernel: its launch is the library's own, not a
   * counted call, and its record is left out of the kernels. */
  atomic_int hold_pending; /* the next direct driver launch is the hold */
  atomic_int has_hold;
  atomic_uint_fast32_t hold_id; /* the hold launch's correlation id */
  atomic_int buffer_starved;    /* a request got no slab */
  atomic_int incomplete_record; /* a record could not be read */
  /* Activity buffer arena: slabs handed to CUPTI in order. */
  uint8_t *arena;
  size_t slab_size;
  unsigned slab_count;
  atomic_uint next_slab;
};

/* Arena and arrays for `capacity` kernels; returns 0 on allocation failure. */
int tb_probe_state_init(struct tb_probe_state *s, unsigned capacity);
void tb_probe_state_free(struct tb_probe_state *s);

/* CUPTI buffer callbacks, bound to one global probe state. */
void tb_probe_bind(struct tb_probe_state *s);
void tb_probe_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void tb_probe_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                               size_t valid_size);
/* The next direct driver launch is the hold of a held probe (set just
 * before launching it, on the launching thread). */
void tb_probe_expect_hold(struct tb_probe_state *s);
/* Launch accounting from the subscriber callback. */
void tb_probe_on_launch(uint32_t domain, uint32_t cbid, uint32_t site, uint32_t correlation_id);

/* After collection stopped: validates the records (capacity, timestamps,
 * kernels <-> launches) and fills the probe fields of *out. Times become
 * CLOCK_MONOTONIC by subtracting offset_ns. */
int tb_probe_collect(struct tb_probe_state *p, uint32_t timed_stream, double offset_ns,
                     struct tb_timing_result *out);

#endif
