/* Run-time compilation of generated CUDA C with NVRTC (loaded with dlopen;
 * needs no GPU, so CI compiles every generated kernel too). */
#ifndef TB_BACKENDS_CUDA_NVRTC_H
#define TB_BACKENDS_CUDA_NVRTC_H

#include <stddef.h>

#include "core/error.h"
#include "providers/provider_details.h"

struct tb_compiled {
  void *cubin;
  size_t cubin_size;
  char *log;         /* compiler and ptxas messages (ptxas -v) */
  char options[256]; /* the options, space-separated, as recorded */
  char nvrtc_path[512];
  int nvrtc_major, nvrtc_minor;
  double compile_ms;
  /* from ptxas -v, per kernel summed: -1 when the log did not say */
  long spill_store_bytes, spill_load_bytes, stack_frame_bytes;
  int max_registers;
};

/* Compiles `source` for `arch` ("sm_90"). TB_ERR_UNAVAILABLE when NVRTC is
 * missing; TB_ERR_RUN with the compiler log when compilation fails. */
enum tb_status tb_nvrtc_compile(const char *source, const char *arch, struct tb_compiled *out,
                                struct tb_error *err);
/* The same for a source not generated here (a user's .cu): `file_name` names
 * it in the compiler's messages, `what` in the error. */
enum tb_status tb_nvrtc_compile_named(const char *source, const char *file_name, const char *what,
                                      const char *arch, struct tb_compiled *out,
                                      struct tb_error *err);
void tb_compiled_free(struct tb_compiled *c);

/* What the results record of a compilation (and of loading it: `load_ms`). */
void tb_compiled_facts(const struct tb_compiled *c, double load_ms, struct tb_compile_facts *f);

#endif
