#include "backends/cpu/cpu_output.h"

#include "inputs/guard.h"

static struct tb_guarded *output_of(const struct tb_provider *p) {
  return (struct tb_guarded *)p->state; /* the state's first member */
}

enum tb_status tb_cpu_output_read(struct tb_provider *p, float *dst, size_t count,
                                  struct tb_error *err) {
  return tb_guarded_read(output_of(p), dst, count, err);
}

unsigned tb_cpu_output_sets(const struct tb_provider *p) {
  (void)p;
  return 1;
}

enum tb_status tb_cpu_output_read_set(struct tb_provider *p, unsigned set, float *dst, size_t count,
                                      bool *reached, struct tb_error *err) {
  *reached = set == 0;
  return set == 0 ? tb_cpu_output_read(p, dst, count, err) : TB_OK;
}

enum tb_status tb_cpu_output_decoy(struct tb_provider *p, const float *values, size_t count,
                                   struct tb_error *err) {
  return tb_guarded_write(output_of(p), values, count, err);
}
