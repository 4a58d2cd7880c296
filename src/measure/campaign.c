#include "measure/campaign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/interrupt.h"
#include "inputs/tensor.h"
#include "measure/case_runner.h"
#include "oracle/oracle.h"
#include "providers/torch_worker.h"
#include "registry/registry.h"
#include "results/results.h"

/* ---- the axes --------------------------------------------------------------- */

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

static bool measured(const struct tb_campaign *c, size_t op, size_t shape) {
  return tb_campaign_skip_reason(c, c->ops[op], c->shapes[shape]) == NULL;
}

/* A planning provider runs a row reduction once per variant; every
 * provider runs gemm once per realization; anything else once. */
static size_t runs_per_case(const struct tb_campaign *c, const struct tb_op_info *op,
                            const char *provider) {
  if (op->is_matmul) {
    return c->realization_count;
  }
  return op->is_row_reduction && tb_provider_plans(provider) ? c->variant_count : 1;
}

enum tb_variant tb_campaign_variant_at(const struct tb_campaign *c, int round, size_t position) {
  bool reversed = round >= 0 && round % 2 == 1;
  return c->variants[reversed ? c->variant_count - 1 - position : position];
}

void tb_campaign_cursor_start(struct tb_campaign_cursor *cur, bool alternate) {
  memset(cur, 0, sizeof *cur);
  cur->alternate = alternate;
}

/* Steps (shape, op, view) once, views fastest; false past the last. */
static bool step_axes(const struct tb_campaign *c, struct tb_campaign_cursor *cur) {
  if (++cur->view < c->view_count) {
    return true;
  }
  cur->view = 0;
  if (++cur->op < c->op_count) {
    return true;
  }
  cur->op = 0;
  return ++cur->shape < c->shape_count;
}

/* To the next measured case of the whole campaign. */
static bool next_unit(const struct tb_campaign *c, struct tb_campaign_cursor *cur) {
  bool first = !cur->in_case;
  bool more =
      first ? c->shape_count > 0 && c->op_count > 0 && c->view_count > 0 : step_axes(c, cur);
  while (more && !measured(c, cur->op, cur->shape)) {
    more = step_axes(c, cur);
  }
  if (!more) {
    cur->in_case = false;
    return false;
  }
  cur->case_index = first ? 0 : cur->case_index + 1;
  cur->in_case = true;
  cur->in_run = false;
  memset(&cur->base, 0, sizeof cur->base);
  cur->base.op = c->ops[cur->op];
  cur->base.shape = c->shapes[cur->shape];
  cur->base.view = tb_view_for(c->views[cur->view], cur->base.shape.n);
  cur->base.variant = TB_VARIANT_AUTOMATIC;
  return true;
}

bool tb_campaign_next_case(const struct tb_campaign *c, struct tb_campaign_cursor *cur) {
  while (next_unit(c, cur)) {
    if (c->shard_of == NULL || c->shard_of[cur->case_index] == c->shard_index) {
      return true;
    }
  }
  return false;
}

/* The provider at a slot of the case's order. The order alternates case by
 * case and, in replays, round by round, so each provider goes first in half
 * the rounds of every case. */
static size_t provider_at(const struct tb_campaign *c, const struct tb_campaign_cursor *cur,
                          size_t slot) {
  size_t shift = (size_t)(c->round > 0 ? c->round : 0);
  bool reversed = cur->alternate && (cur->case_index + shift) % 2 == 1;
  return reversed ? c->provider_count - 1 - slot : slot;
}

bool tb_campaign_next_run(const struct tb_campaign *c, struct tb_campaign_cursor *cur) {
  if (!cur->in_run) {
    cur->slot = 0;
    cur->position = 0;
  } else {
    cur->position++;
  }
  for (; cur->slot < c->provider_count; cur->slot++, cur->position = 0) {
    cur->provider = provider_at(c, cur, cur->slot);
    const char *name = c->providers[cur->provider];
    if (cur->position < runs_per_case(c, cur->base.op, name)) {
      cur->planned = cur->base.op->is_row_reduction && tb_provider_plans(name);
      cur->variant =
          cur->planned ? tb_campaign_variant_at(c, c->round, cur->position) : TB_VARIANT_AUTOMATIC;
      cur->realization =
          cur->base.op->is_matmul ? c->realizations[cur->position] : TB_REALIZATION_SIMT;
      cur->in_run = true;
      return true;
    }
  }
  cur->in_run = false;
  return false;
}

