#include "timing/probe_state.h"

#include <cupti.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing/api.h"

/* Kineto hands CUPTI 4 MiB buffers ("CUPTI recommends 1-10 MB"); a kernel
 * record is ~200 B, so one 1 MiB slab holds ~5000. Slabs are allocated up
 * front because callbacks must not allocate. */
#define SLAB_SIZE ((size_t)1 << 20)
#define MIN_SLABS 4
#define RECORD_BUDGET 512 /* bytes per expected record, with room to spare */

static struct tb_probe_state *bound;
static _Thread_local int runtime_launch_depth;
static _Thread_local uint32_t runtime_launch_id;

int tb_probe_state_init(struct tb_probe_state *s, unsigned capacity) {
  memset(s, 0, sizeof *s);
  s->capacity = capacity;
  s->kernels = calloc(capacity, sizeof *s->kernels);
  s->launches = calloc(capacity, sizeof *s->launches);
  s->aliases = calloc(capacity, sizeof *s->aliases);
  s->launch_used = calloc(capacity, 1);
  s->slab_size = SLAB_SIZE;
  size_t need = ((size_t)capacity * RECORD_BUDGET + SLAB_SIZE - 1) / SLAB_SIZE;
  s->slab_count = (unsigned)(need + MIN_SLABS);
  /* 8-byte alignment is what CUPTI requires of activity buffers. */
  s->arena = aligned_alloc(8, s->slab_size * s->slab_count);
  if (s->kernels == NULL || s->launches == NULL || s->aliases == NULL || s->arena == NULL ||
      s->launch_used == NULL) {
    tb_probe_state_free(s);
    return 0;
  }
  return 1;
}

void tb_probe_state_free(struct tb_probe_state *s) {
  free(s->kernels);
  free(s->launches);
  free(s->aliases);
  free(s->launch_used);
  free(s->arena);
  memset(s, 0, sizeof *s);
}

void tb_probe_bind(struct tb_probe_state *s) {
  bound = s;
}

void tb_probe_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  struct tb_probe_state *s = bound;
  unsigned slab = s ? atomic_fetch_add(&s->next_slab, 1) : 0;
  *max_records = 0; /* as many as fit */
  if (s == NULL || slab >= s->slab_count) {
    if (s != NULL) {
      atomic_store(&s->buffer_starved, 1); /* CUPTI drops records: fail closed at end */
    }
    *buffer = NULL;
    *size = 0;
    return;
  }
  *buffer = s->arena + (size_t)slab * s->slab_size;
  *size = s->slab_size;
}

static void keep_kernel(struct tb_probe_state *s, const CUpti_ActivityKernel10 *k) {
  uint_fast64_t i = atomic_fetch_add(&s->kernel_count, 1);
  if (i >= s->capacity) {
    return; /* counted, not stored: overflow is detected from the count */
  }
  struct tb_raw_kernel *out = &s->kernels[i];
  out->start = k->start;
  out->end = k->end;
  out->stream_id = k->streamId;
  out->correlation_id = k->correlationId;
  out->device_id = k->deviceId;
  out->graph_id = k->graphId;
}

void tb_probe_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                               size_t valid_size) {
  struct tb_probe_state *s = bound;
  const struct tb_timing_api *api = tb_timing_api_cupti(NULL);
  if (s == NULL || api == NULL || buffer == NULL || valid_size == 0) {
    return;
  }
  CUpti_Activity *record = NULL;
  for (;;) {
    CUptiResult rc = api->cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (rc == CUPTI_ERROR_MAX_LIMIT_REACHED) {
      break;
    }
    if (rc != CUPTI_SUCCESS) {
      atomic_store(&s->incomplete_record, 1);
      break;
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      keep_kernel(s, (const CUpti_ActivityKernel10 *)record);
    }
  }
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void record_launch(struct tb_probe_state *s, uint32_t domain, uint32_t cbid, uint32_t id) {
  uint_fast64_t i = atomic_fetch_add(&s->launch_count, 1);
  if (i < s->capacity) {
    s->launches[i] = (struct tb_launch_record){id, domain, cbid, 0, now_ns()};
  }
}

void tb_probe_expect_hold(struct tb_probe_state *s) {
  atomic_store(&s->hold_pending, 1);
}

void tb_probe_on_launch(uint32_t domain, uint32_t cbid, uint32_t site, uint32_t correlation_id) {
  struct tb_probe_state *s = bound;
  if (s == NULL) {
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (site == CUPTI_API_ENTER) {
      if (runtime_launch_depth++ == 0) {
        runtime_launch_id = correlation_id;
        record_launch(s, domain, cbid, correlation_id);
      }
    } else if (runtime_launch_depth > 0) {
      runtime_launch_depth--;
    }
    return;
  }
  if (site != CUPTI_API_ENTER) {
    return;
  }
  if (runtime_launch_depth > 0) { /* the driver call inside a runtime launch */
    uint_fast64_t i = atomic_fetch_add(&s->alias_count, 1);
    if (i < s->capacity) {
      s->aliases[i] = (struct tb_alias_record){correlation_id, runtime_launch_id};
    }
    return;
  }
  if (atomic_exchange(&s->hold_pending, 0)) { /* the library's own hold, not a call */
    atomic_store(&s->hold_id, correlation_id);
    atomic_store(&s->has_hold, 1);
    return;
  }
  record_launch(s, domain, cbid, correlation_id); /* a direct driver launch */
}
