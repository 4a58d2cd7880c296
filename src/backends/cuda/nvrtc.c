#include "backends/cuda/nvrtc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/dlfind.h"

/* NVRTC's C API, declared by its documented signatures. */
typedef int nvrtc_result;
typedef struct nvrtc_program *nvrtc_program;

static struct {
  int state; /* 0 untried, 1 loaded, -1 missing */
  char path[512];
  nvrtc_result (*version)(int *, int *);
  nvrtc_result (*create)(nvrtc_program *, const char *, const char *, int, const char *const *,
                         const char *const *);
  nvrtc_result (*compile)(nvrtc_program, int, const char *const *);
  nvrtc_result (*log_size)(nvrtc_program, size_t *);
  nvrtc_result (*get_log)(nvrtc_program, char *);
  nvrtc_result (*cubin_size)(nvrtc_program, size_t *);
  nvrtc_result (*get_cubin)(nvrtc_program, char *);
  nvrtc_result (*destroy)(nvrtc_program *);
  const char *(*error_string)(nvrtc_result);
} nv;

static int load_nvrtc(void) {
  void *h = tb_dlopen_cuda_library("libnvrtc.so.13", nv.path, sizeof nv.path);
  if (h == NULL) {
    return -1;
  }
  *(void **)&nv.version = dlsym(h, "nvrtcVersion");
  *(void **)&nv.create = dlsym(h, "nvrtcCreateProgram");
  *(void **)&nv.compile = dlsym(h, "nvrtcCompileProgram");
  *(void **)&nv.log_size = dlsym(h, "nvrtcGetProgramLogSize");
  *(void **)&nv.get_log = dlsym(h, "nvrtcGetProgramLog");
  *(void **)&nv.cubin_size = dlsym(h, "nvrtcGetCUBINSize");
  *(void **)&nv.get_cubin = dlsym(h, "nvrtcGetCUBIN");
  *(void **)&nv.destroy = dlsym(h, "nvrtcDestroyProgram");
  *(void **)&nv.error_string = dlsym(h, "nvrtcGetErrorString");
  return nv.version && nv.create && nv.compile && nv.log_size && nv.get_log && nv.cubin_size &&
                 nv.get_cubin && nv.destroy && nv.error_string
             ? 1
             : -1;
}

/* Sums "N bytes spill stores" style figures over every kernel in the log. */
static long sum_figure(const char *log, const char *suffix) {
  long total = -1;
  for (const char *p = strstr(log, suffix); p != NULL; p = strstr(p + 1, suffix)) {
    const char *start = p;
    while (start > log && start[-1] == ' ') {
      start--;
    }
    while (start > log && start[-1] >= '0' && start[-1] <= '9') {
      start--;
    }
    total = (total < 0 ? 0 : total) + strtol(start, NULL, 10);
  }
  return total;
}

static int max_registers(const char *log) {
  int most = -1;
  for (const char *p = strstr(log, "Used "); p != NULL; p = strstr(p + 1, "Used ")) {
    int regs = 0;
    if (sscanf(p, "Used %d registers", &regs) == 1 && regs > most) {
      most = regs;
    }
  }
  return most;
}

enum tb_status tb_nvrtc_compile(const char *source, const char *arch, struct tb_compiled *out,
                                struct tb_error *err) {
  return tb_nvrtc_compile_named(source, "tilebench_kernel.cu", "a generated kernel", arch, out,
                                err);
}

enum tb_status tb_nvrtc_compile_named(const char *source, const char *file_name, const char *what,
                                      const char *arch, struct tb_compiled *out,
                                      struct tb_error *err) {
  memset(out, 0, sizeof *out);
  if (nv.state == 0) {
    nv.state = load_nvrtc();
  }
  if (nv.state < 0) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "NVRTC (libnvrtc.so.13) was not found: install the "
                   "CUDA 13 toolkit or set CUDA_HOME");
  }
  snprintf(out->nvrtc_path, sizeof out->nvrtc_path, "%s", nv.path);
  nv.version(&out->nvrtc_major, &out->nvrtc_minor);
  char arch_option[64];
  snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", arch);
  const char *options[] = {arch_option, "--std=c++17", "--ptxas-options=-v"};
  snprintf(out->options, sizeof out->options, "%s %s %s", options[0], options[1], options[2]);
  nvrtc_program prog = NULL;
  nvrtc_result rc = nv.create(&prog, source, file_name, 0, NULL, NULL);
  if (rc != 0) {
    return tb_fail(err, TB_ERR_RUN, "nvrtcCreateProgram: %s", nv.error_string(rc));
  }
  int64_t start = tb_monotonic_ns();
  rc = nv.compile(prog, 3, options);
  out->compile_ms = (double)(tb_monotonic_ns() - start) / 1e6;
  size_t log_size = 0;
  nv.log_size(prog, &log_size);
  out->log = calloc(log_size + 1, 1);
  if (out->log != NULL && log_size > 0) {
    nv.get_log(prog, out->log);
  }
  if (rc != 0) {
    tb_fail(err, TB_ERR_RUN, "NVRTC failed to compile %s for %s: %s\n%s", what, arch,
            nv.error_string(rc), out->log ? out->log : "");
    nv.destroy(&prog);
    return err->status;
  }
  nv.cubin_size(prog, &out->cubin_size);
  out->cubin = malloc(out->cubin_size);
  if (out->cubin == NULL) {
    nv.destroy(&prog);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for a compiled kernel");
  }
  nv.get_cubin(prog, out->cubin);
  nv.destroy(&prog);
  const char *log = out->log ? out->log : "";
  out->spill_store_bytes = sum_figure(log, " bytes spill stores");
  out->spill_load_bytes = sum_figure(log, " bytes spill loads");
  out->stack_frame_bytes = sum_figure(log, " bytes stack frame");
  out->max_registers = max_registers(log);
  return TB_OK;
}

void tb_compiled_free(struct tb_compiled *c) {
  free(c->cubin);
  free(c->log);
  memset(c, 0, sizeof *c);
}

void tb_compiled_facts(const struct tb_compiled *c, double load_ms, struct tb_compile_facts *f) {
  memset(f, 0, sizeof *f);
  snprintf(f->nvrtc_version, sizeof f->nvrtc_version, "%d.%d", c->nvrtc_major, c->nvrtc_minor);
  snprintf(f->options, sizeof f->options, "%s", c->options);
  f->compile_ms = c->compile_ms;
  f->load_ms = load_ms;
  f->spill_store_bytes = c->spill_store_bytes;
  f->spill_load_bytes = c->spill_load_bytes;
  f->stack_frame_bytes = c->stack_frame_bytes;
  f->max_registers = c->max_registers;
  snprintf(f->nvrtc_path, sizeof f->nvrtc_path, "%s", c->nvrtc_path);
}