struct tb_case tb_campaign_run_case(const struct tb_campaign *c,
                                    const struct tb_campaign_cursor *cur) {
  struct tb_case k = cur->base;
  k.provider = c->providers[cur->provider];
  k.planned = cur->planned;
  k.variant = cur->variant;
  k.profile = c->profile;
  k.realization = cur->realization;
  k.gemm_block = c->gemm_block;
  return k;
}

size_t tb_campaign_case_count(const struct tb_campaign *c) {
  size_t total = 0;
  struct tb_campaign_cursor cur;
  tb_campaign_cursor_start(&cur, false);
  while (tb_campaign_next_case(c, &cur)) {
    while (tb_campaign_next_run(c, &cur)) {
      total++;
    }
  }
  return total;
}

/* The key of the cursor's unit: op/MxN[xK]/view. */
static void unit_key(const struct tb_campaign_cursor *cur, char *key, size_t size) {
  char dims[64];
  tb_shape_format(cur->base.shape, dims, sizeof dims);
  snprintf(key, size, "%s/%s/%s", cur->base.op->name, dims, tb_view_name(cur->base.view.kind));
}

/* The ids of the cursor's unit's records, in the campaign's provider order. */
static enum tb_status list_records(const struct tb_campaign *whole, struct tb_campaign_cursor *cur,
                                   struct tb_shard_unit *u) {
  while (tb_campaign_next_run(whole, cur)) {
    char id[256];
    struct tb_case k = tb_campaign_run_case(whole, cur);
    tb_case_id(&k, id, sizeof id);
    char **grown = realloc(u->records, (u->record_count + 1) * sizeof *grown);
    if (grown == NULL) {
      return TB_ERR_SYSTEM;
    }
    u->records = grown;
    if ((grown[u->record_count] = strdup(id)) == NULL) {
      return TB_ERR_SYSTEM;
    }
    u->record_count++;
  }
  return TB_OK;
}

enum tb_status tb_campaign_units(const struct tb_campaign *c, struct tb_shard_unit **units,
                                 size_t *count, struct tb_error *err) {
  struct tb_campaign whole = *c;
  whole.shard_of = NULL;
  whole.round = -1;
  size_t capacity = 0, used = 0;
  struct tb_shard_unit *list = NULL;
  struct tb_campaign_cursor cur;
  tb_campaign_cursor_start(&cur, false);
  enum tb_status st = TB_OK;
  while (st == TB_OK && tb_campaign_next_case(&whole, &cur)) {
    if (used == capacity) {
      capacity = capacity ? 2 * capacity : 16;
      struct tb_shard_unit *grown = realloc(list, capacity * sizeof *grown);
      if (grown == NULL) {
        st = TB_ERR_SYSTEM;
        break;
      }
      list = grown;
    }
    struct tb_shard_unit *u = &list[used++];
    memset(u, 0, sizeof *u);
    unit_key(&cur, u->key, sizeof u->key);
    st = list_records(&whole, &cur, u);
    u->cost = tb_shard_cost(tb_op_minimal_bytes(cur.base.op->op, cur.base.shape), u->record_count);
  }
  if (st != TB_OK) {
    tb_shard_units_free(list, used);
    *units = NULL;
    *count = 0;
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory listing the campaign's cases");
  }
  *units = list;
  *count = used;
  return TB_OK;
}

size_t tb_campaign_skipped_pairs(const struct tb_campaign *c, struct tb_skipped_pair *out) {
  size_t count = 0;
  for (size_t o = 0; o < c->op_count; ++o) {
    size_t skipped = 0;
    const char *why = NULL;
    for (size_t s = 0; s < c->shape_count; ++s) {
      why = tb_campaign_skip_reason(c, c->ops[o], c->shapes[s]);
      if (why != NULL) {
        out[count].op = c->ops[o]->name;
        tb_shape_format(c->shapes[s], out[count].shape, sizeof out[count].shape);
        out[count++].reason = why;
        skipped++;
      }
    }
    if (skipped == c->shape_count) {
      fprintf(stderr, "tilebench: note: %s is not measured: no shape fits it (%s)\n",
              c->ops[o]->name, why);
    }
  }
  return count;
}

