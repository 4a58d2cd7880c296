#include "measure/campaign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/interrupt.h"
#include "inputs/tensor.h"
#include "measure/case_runner.h"
#include "oracle/oracle.h"
#include "registry/registry.h"
#include "results/results.h"

/* A planning provider runs a row reduction once per variant; every
 * provider runs gemm once per realization. */
static size_t runs_per_case(const struct tb_campaign *c, const struct tb_op_info *op,
                            const char *provider) {
  if (op->is_matmul) {
    return c->realization_count;
  }
  return op->is_row_reduction && tb_provider_plans(provider) ? c->variant_count : 1;
}

void tb_campaign_reverse_variants(struct tb_campaign *c) {
  for (size_t i = 0; i < c->variant_count / 2; ++i) {
    enum tb_variant t = c->variants[i];
    c->variants[i] = c->variants[c->variant_count - 1 - i];
    c->variants[c->variant_count - 1 - i] = t;
  }
}

/* Why the campaign does not measure op on shape, or NULL when it does: the
 * shape must fit the op (MxNxK for gemm) and replays take row reductions only. */
const char *tb_campaign_skip_reason(const struct tb_campaign *c, const struct tb_op_info *op,
                                    struct tb_shape s) {
  if (c->reductions_only && !op->is_row_reduction) {
    return "replays compare plans of row reductions";
  }
  if (!tb_op_accepts(op, s)) {
    return op->is_matmul ? "gemm takes MxNxK shapes" : "this operation takes MxN shapes";
  }
  return NULL;
}

static bool measured(const struct tb_campaign *c, const struct tb_op_info *op, struct tb_shape s) {
  return tb_campaign_skip_reason(c, op, s) == NULL;
}

size_t tb_campaign_case_count(const struct tb_campaign *c) {
  size_t total = 0;
  for (size_t s = 0; s < c->shape_count; ++s) {
    for (size_t o = 0; o < c->op_count; ++o) {
      if (!measured(c, c->ops[o], c->shapes[s])) {
        continue;
      }
      for (size_t p = 0; p < c->provider_count; ++p) {
        total += runs_per_case(c, c->ops[o], c->providers[p]) * c->view_count;
      }
    }
  }
  return total;
}

enum tb_status tb_campaign_check_shapes(const struct tb_campaign *c, struct tb_error *err) {
  for (size_t s = 0; s < c->shape_count; ++s) {
    bool used = false;
    for (size_t o = 0; o < c->op_count; ++o) {
      used |= measured(c, c->ops[o], c->shapes[s]);
    }
    if (!used) {
      return tb_fail(err, TB_ERR_USAGE,
                     "no operation of the campaign takes shape %zux%zu%s (MxNxK shapes are for "
                     "gemm, MxN for the others)",
                     c->shapes[s].m, c->shapes[s].n, c->shapes[s].k ? "xK" : "");
    }
  }
  return TB_OK;
}

static struct tb_case case_at(const struct tb_campaign *c, size_t shape, size_t op, size_t view) {
  struct tb_case k;
  memset(&k, 0, sizeof k);
  k.op = c->ops[op];
  k.shape = c->shapes[shape];
  k.view = tb_view_for(c->views[view], k.shape.n);
  k.provider = NULL;
  k.planned = false;
  k.variant = TB_VARIANT_AUTOMATIC;
  return k;
}

enum tb_status tb_campaign_check_memory(const struct tb_campaign *c, struct tb_error *err) {
  for (size_t s = 0; s < c->shape_count; ++s) {
    for (size_t o = 0; o < c->op_count; ++o) {
      for (size_t v = 0; v < c->view_count; ++v) {
        struct tb_case k = case_at(c, s, o, v);
        if (measured(c, k.op, k.shape) && tb_case_fits_memory(&k, err) != TB_OK) {
          return err->status;
        }
      }
    }
  }
  return TB_OK;
}

static void show_progress(const struct tb_campaign *c, size_t done, size_t total, const char *id) {
  if (c->progress) {
    fprintf(stderr, "\r\033[K[%zu/%zu] %s", done, total, id);
    if (done == total) {
      fputc('\n', stderr);
    }
    fflush(stderr);
  }
}

/* A frozen replay runs exactly the pilot's kernels: a case whose generated
 * source differs from the pilot's is refused (invalid, with the reason). */
static void check_frozen_source(const struct tb_campaign *c, struct tb_case_result *r) {
  if (c->frozen_sources == NULL || r->source == NULL) {
    return;
  }
  const char *pilot = json_string_value(json_object_get(c->frozen_sources, r->id));
  if (pilot == NULL || strcmp(pilot, r->source_sha256) != 0) {
    snprintf(r->error, sizeof r->error,
             "frozen replay: source %.16s… differs from the pilot's %.16s…", r->source_sha256,
             pilot ? pilot : "(case absent from the pilot)");
    r->valid = false;
  }
}

/* A provider that could not start (PyTorch missing, say): its cases are
 * recorded invalid with the reason, and the run goes on. */
static json_t *unavailable_case(const struct tb_case *k, const char *provider, const char *why) {
  struct tb_case_result r;
  memset(&r, 0, sizeof r);
  r.c = *k;
  r.c.provider = provider;
  tb_case_id(&r.c, r.id, sizeof r.id);
  r.backend = "none";
  r.output_allocation = "none";
  r.minimal_bytes = tb_op_minimal_bytes(k->op->op, k->shape);
  r.device_unavailable_reason = "the provider did not start";
  snprintf(r.error, sizeof r.error, "provider %.40s unavailable: %.900s", provider, why);
  return tb_case_result_to_json(&r);
}

