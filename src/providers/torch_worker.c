#define _GNU_SOURCE /* pipe2, O_CLOEXEC */
#include "providers/torch_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/resources.h"
#include "providers/torch_facts.h"
#include "providers/worker_reply.h"

extern char **environ;

struct worker {
  pid_t pid;
  int to_worker, from_worker;
  char buffer[1 << 16];
  size_t buffered;
};

struct torch_state {
  bool compile;
  const char *callable_path, *callable_function; /* user-python: the --kernel parts */
  json_t *callable;                              /* user-python: the load_callable reply */
  const char *roles[TB_MAX_INPUTS];              /* the prepared case's inputs, in order */
  struct worker w;
  json_t *hello;    /* the worker's handshake: versions, config, threads */
  json_t *prepared; /* the prepare reply of the current case */
  char allocation[32];
  char dir[64]; /* temporary files of the current case */
  size_t out_elems;
};

/* ---- the process ---------------------------------------------------------- */

/* TB_WORKER_TIMEOUT_S, or TILEBENCH_WORKER_TIMEOUT_S (tests shorten it). */
static int worker_timeout(void) {
  const char *text = getenv("TILEBENCH_WORKER_TIMEOUT_S");
  int seconds = text ? atoi(text) : 0;
  return seconds > 0 ? seconds : TB_WORKER_TIMEOUT_S;
}

static void worker_kill(struct worker *w) {
  if (w->pid > 0) {
    kill(w->pid, SIGKILL);
    waitpid(w->pid, NULL, 0);
  }
  if (w->to_worker >= 0) {
    close(w->to_worker);
  }
  if (w->from_worker >= 0) {
    close(w->from_worker);
  }
  w->pid = 0;
  w->to_worker = w->from_worker = -1;
  w->buffered = 0;
}

/* Reads one line within timeout_s: the reply to `cmd`, checked
 * (providers/worker_reply.h). */
