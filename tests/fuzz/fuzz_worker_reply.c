/* Fuzz target: the torch worker's reply lines (providers/worker_reply.h).
 * Input: one byte picks the request ('a' + index in `commands`, modulo
 * their count), the next four are `calls` (little-endian), the rest is the
 * line as the harness passes it (without its newline). Beyond "no crash":
 * the header's contract on *reply, and on success the fields that
 * providers/torch_worker.c then reads are there, of the type it reads. */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>

#include "fuzz_common.h"

#include "providers/worker_reply.h"
#include "tilebench/timing.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  tb_fuzz_setup();
  return 0;
}

static const char *const commands[] = {
    "hello",  "prepare",     "host_sample", "device_sample",   "launch",
    "poison", "read_output", "release",     "read_set_output", "check_guards"};

static bool is_string(const json_t *r, const char *key) {
  return json_is_string(json_object_get(r, key));
}

/* torch_device_sample casts these to uint64_t from json_number_value
 * (0 when absent): out of [0, 2^64) that cast is undefined. */
static void check_castable_counts(const json_t *r, const char *cmd) {
  static const char *const counts[] = {"declared_calls", "counted_launches", "kernels_seen",
                                       "side_stream_kernels", "kernels_before_launch"};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
    const json_t *v = json_object_get(r, counts[i]);
    double x = json_number_value(v);
    TB_FUZZ_CHECK(x >= 0.0 && x < 18446744073709551616.0,
                  "%s: accepted %s = %g, which torch_device_sample casts to uint64_t", cmd,
                  counts[i], x);
  }
}

/* What torch_details records from the hello and prepare replies: its
 * json_pack fails (the case loses its provider details) on a missing key. */
static void check_details(const json_t *hello, const json_t *prepared) {
  json_t *worker = json_deep_copy(hello);
  TB_FUZZ_CHECK(worker != NULL, "hello reply not copied");
  json_object_del(worker, "ok");
  json_t *details = json_pack("{s:o, s:O, s:O, s:O, s:b}", "worker", worker, "implementation",
                              json_object_get(prepared, "implementation"), "compile_ms",
                              json_object_get(prepared, "compile_ms"), "buffers",
                              json_object_get(prepared, "buffers"), "torch_compile", 0);
  TB_FUZZ_CHECK(details != NULL, "an accepted prepare reply leaves torch_details empty "
                                 "(implementation, compile_ms and buffers must be present)");
  char *text = json_dumps(details, JSON_COMPACT); /* as results.json will hold it */
  TB_FUZZ_CHECK(text != NULL, "details not written");
  free(text);
  json_decref(details);
}

