/* The one output of a CPU provider (native or user): a guarded host buffer
 * that the provider's state starts with, so these ops serve both, as the
 * CUDA device base's serve the CUDA providers. */
#ifndef TB_BACKENDS_CPU_CPU_OUTPUT_H
#define TB_BACKENDS_CPU_CPU_OUTPUT_H

#include "providers/provider.h"

enum tb_status tb_cpu_output_read(struct tb_provider *p, float *dst, size_t count,
                                  struct tb_error *err);
/* timed_outputs: one output, reached by every timed call. */
unsigned tb_cpu_output_sets(const struct tb_provider *p);
enum tb_status tb_cpu_output_read_set(struct tb_provider *p, unsigned set, float *dst, size_t count,
                                      bool *reached, struct tb_error *err);
/* The decoy written over the output before every timed batch. */
enum tb_status tb_cpu_output_decoy(struct tb_provider *p, const float *values, size_t count,
                                   struct tb_error *err);

/* For the provider's struct tb_provider_ops initializer; its state's first
 * member is a struct tb_guarded, the output. */
#define TB_CPU_OUTPUT_OPS                                                                          \
  .read_output = tb_cpu_output_read, .output_sets = tb_cpu_output_sets,                            \
  .read_set_output = tb_cpu_output_read_set, .decoy_output = tb_cpu_output_decoy

#endif
