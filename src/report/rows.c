#include "report/rows.h"

#include <math.h>

#include "report/format.h"
#include "stats/interval.h"
#include "stats/stats.h"

const char *tb_row_scope_name(enum tb_row_scope scope) {
  switch (scope) {
  case TB_ROW_GAP_FREE: return "gap_free";
  case TB_ROW_EAGER: return "eager_gpu";
  case TB_ROW_HOST: return "host";
  case TB_ROW_NONE: break;
  }
  return NULL;
}

/* The scope a case is ranked by, as markdown_ratios ranks pairs: gap-free
 * GPU time excludes the host's launch gaps, so it is the kernel's own cost;
 * eager GPU control next (only when complete: a partial phase is not a
 * figure); host E2E when the device was never timed (the CPU backend). */
static const struct tb_model_scope *ranking_scope(const struct tb_model_case *c,
                                                  enum tb_row_scope *scope) {
  if (c->gap_free_mode != NULL && c->gap_free_throughput.count > 0) {
    *scope = TB_ROW_GAP_FREE;
    return &c->gap_free_throughput;
  }
  if (c->control_complete && c->control_throughput.count > 0) {
    *scope = TB_ROW_EAGER;
    return &c->control_throughput;
  }
  if (c->host_throughput.count > 0) {
    *scope = TB_ROW_HOST;
    return &c->host_throughput;
  }
  *scope = TB_ROW_NONE;
  return NULL;
}

struct tb_report_row tb_report_row(const struct tb_model_case *c, double ceiling) {
  struct tb_report_row r = {.c = c,
                            .p50_ns = NAN,
                            .min_ns = NAN,
                            .max_ns = NAN,
                            .robust_cv = NAN,
                            .gbps = NAN,
                            .copy_fraction = NAN};
  const struct tb_model_scope *s = tb_provider_unavailable(c) ? NULL : ranking_scope(c, &r.scope);
  if (s == NULL) {
    r.scope = TB_ROW_NONE;
    return r;
  }
  r.mode = r.scope == TB_ROW_GAP_FREE ? c->gap_free_mode : NULL;
  struct tb_summary sum = tb_summarize(s->per_call_ns, s->count);
  r.p50_ns = sum.p50;
  r.min_ns = sum.min;
  r.max_ns = sum.max;
  r.samples = s->count;
  r.robust_cv = tb_robust_cv(s->per_call_ns, s->count);
  if (c->minimal_bytes > 0.0 && r.p50_ns > 0.0) {
    r.gbps = c->minimal_bytes / r.p50_ns; /* bytes per ns = GB/s */
  }
  /* the ceiling is a device copy: a host time against it means nothing */
  if (r.scope != TB_ROW_HOST && !isnan(ceiling) && ceiling > 0.0) {
    r.copy_fraction = r.gbps / ceiling;
  }
  return r;
}