/* The fields each accepted reply must carry for torch_worker.c. */
static void check_accepted(const json_t *r, const char *cmd, long long calls) {
  if (strcmp(cmd, "hello") == 0) {
    TB_FUZZ_CHECK(json_is_boolean(json_object_get(r, "cuda")) &&
                      json_is_boolean(json_object_get(r, "timing")) && is_string(r, "torch"),
                  "hello without cuda, timing or torch");
    json_t *prepared =
        json_pack("{s:b, s:s, s:s, s:n, s:n}", "ok", 1, "output_allocation", "preallocated_out",
                  "implementation", "fuzz", "compile_ms", "buffers");
    check_details(r, prepared);
    json_decref(prepared);
  } else if (strcmp(cmd, "prepare") == 0) {
    /* copied into a 32-byte buffer and compared against the two policies */
    const char *allocation = json_string_value(json_object_get(r, "output_allocation"));
    TB_FUZZ_CHECK(allocation != NULL && (strcmp(allocation, "preallocated_out") == 0 ||
                                         strcmp(allocation, "framework_return_value") == 0),
                  "prepare: output_allocation");
    json_t *hello =
        json_pack("{s:b, s:b, s:b, s:s}", "ok", 1, "cuda", 0, "timing", 0, "torch", "fuzz");
    check_details(hello, r);
    json_decref(hello);
  } else if (strcmp(cmd, "read_set_output") == 0) { /* torch_read_set_output reads a file iff */
    TB_FUZZ_CHECK(json_is_boolean(json_object_get(r, "reached")), "read_set_output: reached");
  } else if (strcmp(cmd, "check_guards") == 0) { /* python_check_guards casts and copies */
    const json_t *buffers = json_object_get(r, "buffers");
    TB_FUZZ_CHECK(json_is_integer(buffers) && json_integer_value(buffers) >= 0 &&
                      json_integer_value(buffers) <= (1 << 20),
                  "check_guards: buffers");
    TB_FUZZ_CHECK(json_is_boolean(json_object_get(r, "intact")), "check_guards: intact");
    TB_FUZZ_CHECK(json_is_true(json_object_get(r, "intact")) || is_string(r, "damaged"),
                  "check_guards: a damaged zone without its name");
  } else if (strcmp(cmd, "host_sample") == 0) {
    const json_t *elapsed = json_object_get(r, "elapsed_ns"); /* cast to int64_t */
    TB_FUZZ_CHECK(json_is_integer(elapsed) && json_integer_value(elapsed) >= 1,
                  "host_sample: elapsed_ns");
  } else if (strcmp(cmd, "device_sample") == 0) {
    const json_t *code = json_object_get(r, "code"); /* cast to int */
    TB_FUZZ_CHECK(json_is_integer(code) && json_integer_value(code) <= 0 &&
                      json_integer_value(code) >= -64,
                  "device_sample: code");
    check_castable_counts(r, cmd);
    if (json_integer_value(code) != TB_TIMING_OK) {
      TB_FUZZ_CHECK(is_string(r, "error"), "a failed device_sample without its error");
      return;
    }
    static const char *const reals[] = {"gpu_elapsed_ns", "kernel_sum_ns", "clock_drift_ns"};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; ++i) {
      TB_FUZZ_CHECK(isfinite(json_number_value(json_object_get(r, reals[i]))) &&
                        json_is_number(json_object_get(r, reals[i])),
                    "device_sample: %s", reals[i]);
    }
    TB_FUZZ_CHECK(json_number_value(json_object_get(r, "gpu_elapsed_ns")) > 0.0,
                  "a successful sample took no time");
    TB_FUZZ_CHECK(json_integer_value(json_object_get(r, "declared_calls")) == calls,
                  "declared calls other than the %lld calls", calls);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) {
    return 0;
  }
  const char *cmd = commands[(unsigned char)(data[0] - 'a') % (sizeof commands / sizeof *commands)];
  long long calls = (long long)((uint32_t)data[1] | (uint32_t)data[2] << 8 |
                                (uint32_t)data[3] << 16 | (uint32_t)data[4] << 24);
  const char *line = (const char *)data + 5;
  size_t length = size - 5;

  json_t *reply = NULL;
  struct tb_error err = {0};
  enum tb_status st = tb_worker_reply_parse(line, length, cmd, calls, &reply, &err);

  /* The same line read apart, to hold the result to the header's contract. */
  json_t *parsed = json_loadb(line, length, JSON_REJECT_DUPLICATES, NULL);
  const json_t *ok = json_object_get(parsed, "ok");
  bool protocol = json_is_object(parsed) && json_is_boolean(ok);
  if (st == TB_OK) {
    TB_FUZZ_CHECK(reply != NULL && json_is_true(json_object_get(reply, "ok")),
                  "accepted without an ok reply");
    TB_FUZZ_CHECK(protocol && json_is_true(ok) && json_equal(parsed, reply),
                  "accepted something else than the line");
    check_accepted(reply, cmd, calls);
  } else {
    TB_FUZZ_CHECK(err.status == st && err.message[0] != '\0', "a failure without its message");
    if (protocol && json_is_false(ok)) {
      /* the worker's own failure: the reply is kept, the worker goes on */
      TB_FUZZ_CHECK(reply != NULL && json_equal(parsed, reply), "an ok=false reply was dropped");
      TB_FUZZ_CHECK(st == (strcmp(cmd, "hello") == 0 ? TB_ERR_UNAVAILABLE : TB_ERR_RUN),
                    "ok=false to %s gave %d", cmd, (int)st);
    } else {
      TB_FUZZ_CHECK(reply == NULL, "a broken reply to %s was kept", cmd);
      TB_FUZZ_CHECK(st == TB_ERR_RUN, "a broken reply to %s gave %d", cmd, (int)st);
    }
  }
  json_decref(parsed);
  json_decref(reply);
  return 0;
}