static enum tb_status read_reply(struct worker *w, int timeout_s, const char *cmd, long long calls,
                                 json_t **reply, struct tb_error *err) {
  int64_t deadline = tb_monotonic_ns() + (int64_t)timeout_s * 1000000000LL;
  for (;;) {
    char *newline = memchr(w->buffer, '\n', w->buffered);
    if (newline != NULL) {
      size_t used = (size_t)(newline - w->buffer) + 1;
      tb_worker_reply_parse(w->buffer, used - 1, cmd, calls, reply, err);
      memmove(w->buffer, newline + 1, w->buffered - used);
      w->buffered -= used;
      return err->status;
    }
    int64_t left_ms = (deadline - tb_monotonic_ns()) / 1000000;
    if (left_ms <= 0) {
      return tb_fail(err, TB_ERR_RUN, "the torch worker did not answer within %d s", timeout_s);
    }
    struct pollfd pfd = {w->from_worker, POLLIN, 0};
    int ready = poll(&pfd, 1, (int)(left_ms > 1000 ? 1000 : left_ms));
    if (ready < 0 && errno != EINTR) {
      return tb_fail(err, TB_ERR_RUN, "waiting for the torch worker: %s", strerror(errno));
    }
    if (ready <= 0) {
      continue;
    }
    if (w->buffered == sizeof w->buffer - 1) {
      return tb_fail(err, TB_ERR_RUN, "the torch worker sent an over-long line");
    }
    ssize_t got = read(w->from_worker, w->buffer + w->buffered, sizeof w->buffer - 1 - w->buffered);
    if (got <= 0) {
      int status = 0;
      waitpid(w->pid, &status, 0);
      w->pid = 0;
      return tb_fail(err, TB_ERR_RUN, "the torch worker exited (%s %d)",
                     WIFSIGNALED(status) ? "signal" : "status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    w->buffered += (size_t)got;
  }
}

/* The worker runs as `python -m tilebench.torch_worker` with the package
 * that travels with this executable first on its path, and is told where
 * the timing library is. */
static enum tb_status worker_environment(struct tb_error *err) {
  char package[PATH_MAX], lib[PATH_MAX], path[2 * PATH_MAX + 2];
  if (tb_resource_path(TB_RESOURCE_PYTHON, package, sizeof package, err) != TB_OK) {
    return err->status;
  }
  static bool path_set; /* a restarted worker must not prepend it again */
  const char *inherited = getenv("PYTHONPATH");
  if (!path_set) {
    snprintf(path, sizeof path, "%s%s%s", package, inherited && inherited[0] ? ":" : "",
             inherited ? inherited : "");
    setenv("PYTHONPATH", path, 1);
    path_set = true;
  }
  struct tb_error no_library = {0}; /* without it the worker has host timing only */
  if (tb_resource_path(TB_RESOURCE_TIMING_LIB, lib, sizeof lib, &no_library) == TB_OK) {
    setenv("TILEBENCH_TIMING_LIB", lib, 1);
  }
  return TB_OK;
}

static enum tb_status load_callable(struct torch_state *s, struct tb_error *err);

static enum tb_status worker_start(struct torch_state *s, struct tb_error *err) {
  struct worker *w = &s->w;
  int in[2], out[2];
  if (worker_environment(err) != TB_OK) {
    return err->status;
  }
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    return tb_fail(err, TB_ERR_SYSTEM, "pipe: %s", strerror(errno));
  }
  const char *python = getenv("TILEBENCH_PYTHON") ? getenv("TILEBENCH_PYTHON") : "python3";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  /* Its own process group: a Ctrl-C at the terminal reaches the harness
   * alone, which finishes the case in flight and then ends the worker. */
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  char *argv[] = {(char *)python, "-u", "-m", "tilebench.torch_worker", NULL};
  int rc = posix_spawnp(&w->pid, python, &actions, &attributes, argv, environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  w->to_worker = in[1];
  w->from_worker = out[0];
  w->buffered = 0;
  if (rc != 0) {
    w->pid = 0;
    worker_kill(w);
    return tb_fail(err, TB_ERR_UNAVAILABLE, "cannot start the torch worker with %s: %s", python,
                   strerror(rc));
  }
  json_decref(s->hello);
  s->hello = NULL;
  if (read_reply(w, worker_timeout(), "hello", 0, &s->hello, err) != TB_OK) {
    json_decref(s->hello);
    s->hello = NULL;
    worker_kill(w);
    return err->status;
  }
  /* a restarted worker (after a crash) imports the callable again */
  if (s->callable_path != NULL && load_callable(s, err) != TB_OK) {
    worker_kill(w);
    return err->status;
  }
  return TB_OK;
}

/* Writes all of a request line; a worker that died makes this EPIPE
 * (SIGPIPE is ignored, core/interrupt.h), never a signal to the harness. */
static int write_line(int fd, const char *line) {
  size_t len = strlen(line);
  while (len > 0) {
    ssize_t put = write(fd, line, len);
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put <= 0) {
      return 0;
    }
    line += put;
    len -= (size_t)put;
  }
  return 1;
}

/* One request and its reply; a worker that broke the protocol is killed
 * (the next case starts a new one). A reply with ok = false is the worker's
 * own error message, and the worker goes on. */
static enum tb_status request(struct torch_state *s, json_t *req, int timeout_s, json_t **reply,
                              struct tb_error *err) {
  *reply = NULL;
  if (s->w.pid <= 0 && worker_start(s, err) != TB_OK) {
    json_decref(req);
    return err->status;
  }
  char cmd[32];
  snprintf(cmd, sizeof cmd, "%s", json_string_value(json_object_get(req, "cmd")));
  long long calls = (long long)json_integer_value(json_object_get(req, "calls"));
  char *line = json_dumps(req, JSON_COMPACT);
  json_decref(req);
  int ok = line != NULL && write_line(s->w.to_worker, line) && write_line(s->w.to_worker, "\n");
  free(line);
  if (!ok) {
    worker_kill(&s->w);
    return tb_fail(err, TB_ERR_RUN, "the torch worker stopped reading its requests (%s)",
                   strerror(errno));
  }
  if (read_reply(&s->w, timeout_s, cmd, calls, reply, err) != TB_OK) {
    if (*reply == NULL) {
      worker_kill(&s->w);
    }
    json_decref(*reply);
    *reply = NULL;
    return err->status;
  }
  return TB_OK;
}

static enum tb_status simple(struct torch_state *s, json_t *req, struct tb_error *err) {
  json_t *reply = NULL;
  enum tb_status st = request(s, req, worker_timeout(), &reply, err);
  json_decref(reply);
  return st;
}

/* user-python: the worker imports the module from its file and keeps the
 * function; the reply (path, digest, qualified name) goes to the details. */
static enum tb_status load_callable(struct torch_state *s, struct tb_error *err) {
  json_decref(s->callable);
  s->callable = NULL;
  json_t *req = json_pack("{s:s, s:s, s:s}", "cmd", "load_callable", "path", s->callable_path,
                          "function", s->callable_function);
  return request(s, req, worker_timeout(), &s->callable, err);
}

/* ---- provider ops ------------------------------------------------------------- */

/* The harness's own input bytes, one raw fp32 file per tensor. */
static json_t *write_inputs(struct torch_state *s, const struct tb_case_data *data,
                            struct tb_error *err) {
  json_t *inputs = json_array();
  for (size_t i = 0; i < data->input_count; ++i) {
    const struct tb_tensor *t = &data->inputs[i];
    char path[128];
    snprintf(path, sizeof path, "%s/%s.f32", s->dir, t->role);
    FILE *f = fopen(path, "wb");
    int ok =
        f != NULL && fwrite(t->storage, sizeof(float), t->storage_elems, f) == t->storage_elems;
    if (f == NULL || fclose(f) != 0 || !ok) {
      json_decref(inputs);
      tb_fail(err, TB_ERR_SYSTEM, "cannot write %s for the torch worker", path);
      return NULL;
    }
    json_array_append_new(inputs,
                          json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "role", t->role, "path",
                                    path, "storage_elems", (json_int_t)t->storage_elems, "offset",
                                    (json_int_t)t->offset, "rows", (json_int_t)t->rows, "cols",
                                    (json_int_t)t->cols, "row_stride", (json_int_t)t->row_stride));
  }
  return inputs;
}

