#include "providers/worker_reply.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "tilebench/timing.h"

/* The largest figure a sane reply carries: ~11 days in nanoseconds. */
#define TB_REPLY_MAX_NS 1e15

static enum tb_status bad(const char *cmd, const char *key, const char *what,
                          struct tb_error *err) {
  return tb_fail(err, TB_ERR_RUN, "the torch worker's reply to %s has %s %s", cmd, key, what);
}

static enum tb_status need_integer(const json_t *r, const char *cmd, const char *key,
                                   json_int_t min, json_int_t max, struct tb_error *err) {
  const json_t *v = json_object_get(r, key);
  if (!json_is_integer(v)) {
    return bad(cmd, key, v ? "that is not a whole number" : "missing", err);
  }
  if (json_integer_value(v) < min || json_integer_value(v) > max) {
    return bad(cmd, key, "out of range", err);
  }
  return TB_OK;
}

static enum tb_status need_real(const json_t *r, const char *cmd, const char *key, double min,
                                double max, struct tb_error *err) {
  const json_t *v = json_object_get(r, key);
  if (!json_is_number(v)) {
    return bad(cmd, key, v ? "that is not a number" : "missing", err);
  }
  double x = json_number_value(v);
  if (!(x >= min && x <= max)) {
    return bad(cmd, key, "out of range", err);
  }
  return TB_OK;
}

static enum tb_status need_type(const json_t *r, const char *cmd, const char *key, json_type type,
                                int nullable, struct tb_error *err) {
  const json_t *v = json_object_get(r, key);
  if (v == NULL || !(json_typeof(v) == type || (nullable && json_is_null(v)))) {
    return bad(cmd, key, v ? "of the wrong type" : "missing", err);
  }
  return TB_OK;
}

static enum tb_status need_boolean(const json_t *r, const char *cmd, const char *key,
                                   struct tb_error *err) {
  return json_is_boolean(json_object_get(r, key)) ? TB_OK
                                                  : bad(cmd, key, "that is not true/false", err);
}

static enum tb_status check_hello(const json_t *r, struct tb_error *err) {
  if (need_boolean(r, "hello", "cuda", err) != TB_OK ||
      need_boolean(r, "hello", "timing", err) != TB_OK ||
      need_type(r, "hello", "torch", JSON_STRING, 0, err) != TB_OK) {
    return err->status;
  }
  return TB_OK;
}

static enum tb_status check_prepare(const json_t *r, struct tb_error *err) {
  const char *allocation = json_string_value(json_object_get(r, "output_allocation"));
  if (allocation == NULL || (strcmp(allocation, "preallocated_out") != 0 &&
                             strcmp(allocation, "framework_return_value") != 0)) {
    return bad("prepare", "output_allocation",
               "that is not preallocated_out or "
               "framework_return_value",
               err);
  }
  if (need_type(r, "prepare", "implementation", JSON_STRING, 0, err) != TB_OK ||
      need_type(r, "prepare", "buffers", JSON_OBJECT, 1, err) != TB_OK) {
    return err->status;
  }
  const json_t *compile_ms = json_object_get(r, "compile_ms");
  if (!json_is_null(compile_ms)) { /* present: null or a number */
    return need_real(r, "prepare", "compile_ms", 0.0, TB_REPLY_MAX_NS, err);
  }
  return TB_OK;
}

/* A successful sample declares exactly the calls it timed, in both scopes;
 * the probe also counts launches itself (a call may launch several kernels,
 * a graph launch holds many calls), the control counts none. */
