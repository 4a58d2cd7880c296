/* Turns a finished probe's raw records into a result, failing closed. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "timing/last_error.h"
#include "timing/probe_state.h"

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...) {
  char message[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  return tb_timing_fail_text(code, message);
}

/* The counted launch a kernel belongs to: its own id, or the runtime call
 * that wrapped the driver call carrying its id. -1 when none. */
static long launch_of(const struct tb_probe_state *p, uint64_t launches, uint64_t aliases,
                      uint32_t id) {
  for (uint64_t a = 0; a < aliases; ++a) {
    if (p->aliases[a].nested_id == id) {
      id = p->aliases[a].outer_id;
      break;
    }
  }
  for (uint64_t i = 0; i < launches; ++i) {
    if (p->launches[i].correlation_id == id) {
      return (long)i;
    }
  }
  return -1;
}

static int check_counts(const struct tb_probe_state *p, uint64_t kernels, uint64_t launches,
                        uint64_t aliases) {
  if (kernels > p->capacity || launches > p->capacity || aliases > p->capacity) {
    return fail(TB_TIMING_E_CAPACITY,
                "the probe saw %llu kernel(s) and %llu launch(es), more than its capacity %u; "
                "no timing is reported (raise the capacity or time fewer calls)",
                (unsigned long long)kernels, (unsigned long long)launches, p->capacity);
  }
  return TB_TIMING_OK;
}

/* Whether record r is a held probe's hold kernel (the library's own). */
static int is_hold(const struct tb_probe_state *p, const struct tb_raw_kernel *r) {
  return atomic_load(&p->has_hold) && r->correlation_id == atomic_load(&p->hold_id);
}

int tb_probe_collect(struct tb_probe_state *p, uint32_t timed_stream, double offset_ns,
                     struct tb_timing_result *out) {
  uint64_t kernels = atomic_load(&p->kernel_count);
  uint64_t launches = atomic_load(&p->launch_count);
  uint64_t aliases = atomic_load(&p->alias_count);
  int rc = check_counts(p, kernels, launches, aliases);
  if (rc != TB_TIMING_OK) {
    return rc;
  }
  /* Every kernel must belong to a counted launch, and every launch must have
   * produced at least one kernel (a graph launch produces several). */
  unsigned char *used = p->launch_used;
  memset(used, 0, p->capacity);
  uint64_t first_start = UINT64_MAX, last_end = 0, side = 0, before_launch = 0, seen = 0;
  uint32_t streams[64];
  unsigned stream_count = 0;
  double sum = 0.0;
  for (uint64_t k = 0; k < kernels; ++k) {
    const struct tb_raw_kernel *r = &p->kernels[k];
    if (is_hold(p, r)) {
      continue;
    }
    if ((r->start == 0 && r->end == 0) || r->end < r->start) {
      return fail(TB_TIMING_E_TIMESTAMPS,
                  "kernel record %llu has no valid timing (start %llu, "
                  "end %llu)",
                  (unsigned long long)k, (unsigned long long)r->start, (unsigned long long)r->end);
    }
    long launch = launch_of(p, launches, aliases, r->correlation_id);
    if (launch < 0) {
      return fail(TB_TIMING_E_MISMATCH,
                  "kernel with correlation id %u has no counted launch "
                  "(launched by an API the probe does not hook?)",
                  r->correlation_id);
    }
    used[launch] = 1;
    double start_host = (double)r->start - offset_ns;
    before_launch += start_host < (double)p->launches[launch].host_ns;
    sum += (double)(r->end - r->start);
    first_start = r->start < first_start ? r->start : first_start;
    last_end = r->end > last_end ? r->end : last_end;
    side += r->stream_id != timed_stream;
    unsigned s = 0;
    while (s < stream_count && streams[s] != r->stream_id) {
      s++;
    }
    if (s == stream_count && stream_count < 64) {
      streams[stream_count++] = r->stream_id;
    }
    if (out->kernels != NULL && seen < out->kernels_capacity) {
      struct tb_timing_kernel *o = &out->kernels[seen];
      o->start_ns = (uint64_t)((double)r->start - offset_ns);
      o->end_ns = (uint64_t)((double)r->end - offset_ns);
      o->stream_id = r->stream_id;
      o->correlation_id = r->correlation_id;
      o->device_id = r->device_id;
      o->graph_id = r->graph_id;
      out->kernels_written = seen + 1;
    }
    seen++;
  }
  if (seen == 0) {
    return fail(TB_TIMING_E_EMPTY, "the probe saw no kernel: nothing was measured");
  }
  for (uint64_t i = 0; i < launches; ++i) {
    if (!used[i]) {
      return fail(TB_TIMING_E_MISMATCH,
                  "launch %llu (correlation id %u) produced no kernel "
                  "record",
                  (unsigned long long)i, p->launches[i].correlation_id);
    }
  }
  out->counted_launches = launches;
  out->kernels_seen = seen;
  out->kernel_sum_ns = sum;
  out->kernel_span_ns = (double)(last_end - first_start);
  out->streams_seen = stream_count;
  out->side_stream_kernels = side;
  out->timed_stream_id = timed_stream;
  out->kernels_before_launch = before_launch;
  return TB_TIMING_OK;
}