/* PyTorch picks its own kernels: nothing to plan. */
static enum tb_status torch_plan(const struct tb_provider *p, const struct tb_case *c,
                                 struct tb_exec_plan *plan, struct tb_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->kind = TB_PLAN_NONE;
  return TB_OK;
}

static enum tb_status torch_prepare(struct tb_provider *p, const struct tb_case *c,
                                    const struct tb_case_data *data,
                                    const struct tb_exec_plan *plan, struct tb_error *err) {
  struct torch_state *s = p->state;
  snprintf(s->dir, sizeof s->dir, "/tmp/tilebench-torch-XXXXXX");
  if (mkdtemp(s->dir) == NULL) {
    s->dir[0] = '\0';
    return tb_fail(err, TB_ERR_SYSTEM, "cannot create a directory for the torch worker");
  }
  json_t *inputs = write_inputs(s, data, err);
  if (inputs == NULL) {
    return err->status;
  }
  s->out_elems = data->output.storage_elems;
  for (size_t i = 0; i < data->input_count && i < TB_MAX_INPUTS; ++i) {
    s->roles[i] = data->inputs[i].role;
  }
  /* gemm: TF32 exactly when the realization compared is TF32 */
  json_t *req = json_pack(
      "{s:s, s:s, s:I, s:I, s:b, s:b, s:o}", "cmd", "prepare", "op", c->op->name, "m",
      (json_int_t)c->shape.m, "n", (json_int_t)c->shape.n, "compile", s->compile, "allow_tf32",
      c->op->is_matmul && tb_realization_is_tf32(c->realization), "inputs", inputs);
  json_decref(s->prepared);
  if (request(s, req, s->compile ? TB_WORKER_COMPILE_TIMEOUT_S : worker_timeout(), &s->prepared,
              err) != TB_OK) {
    return err->status;
  }
  snprintf(s->allocation, sizeof s->allocation, "%s",
           json_string_value(json_object_get(s->prepared, "output_allocation")));
  p->output_allocation = s->allocation;
  p->backend = json_is_true(json_object_get(s->hello, "cuda")) ? "torch-cuda" : "torch-cpu";
  return TB_OK;
}