static enum tb_status check_device_sample(const json_t *r, long long calls, struct tb_error *err) {
  const char *cmd = "device_sample";
  if (need_integer(r, cmd, "code", -64, 0, err) != TB_OK) {
    return err->status;
  }
  /* the harness casts every count to uint64_t, even those a failure carries */
  static const char *const counts[] = {"kernels_seen", "side_stream_kernels",
                                       "kernels_before_launch", "declared_calls",
                                       "counted_launches"};
  bool failed = json_integer_value(json_object_get(r, "code")) != TB_TIMING_OK;
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
    if ((!failed || json_object_get(r, counts[i]) != NULL) &&
        need_integer(r, cmd, counts[i], 0, (json_int_t)1 << 40, err) != TB_OK) {
      return err->status;
    }
  }
  if (failed) {
    return need_type(r, cmd, "error", JSON_STRING, 0, err);
  }
  if (need_real(r, cmd, "gpu_elapsed_ns", 1e-3, TB_REPLY_MAX_NS, err) != TB_OK ||
      need_real(r, cmd, "kernel_sum_ns", 0.0, TB_REPLY_MAX_NS, err) != TB_OK ||
      need_real(r, cmd, "clock_drift_ns", -TB_REPLY_MAX_NS, TB_REPLY_MAX_NS, err) != TB_OK ||
      need_integer(r, cmd, "scope", TB_TIMING_SCOPE_CONTROL, TB_TIMING_SCOPE_PROBE, err) != TB_OK) {
    return err->status;
  }
  if (json_integer_value(json_object_get(r, "declared_calls")) != calls) {
    return bad(cmd, "declared_calls", "other than the calls asked for", err);
  }
  /* the worker's CLOCK_MONOTONIC around its session: the end after the begin */
  if (need_integer(r, cmd, "begin_host_ns", 0, (json_int_t)1 << 62, err) != TB_OK ||
      need_integer(r, cmd, "end_host_ns", json_integer_value(json_object_get(r, "begin_host_ns")),
                   (json_int_t)1 << 62, err) != TB_OK) {
    return err->status;
  }
  int control = json_integer_value(json_object_get(r, "scope")) == TB_TIMING_SCOPE_CONTROL;
  json_int_t counted = json_integer_value(json_object_get(r, "counted_launches"));
  if (control ? counted != 0 : counted < 1) {
    return bad(cmd, "counted_launches",
               control ? "nonzero for a control sample" : "zero for a probe sample", err);
  }
  return TB_OK;
}

static enum tb_status check_fields(const json_t *r, const char *cmd, long long calls,
                                   struct tb_error *err) {
  if (strcmp(cmd, "hello") == 0) {
    return check_hello(r, err);
  }
  if (strcmp(cmd, "prepare") == 0) {
    return check_prepare(r, err);
  }
  if (strcmp(cmd, "host_sample") == 0) {
    return need_integer(r, cmd, "elapsed_ns", 1, (json_int_t)TB_REPLY_MAX_NS, err);
  }
  if (strcmp(cmd, "device_sample") == 0) {
    return check_device_sample(r, calls, err);
  }
  if (strcmp(cmd, "read_set_output") == 0) {
    return need_boolean(r, cmd, "reached", err);
  }
  if (strcmp(cmd, "check_guards") == 0) {
    if (need_integer(r, cmd, "buffers", 0, 1 << 20, err) != TB_OK ||
        need_boolean(r, cmd, "intact", err) != TB_OK) {
      return err->status;
    }
    return need_type(r, cmd, "damaged", JSON_STRING, json_is_true(json_object_get(r, "intact")),
                     err);
  }
  return TB_OK;
}

enum tb_status tb_worker_reply_parse(const char *line, size_t length, const char *cmd,
                                     long long calls, json_t **reply, struct tb_error *err) {
  json_error_t jerr;
  *reply = json_loadb(line, length, JSON_REJECT_DUPLICATES, &jerr);
  if (*reply == NULL || !json_is_object(*reply) ||
      !json_is_boolean(json_object_get(*reply, "ok"))) {
    json_decref(*reply);
    *reply = NULL;
    return tb_fail(err, TB_ERR_RUN, "the torch worker answered %s with garbage (not a JSON reply)",
                   cmd);
  }
  if (!json_is_true(json_object_get(*reply, "ok"))) { /* the protocol held: *reply stays */
    const char *why = json_string_value(json_object_get(*reply, "error"));
    return tb_fail(err, strcmp(cmd, "hello") == 0 ? TB_ERR_UNAVAILABLE : TB_ERR_RUN,
                   "torch: %.900s", why && why[0] ? why : "the worker failed without saying why");
  }
  if (check_fields(*reply, cmd, calls, err) != TB_OK) {
    json_decref(*reply);
    *reply = NULL;
  }
  return err->status;
}