enum tb_status tb_campaign_check_shapes(const struct tb_campaign *c, struct tb_error *err) {
  for (size_t s = 0; s < c->shape_count; ++s) {
    bool used = false;
    for (size_t o = 0; o < c->op_count; ++o) {
      used |= measured(c, o, s);
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

enum tb_status tb_campaign_check_memory(const struct tb_campaign *c, struct tb_error *err) {
  struct tb_campaign_cursor cur;
  tb_campaign_cursor_start(&cur, false);
  while (tb_campaign_next_case(c, &cur)) {
    if (tb_case_fits_memory(&cur.base, err) != TB_OK) {
      return err->status;
    }
  }
  return TB_OK;
}

/* ---- running it --------------------------------------------------------------- */

struct campaign_run {
  const struct tb_campaign *c;
  const struct tb_case_sink *sink;
  struct tb_provider **providers; /* NULL where one could not start */
  struct tb_error *failures;      /* why */
  size_t done, total, valid;
};

static void show_progress(struct campaign_run *run, const char *id) {
  if (run->c->progress) {
    ++run->done;
    fprintf(stderr, "\r\033[K[%zu/%zu] %s", run->done, run->total, id);
    if (run->done == run->total) {
      fputc('\n', stderr);
    }
    fflush(stderr);
  }
}

/* The pilot's source of a case (its last record with one), or NULL. */
static const char *pilot_source(const struct tb_results_model *pilot, const char *id) {
  for (size_t i = pilot->case_count; i-- > 0;) {
    if (pilot->cases[i].source_sha256 != NULL && strcmp(pilot->cases[i].id, id) == 0) {
      return pilot->cases[i].source_sha256;
    }
  }
  return NULL;
}

/* A frozen replay runs exactly the pilot's kernels: a case whose generated
 * source differs from the pilot's is refused (invalid, with the reason). */
static void check_frozen_source(const struct tb_campaign *c, struct tb_case_result *r) {
  if (c->frozen_pilot == NULL || r->source == NULL) {
    return;
  }
  const char *pilot = pilot_source(c->frozen_pilot, r->id);
  if (pilot == NULL || strcmp(pilot, r->source_sha256) != 0) {
    snprintf(r->error, sizeof r->error,
             "frozen replay: source %.16s… differs from the pilot's %.16s…", r->source_sha256,
             pilot ? pilot : "(case absent from the pilot)");
    r->valid = false;
  }
}

static struct tb_case_placement placement(const struct tb_campaign *c,
                                          const struct tb_campaign_cursor *cur) {
  return (struct tb_case_placement){cur->slot, c->round, cur->position};
}

/* A provider that could not start (PyTorch missing, say): its cases are
 * recorded invalid with the reason, and the run goes on. */
static void record_unavailable(struct campaign_run *run, const struct tb_campaign_cursor *cur) {
  const char *provider = run->c->providers[cur->provider];
  struct tb_case_result r;
  memset(&r, 0, sizeof r);
  r.c = cur->base; /* never planned: the provider is not there to plan */
  r.c.realization = cur->realization;
  r.c.provider = provider;
  tb_case_id(&r.c, r.id, sizeof r.id);
  r.backend = "none";
  r.output_allocation = "none";
  r.minimal_bytes = tb_op_minimal_bytes(r.c.op->op, r.c.shape);
  r.device_unavailable_reason = "the provider did not start";
  snprintf(r.error, sizeof r.error, "provider %.40s unavailable: %.900s", provider,
           run->failures[cur->provider].message);
  /* such records have never carried a round: no replay pairs them */
  struct tb_case_placement where = {cur->slot, -1, 0};
  run->sink->record(run->sink->context, &r, &where);
  show_progress(run, provider);
}

/* The ids of a case's runs on every provider, for a run stopped before it. */
static void record_missing(struct campaign_run *run, const struct tb_campaign_cursor *at) {
  struct tb_campaign_cursor cur = *at;
  cur.alternate = false; /* listed in the campaign's provider order */
  cur.in_run = false;
  while (tb_campaign_next_run(run->c, &cur)) {
    struct tb_case k = tb_campaign_run_case(run->c, &cur);
    char id[256];
    tb_case_id(&k, id, sizeof id);
    run->sink->missing(run->sink->context, id);
  }
}

static enum tb_status measure_run(struct campaign_run *run, const struct tb_campaign_cursor *cur,
                                  const struct tb_case_data *data, const double *reference,
                                  struct tb_fresh_inputs *fresh, struct tb_error *err) {
  const struct tb_campaign *c = run->c;
  struct tb_case k = tb_campaign_run_case(c, cur);
  k.provider = run->providers[cur->provider]->name;
  struct tb_case_result result;
  struct tb_measure_options opt = c->measure;
  opt.seed = c->seed; /* the fresh-inputs defence derives its seed from it */
  enum tb_status st =
      tb_run_case(run->providers[cur->provider], &k, data, reference, fresh, &opt, &result);
  check_frozen_source(c, &result);
  if (result.source != NULL && c->out_dir != NULL) {
    tb_archive_source(c->out_dir, result.source_sha256, result.source, err);
  }
  struct tb_case_placement where = placement(c, cur);
  run->sink->record(run->sink->context, &result, &where);
  run->valid += result.valid;
  show_progress(run, result.id);
  if (st != TB_OK) {
    tb_fail(err, st, "ran out of memory measuring %s", result.id);
  }
  tb_case_result_free(&result);
  return err->status;
}

/* One case's inputs and oracle, measured on every provider in turn (and
 * the defences' second inputs, made when a provider first asks). */
static enum tb_status run_one_case(struct campaign_run *run, struct tb_campaign_cursor *cur,
                                   struct tb_error *err) {
  struct tb_case_data data;
  double *reference = NULL;
  struct tb_fresh_inputs fresh = {0};
  if (tb_case_data_create(&cur->base, run->c->seed, &data, err) != TB_OK ||
      tb_oracle_compute(&data, &reference, err) != TB_OK) {
    tb_case_data_free(&data);
    return err->status;
  }
  while (err->status == TB_OK && tb_campaign_next_run(run->c, cur)) {
    if (run->providers[cur->provider] == NULL) {
      record_unavailable(run, cur);
    } else {
      measure_run(run, cur, &data, reference, &fresh, err);
    }
  }
  tb_fresh_inputs_free(&fresh);
  free(reference);
  tb_case_data_free(&data);
  return err->status;
}

/* The user providers take --kernel (a .cu source comes with its --launch);
 * the others come from the registry alone. */
static enum tb_status create_provider(const struct tb_campaign *c, const char *name,
                                      struct tb_provider **out, struct tb_error *err) {
  if (strcmp(name, "user") == 0) {
    return c->kernel_launch != NULL
               ? tb_user_source_provider_create(c->kernel_library, c->kernel_launch, c->backend,
                                                out, err)
               : tb_user_provider_create(c->kernel_library, c->backend, out, err);
  }
  if (strcmp(name, "user-python") == 0) {
    return tb_user_python_provider_create(c->kernel_library, out, err);
  }
  return tb_provider_create(name, c->backend, out, err);
}

/* Creates each provider once. The native provider is the run's purpose:
 * without it, stop. Others (a missing PyTorch) leave invalid cases with the
 * reason. */
static void create_providers(struct campaign_run *run, struct tb_error *err) {
  const struct tb_campaign *c = run->c;
  for (size_t p = 0; p < c->provider_count && !tb_interrupted(); ++p) {
    enum tb_status st = create_provider(c, c->providers[p], &run->providers[p], &run->failures[p]);
    if (st != TB_OK && strcmp(c->providers[p], "native") == 0) {
      tb_fail(err, run->failures[p].status, "%s", run->failures[p].message);
    }
  }
}

enum tb_status tb_campaign_run(const struct tb_campaign *c, const struct tb_case_sink *sink,
                               size_t *valid_count, struct tb_error *err) {
  struct campaign_run run = {c,
                             sink,
                             calloc(c->provider_count, sizeof *run.providers),
                             calloc(c->provider_count, sizeof *run.failures),
                             0,
                             tb_campaign_case_count(c),
                             0};
  *valid_count = 0;
  if (run.providers == NULL || run.failures == NULL) {
    free(run.providers);
    free(run.failures);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating providers");
  }
  create_providers(&run, err);
  struct tb_campaign_cursor cur;
  tb_campaign_cursor_start(&cur, true);
  while (err->status == TB_OK && tb_campaign_next_case(c, &cur)) {
    if (tb_interrupted()) { /* the case in flight finished; the rest are listed */
      record_missing(&run, &cur);
      continue;
    }
    run_one_case(&run, &cur, err);
  }
  for (size_t p = 0; p < c->provider_count; ++p) {
    tb_provider_destroy(run.providers[p]);
  }
  free(run.providers);
  free(run.failures);
  *valid_count = run.valid;
  return err->status;
}