static enum tb_status torch_launch(struct tb_provider *p, unsigned long calls,
                                   struct tb_error *err) {
  return simple(p->state, json_pack("{s:s, s:I}", "cmd", "launch", "calls", (json_int_t)calls),
                err);
}

/* read_output synchronises in the worker; the timed paths never use this. */
static enum tb_status torch_synchronize(struct tb_provider *p, struct tb_error *err) {
  return TB_OK;
}

/* The worker's own clock around its calls, and the harness's around the
 * whole request (writing it, the worker's reading, the calls, the reply):
 * the second bounds the first from above. */
static enum tb_status torch_host_sample(struct tb_provider *p, unsigned long calls,
                                        int64_t *elapsed_ns, int64_t *harness_ns,
                                        struct tb_error *err) {
  json_t *reply = NULL;
  json_t *req = json_pack("{s:s, s:I}", "cmd", "host_sample", "calls", (json_int_t)calls);
  int64_t start = tb_monotonic_ns();
  if (request(p->state, req, worker_timeout(), &reply, err) != TB_OK) {
    return err->status;
  }
  *harness_ns = tb_monotonic_ns() - start;
  *elapsed_ns = (int64_t)json_integer_value(json_object_get(reply, "elapsed_ns"));
  json_decref(reply);
  return TB_OK;
}

static double number(const json_t *reply, const char *key) {
  return json_number_value(json_object_get(reply, key));
}

static int torch_device_sample(struct tb_provider *p, enum tb_batch_mode mode, bool probe,
                               unsigned calls, unsigned capacity, struct tb_timing_result *r,
                               char *error, size_t size) {
  struct tb_error err = {0};
  json_t *reply = NULL;
  json_t *req =
      json_pack("{s:s, s:s, s:b, s:i, s:i}", "cmd", "device_sample", "mode",
                tb_batch_mode_name(mode), "probe", probe, "calls", calls, "capacity", capacity);
  if (request(p->state, req, worker_timeout(), &reply, &err) != TB_OK) {
    snprintf(error, size, "%s", err.message);
    return TB_TIMING_E_CUDA;
  }
  int code = (int)json_integer_value(json_object_get(reply, "code"));
  *r = tb_timing_result_for(NULL, 0);
  r->scope = probe ? TB_TIMING_SCOPE_PROBE : TB_TIMING_SCOPE_CONTROL;
  r->gpu_elapsed_ns = number(reply, "gpu_elapsed_ns");
  r->declared_calls = (uint64_t)number(reply, "declared_calls");
  r->counted_launches = (uint64_t)number(reply, "counted_launches");
  r->held = number(reply, "held") == 1.0;
  r->kernels_seen = (uint64_t)number(reply, "kernels_seen");
  r->kernel_sum_ns = number(reply, "kernel_sum_ns");
  r->side_stream_kernels = (uint64_t)number(reply, "side_stream_kernels");
  r->clock_drift_ns = number(reply, "clock_drift_ns");
  r->kernels_before_launch = (uint64_t)number(reply, "kernels_before_launch");
  r->begin_host_ns = (uint64_t)json_integer_value(json_object_get(reply, "begin_host_ns"));
  r->end_host_ns = (uint64_t)json_integer_value(json_object_get(reply, "end_host_ns"));
  if (code != TB_TIMING_OK) {
    snprintf(error, size, "%s %s", probe ? "probe" : "control",
             json_string_value(json_object_get(reply, "error")));
  }
  json_decref(reply);
  return code;
}