/* The ids of a case's runs on every provider, for a run stopped before it. */
static void record_missing(const struct tb_campaign *c, const struct tb_case *k, json_t *missing) {
  for (size_t p = 0; p < c->provider_count; ++p) {
    for (size_t v = 0; v < runs_per_case(c, k->op, c->providers[p]); ++v) {
      struct tb_case pc = *k;
      pc.provider = c->providers[p];
      pc.planned = k->op->is_row_reduction && tb_provider_plans(c->providers[p]);
      pc.variant = pc.planned ? c->variants[v] : TB_VARIANT_AUTOMATIC;
      pc.realization = k->op->is_matmul ? c->realizations[v] : TB_REALIZATION_SIMT;
      char id[256];
      tb_case_id(&pc, id, sizeof id);
      json_array_append_new(missing, json_string(id));
    }
  }
}

/* One case's inputs and oracle, measured on every provider; the provider
 * order alternates case by case so each goes first equally often. */
static enum tb_status run_one_case(const struct tb_campaign *c, struct tb_provider **providers,
                                   const struct tb_error *failures, const struct tb_case *k,
                                   size_t *case_index, json_t *cases, size_t *done,
                                   size_t *valid_count, struct tb_error *err) {
  struct tb_case_data data;
  double *reference = NULL;
  if (tb_case_data_create(k, c->seed, &data, err) != TB_OK ||
      tb_oracle_compute(&data, &reference, err) != TB_OK) {
    tb_case_data_free(&data);
    return err->status;
  }
  /* The provider order alternates case by case and, in replays, round by
   * round, so each provider goes first in half the rounds of every case. */
  int reversed = (*case_index + (size_t)(c->round > 0 ? c->round : 0)) % 2 == 1;
  ++*case_index;
  for (size_t q = 0; q < c->provider_count && err->status == TB_OK; ++q) {
    size_t p = reversed ? c->provider_count - 1 - q : q;
    if (providers[p] == NULL) {
      for (size_t v = 0; v < runs_per_case(c, k->op, c->providers[p]); ++v) {
        struct tb_case pc = *k;
        pc.realization = k->op->is_matmul ? c->realizations[v] : TB_REALIZATION_SIMT;
        json_t *record = unavailable_case(&pc, c->providers[p], failures[p].message);
        json_object_set_new(record, "provider_position", json_integer((json_int_t)q));
        json_array_append_new(cases, record);
        show_progress(c, ++*done, tb_campaign_case_count(c), c->providers[p]);
      }
      continue;
    }
    int planned = providers[p]->plans_reductions && k->op->is_row_reduction;
    size_t runs = runs_per_case(c, k->op, c->providers[p]);
    for (size_t v = 0; v < runs && err->status == TB_OK; ++v) {
      struct tb_case pc = *k;
      pc.provider = providers[p]->name;
      pc.planned = planned;
      pc.variant = planned ? c->variants[v] : TB_VARIANT_AUTOMATIC;
      pc.profile = c->profile;
      pc.realization = k->op->is_matmul ? c->realizations[v] : TB_REALIZATION_SIMT;
      pc.gemm_block = c->gemm_block;
      struct tb_case_result result;
      enum tb_status st = tb_run_case(providers[p], &pc, &data, reference, &c->measure, &result);
      check_frozen_source(c, &result);
      if (result.source != NULL && c->out_dir != NULL) {
        tb_archive_source(c->out_dir, result.source_sha256, result.source, err);
      }
      json_t *record = tb_case_result_to_json(&result);
      json_object_set_new(record, "provider_position", json_integer((json_int_t)q));
      if (c->round >= 0) {
        json_object_set_new(record, "round", json_integer(c->round));
        json_object_set_new(record, "position", json_integer((json_int_t)v));
      }
      json_array_append_new(cases, record);
      *valid_count += result.valid;
      show_progress(c, ++*done, tb_campaign_case_count(c), result.id);
      if (st != TB_OK) {
        tb_fail(err, st, "ran out of memory measuring %s", result.id);
      }
      tb_case_result_free(&result);
    }
  }
  free(reference);
  tb_case_data_free(&data);
  return err->status;
}

enum tb_status tb_campaign_run(const struct tb_campaign *c, json_t *cases, json_t *missing,
                               size_t *valid_count, struct tb_error *err) {
  struct tb_provider **providers = calloc(c->provider_count, sizeof *providers);
  struct tb_error *failures = calloc(c->provider_count, sizeof *failures);
  if (providers == NULL || failures == NULL) {
    free(providers);
    free(failures);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating providers");
  }
  *valid_count = 0;
  for (size_t p = 0; p < c->provider_count && !tb_interrupted(); ++p) {
    /* The native provider is the run's purpose: without it, stop. Others
     * (a missing PyTorch) leave invalid cases with the reason. */
    if (tb_provider_create(c->providers[p], c->backend, &providers[p], &failures[p]) != TB_OK &&
        strcmp(c->providers[p], "native") == 0) {
      tb_fail(err, failures[p].status, "%s", failures[p].message);
    }
  }
  size_t done = 0, case_index = 0;
  for (size_t s = 0; s < c->shape_count && err->status == TB_OK; ++s) {
    for (size_t o = 0; o < c->op_count && err->status == TB_OK; ++o) {
      for (size_t v = 0; v < c->view_count && err->status == TB_OK; ++v) {
        struct tb_case k = case_at(c, s, o, v);
        if (!measured(c, k.op, k.shape)) {
          continue;
        }
        if (tb_interrupted()) { /* the case in flight finished; the rest are listed */
          record_missing(c, &k, missing);
          continue;
        }
        run_one_case(c, providers, failures, &k, &case_index, cases, &done, valid_count, err);
      }
    }
  }
  for (size_t p = 0; p < c->provider_count; ++p) {
    tb_provider_destroy(providers[p]);
  }
  free(providers);
  free(failures);
  return err->status;
}