static enum tb_status torch_poison(struct tb_provider *p, struct tb_error *err) {
  return simple(p->state, json_pack("{s:s}", "cmd", "poison"), err);
}

/* Reads the floats the worker wrote to `path` into dst (at most count) and
 * removes the file; returns how many it held, count + 1 when more. */
static size_t take_worker_floats(const char *path, float *dst, size_t count) {
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(dst, sizeof(float), count, f) : 0;
  got += f && got == count && fgetc(f) != EOF;
  if (f) {
    fclose(f);
  }
  unlink(path);
  return got;
}

static enum tb_status torch_read_output(struct tb_provider *p, float *dst, size_t count,
                                        struct tb_error *err) {
  struct torch_state *s = p->state;
  char path[128];
  snprintf(path, sizeof path, "%s/out.f32", s->dir);
  if (simple(s, json_pack("{s:s, s:s}", "cmd", "read_output", "path", path), err) != TB_OK) {
    return err->status;
  }
  size_t got = take_worker_floats(path, dst, count);
  if (got != count) {
    return tb_fail(err, TB_ERR_RUN, "the torch output has %s elements than the case's %zu",
                   got < count ? "fewer" : "more", count);
  }
  return TB_OK;
}

/* timed_outputs: the worker's buffer sets (its prepare reply's count), and
 * one set's output as the calls left it, or that no call reached it. */
static unsigned torch_output_sets(const struct tb_provider *p) {
  const struct torch_state *s = p->state;
  json_int_t sets =
      json_integer_value(json_object_get(json_object_get(s->prepared, "buffers"), "sets"));
  return sets > 0 && sets <= UINT32_MAX ? (unsigned)sets : 0;
}

static enum tb_status torch_read_set_output(struct tb_provider *p, unsigned set, float *dst,
                                            size_t count, bool *reached, struct tb_error *err) {
  struct torch_state *s = p->state;
  char path[128];
  snprintf(path, sizeof path, "%s/set-out.f32", s->dir);
  json_t *reply = NULL;
  *reached = false;
  if (request(s,
              json_pack("{s:s, s:i, s:s}", "cmd", "read_set_output", "set", (int)set, "path", path),
              worker_timeout(), &reply, err) != TB_OK) {
    return err->status;
  }
  *reached = json_is_true(json_object_get(reply, "reached"));
  json_decref(reply);
  if (!*reached) {
    return TB_OK;
  }
  size_t got = take_worker_floats(path, dst, count);
  if (got != count) {
    return tb_fail(err, TB_ERR_RUN,
                   "buffer set %u's torch output has %s elements than the case's %zu", set,
                   got < count ? "fewer" : "more", count);
  }
  return TB_OK;
}

static void *torch_device_stream(const struct tb_provider *p) {
  return NULL;
}

static bool torch_has_device(const struct tb_provider *p) {
  const struct torch_state *s = p->state;
  return json_is_true(json_object_get(s->hello, "cuda")) &&
         json_is_true(json_object_get(s->hello, "timing"));
}

static unsigned torch_launches_per_call(const struct tb_provider *p) {
  /* an upper bound for the probe's capacity: eager ops launch 1-2 kernels,
   * torch.compile's code up to 5 (softmax 8x65536 on the H200) */
  return 8;
}

static void torch_details(const struct tb_provider *p, struct tb_provider_details *out) {
  const struct torch_state *s = p->state;
  tb_torch_details_read(s->hello, s->prepared, s->compile, out);
  tb_torch_callable_read(s->callable, out);
}

static const char *torch_source(const struct tb_provider *p, const char **sha256) {
  *sha256 = NULL;
  return NULL;
}

static void torch_release(struct tb_provider *p) {
  struct torch_state *s = p->state;
  if (s->w.pid > 0) {
    struct tb_error ignored = {0};
    simple(s, json_pack("{s:s}", "cmd", "release"), &ignored);
  }
  if (s->dir[0]) {
    char path[128];
    const char *roles[] = {"x", "a", "b", "weight", "bias", "out", "set-out", "input-back"};
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; ++i) {
      snprintf(path, sizeof path, "%s/%s.f32", s->dir, roles[i]);
      unlink(path);
    }
    rmdir(s->dir);
    s->dir[0] = '\0';
  }
}

static void torch_destroy(struct tb_provider *p) {
  struct torch_state *s = p->state;
  torch_release(p);
  if (s->w.pid > 0) {
    if (write(s->w.to_worker, "{\"cmd\":\"quit\"}\n", 15) == 15) {
      waitpid(s->w.pid, NULL, 0);
      s->w.pid = 0;
    }
  }
  worker_kill(&s->w);
  json_decref(s->hello);
  json_decref(s->prepared);
  json_decref(s->callable);
  free(s);
  free(p);
}

/* inputs_unchanged: the worker writes the storage of the
 * first buffer set whose bits differ from the harness's file, else set 0. */
static enum tb_status python_read_input(struct tb_provider *p, size_t index, float *dst,
                                        size_t count, struct tb_error *err) {
  struct torch_state *s = p->state;
  char path[128];
  snprintf(path, sizeof path, "%s/input-back.f32", s->dir);
  json_t *req =
      json_pack("{s:s, s:s, s:s}", "cmd", "read_input", "role",
                index < TB_MAX_INPUTS && s->roles[index] ? s->roles[index] : "", "path", path);
  if (simple(s, req, err) != TB_OK) {
    return err->status;
  }
  if (take_worker_floats(path, dst, count) != count) {
    return tb_fail(err, TB_ERR_RUN, "the worker's input read back is not of %zu elements", count);
  }
  return TB_OK;
}

/* fresh_inputs: other bytes into every set, in place. */
static enum tb_status python_load_inputs(struct tb_provider *p, const struct tb_case_data *data,
                                         struct tb_error *err) {
  struct torch_state *s = p->state;
  json_t *inputs = write_inputs(s, data, err);
  if (inputs == NULL) {
    return err->status;
  }
  return simple(s, json_pack("{s:s, s:o}", "cmd", "load_inputs", "inputs", inputs), err);
}

/* guard_zones: the worker keeps every input of every set
 * between two zones of TB_GUARD_BITS and checks them. */
static enum tb_status python_check_guards(struct tb_provider *p, struct tb_guard_report *report,
                                          struct tb_error *err) {
  json_t *reply = NULL;
  memset(report, 0, sizeof *report);
  if (request(p->state, json_pack("{s:s}", "cmd", "check_guards"), worker_timeout(), &reply, err) !=
      TB_OK) {
    return err->status;
  }
  report->buffers = (unsigned)json_integer_value(json_object_get(reply, "buffers"));
  report->intact = json_is_true(json_object_get(reply, "intact"));
  const char *damaged = json_string_value(json_object_get(reply, "damaged"));
  snprintf(report->damaged, sizeof report->damaged, "%s", damaged ? damaged : "");
  json_decref(reply);
  return TB_OK;
}

/* The worker's primitives, the same for the torch providers and user-python,
 * the defences' among them: a built-in provider is checked as a user's
 * callable is (its inputs read back, replaced, kept between guard zones). */
#define TORCH_WORKER_OPS                                                                           \
  .plan = torch_plan, .prepare = torch_prepare, .launch = torch_launch,                            \
  .synchronize = torch_synchronize, .poison_output = torch_poison,                                 \
  .read_output = torch_read_output, .device_stream = torch_device_stream,                          \
  .output_sets = torch_output_sets, .read_set_output = torch_read_set_output,                      \
  .has_device = torch_has_device, .host_sample = torch_host_sample,                                \
  .device_sample = torch_device_sample, .launches_per_call = torch_launches_per_call,              \
  .details = torch_details, .source = torch_source, .release = torch_release,                      \
  .destroy = torch_destroy, .read_input = python_read_input, .load_inputs = python_load_inputs,    \
  .check_guards = python_check_guards

static const struct tb_provider_ops torch_ops = {TORCH_WORKER_OPS};

/* A provider over state `s` (allocated by the caller, owned by the provider
 * from here on, freed on failure) and a worker started for it. */
static enum tb_status start_provider(const struct tb_provider_ops *ops, const char *name,
                                     struct torch_state *s, struct tb_provider **out,
                                     struct tb_error *err) {
  *out = NULL;
  struct tb_provider *p = s ? calloc(1, sizeof *p) : NULL;
  if (p == NULL) {
    free(s);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating the %s provider", name);
  }
  s->w.to_worker = s->w.from_worker = -1;
  p->ops = ops;
  p->name = name;
  p->backend = "torch";
  p->output_allocation = "framework_return_value";
  p->state = s;
  if (worker_start(s, err) != TB_OK) {
    torch_destroy(p);
    return err->status;
  }
  *out = p;
  return TB_OK;
}

enum tb_status tb_torch_provider_create(bool compile, struct tb_provider **out,
                                        struct tb_error *err) {
  struct torch_state *s = calloc(1, sizeof *s);
  if (s != NULL) {
    s->compile = compile;
  }
  return start_provider(&torch_ops, compile ? "torch-compile" : "torch", s, out, err);
}

enum tb_status tb_user_python_split(const char *kernel, char *path, size_t path_size,
                                    char *function, size_t function_size, struct tb_error *err) {
  const char *colon = kernel ? strrchr(kernel, ':') : NULL;
  if (colon == NULL || colon == kernel || colon[1] == '\0') {
    return tb_fail(err, TB_ERR_USAGE,
                   "--kernel '%s': the user-python provider needs FILE.py:FUNCTION (for example "
                   "examples/user-kernel-python/softmax.py:softmax)",
                   kernel ? kernel : "");
  }
  size_t length = (size_t)(colon - kernel);
  if (length >= path_size || strlen(colon + 1) >= function_size) {
    return tb_fail(err, TB_ERR_USAGE, "--kernel '%s' is too long", kernel);
  }
  memcpy(path, kernel, length);
  path[length] = '\0';
  snprintf(function, function_size, "%s", colon + 1);
  return TB_OK;
}

enum tb_status tb_user_python_provider_create(const char *kernel, struct tb_provider **out,
                                              struct tb_error *err) {
  *out = NULL;
  static char path[PATH_MAX], function[256]; /* one user-python provider per run */
  if (tb_user_python_split(kernel, path, sizeof path, function, sizeof function, err) != TB_OK) {
    return err->status;
  }
  struct torch_state *s = calloc(1, sizeof *s);
  if (s != NULL) {
    s->callable_path = path;
    s->callable_function = function;
  }
  return start_provider(&torch_ops, "user-python", s, out, err);
}

enum tb_status tb_user_python_check(const char *kernel, struct tb_error *err) {
  struct tb_provider *p = NULL;
  struct tb_error start = {0};
  char path[PATH_MAX], function[256];
  if (tb_user_python_split(kernel, path, sizeof path, function, sizeof function, err) != TB_OK) {
    return err->status;
  }
  struct stat st;
  errno = 0;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, R_OK) != 0) {
    return tb_fail(err, TB_ERR_USAGE, "--kernel %s: %s is not a readable file (%s)", kernel, path,
                   errno ? strerror(errno) : "not a regular file");
  }
  /* no worker here (no PyTorch): the provider's cases will say why */
  if (tb_torch_provider_create(false, &p, &start) != TB_OK) {
    return TB_OK;
  }
  struct torch_state *s = p->state;
  s->callable_path = path;
  s->callable_function = function;
  struct tb_error load = {0};
  enum tb_status loaded = load_callable(s, &load);
  s->callable_path = s->callable_function = NULL;
  torch_destroy(p);
  if (loaded != TB_OK) {
    return tb_fail(err, TB_ERR_USAGE, "--kernel %s: %s", kernel, load.message);
  }
  return TB_OK;
}
