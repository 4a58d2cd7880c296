#include "results/document.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/interrupt.h"
#include "core/strbuf.h"
#include "provenance/provenance.h"
#include "results/load.h"
#include "results/results.h"
#include "results/shard_json.h"

#ifndef TB_VERSION
#define TB_VERSION "unknown"
#endif

struct tb_document {
  json_t *doc, *run, *provenance, *cases, *missing;
  bool interrupted;
};

/* ---- the run's facts ---------------------------------------------------------- */

/* A JSON string of text given by the user, which need not be UTF-8 (JSON
 * strings must be): such text is kept with each byte above 0x7f as '?'. */
static json_t *text_json(const char *text) {
  json_t *exact = json_string(text);
  if (exact != NULL) {
    return exact;
  }
  char *copy = strdup(text);
  for (char *p = copy; p != NULL && *p; ++p) {
    *p = (unsigned char)*p > 0x7f ? '?' : *p;
  }
  json_t *replaced = json_string(copy ? copy : "");
  free(copy);
  return replaced;
}

static json_t *command_line_json(int argc, char **argv, json_t **as_text) {
  json_t *args = json_array();
  struct tb_strbuf b = {0};
  tb_strbuf_printf(&b, "tilebench");
  for (int i = 0; i < argc; ++i) {
    json_array_append_new(args, text_json(argv[i]));
    tb_strbuf_printf(&b, " %s", argv[i]);
  }
  char *text = tb_strbuf_take(&b);
  *as_text = text_json(text ? text : "");
  free(text);
  return args;
}

static json_t *names_json(const char *const *names, size_t count) {
  json_t *list = json_array();
  for (size_t i = 0; i < count; ++i) {
    json_array_append_new(list, json_string(names[i]));
  }
  return list;
}

static json_t *skipped_pairs_json(const struct tb_run_facts *f) {
  json_t *pairs = json_array();
  for (size_t i = 0; i < f->skipped_count; ++i) {
    const struct tb_skipped_pair *p = &f->skipped[i];
    json_array_append_new(
        pairs, json_pack("{s:s, s:s, s:s}", "op", p->op, "shape", p->shape, "reason", p->reason));
  }
  return pairs;
}

/* run.measure.stopping (schema 6): the rule every case's phases followed. */
static json_t *stopping_rule_json(const struct tb_run_facts *f) {
  const struct tb_stopping_rule *r = &f->stopping;
  if (!r->by_noise) {
    return json_pack("{s:s, s:I}", "rule", "fixed", "samples", (json_int_t)f->samples);
  }
  return json_pack("{s:s, s:f, s:I, s:I, s:f, s:f}", "rule", "noise", "max_noise", r->max_noise,
                   "min_samples", (json_int_t)r->min_samples, "max_samples",
                   (json_int_t)r->max_samples, "min_time_s", r->min_time_s, "timeout_s",
                   r->timeout_s);
}

static json_t *run_json(const struct tb_run_facts *f) {
  json_t *command = NULL;
  json_t *argv_json = command_line_json(f->argc, f->argv, &command);
  char started[32];
  tb_utc_timestamp(started, sizeof started);
  json_t *info =
      json_pack("{s:o, s:o, s:s, s:s, s:s, s:I, s:{s:I, s:f, s:f}}", "argv", argv_json, "command",
                command, "started_at", started, "backend", f->backend, "backend_reason",
                f->backend_reason, "seed", (json_int_t)f->seed, "measure", "samples",
                (json_int_t)f->samples, "warmup_ms", f->warmup_ms, "sample_ms", f->sample_ms);
  json_object_set_new(json_object_get(info, "measure"), "probe", json_boolean(f->probe));
  json_object_set_new(json_object_get(info, "measure"), "clock_checks",
                      json_boolean(f->clock_checks));
  json_object_set_new(json_object_get(info, "measure"), "stopping", stopping_rule_json(f));
  json_t *modes = json_array();
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    if (mode == TB_BATCH_EAGER || (f->batch_modes & (1u << mode))) {
      json_array_append_new(modes, json_string(tb_batch_mode_name(mode)));
    }
  }
  json_object_set_new(json_object_get(info, "measure"), "batch_modes", modes);
  json_object_set_new(info, "variants", names_json(f->variants, f->variant_count));
  json_object_set_new(info, "planner_profile", json_string(f->profile));
  json_object_set_new(info, "matrix_realizations",
                      names_json(f->realizations, f->realization_count));
  json_object_set_new(info, "skipped_pairs", skipped_pairs_json(f));
  json_object_set_new(info, "gemm_block",
                      f->gemm_block.m ? json_pack("{s:i, s:i, s:i}", "m", f->gemm_block.m, "n",
                                                  f->gemm_block.n, "k", f->gemm_block.k)
                                      : json_null());
  /* schema 7: validation's atol and rtol are docs/tolerances.md's times this */
  json_object_set_new(info, "tolerance_scale",
                      json_real(f->tolerance_scale > 0.0 ? f->tolerance_scale : 1.0));
  return info;
}

/* ---- the document ----------------------------------------------------------- */

struct tb_document *tb_document_begin(const struct tb_run_facts *facts, json_t *gpu) {
  struct tb_document *d = calloc(1, sizeof *d);
  if (d == NULL) {
    json_decref(gpu);
    return NULL;
  }
  d->doc = json_pack("{s:s, s:i, s:{s:s, s:s}}", "schema", TB_RESULTS_SCHEMA, "schema_version",
                     TB_RESULTS_SCHEMA_VERSION, "tool", "name", "tilebench", "version", TB_VERSION);
  d->run = run_json(facts);
  d->provenance =
      json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "git", tb_capture_git(), "artifacts",
                tb_capture_artifacts(), "host", tb_capture_host(), "gpu", gpu, "thread_env",
                tb_capture_thread_env(), "busy_processes_start", tb_capture_busy_processes());
  d->cases = json_array();
  d->missing = json_array();
  json_object_set_new(d->doc, "run", d->run);
  json_object_set_new(d->doc, "provenance", d->provenance);
  json_object_set_new(d->doc, "cases", d->cases);
  return d;
}

void tb_document_free(struct tb_document *d) {
  if (d != NULL) {
    json_decref(d->doc);
    json_decref(d->missing);
    free(d);
  }
}

void tb_document_add_case(struct tb_document *d, const struct tb_case_result *r,
                          const struct tb_case_placement *where) {
  json_t *record = tb_case_result_to_json(r);
  json_object_set_new(record, "provider_position",
                      json_integer((json_int_t)where->provider_position));
  if (where->round >= 0) {
    json_object_set_new(record, "round", json_integer(where->round));
    json_object_set_new(record, "position", json_integer((json_int_t)where->position));
  }
  json_array_append_new(d->cases, record);
}

void tb_document_add_missing(struct tb_document *d, const char *id) {
  json_array_append_new(d->missing, json_string(id));
}

static void sink_record(void *context, const struct tb_case_result *r,
                        const struct tb_case_placement *where) {
  tb_document_add_case(context, r, where);
}

static void sink_missing(void *context, const char *id) {
  tb_document_add_missing(context, id);
}

struct tb_case_sink tb_document_sink(struct tb_document *d) {
  return (struct tb_case_sink){d, sink_record, sink_missing};
}

void tb_document_set_shard(struct tb_document *d, const struct tb_shard_facts *f) {
  json_t *units = tb_shard_units_json(f->units, f->unit_count, f->shard_of);
  json_t *argv = json_array();
  for (size_t i = 0; i < f->argc; ++i) {
    json_array_append_new(argv, text_json(f->argv[i]));
  }
  char digest[TB_SHA256_HEX_LEN] = "";
  tb_shard_campaign_sha256(units, digest);
  json_object_set_new(d->run, "shard",
                      json_pack("{s:I, s:I, s:o, s:s, s:s, s:o}", "index", (json_int_t)f->index,
                                "count", (json_int_t)f->count, "campaign_argv", argv,
                                "campaign_sha256", digest, "cost_model", TB_SHARD_COST_MODEL,
                                "units", units));
}

void tb_document_set_copy_ceiling(struct tb_document *d, json_t *ceiling) {
  json_object_set_new(d->run, "copy_ceiling", ceiling);
}

void tb_document_set_replay_plan(struct tb_document *d, unsigned rounds, const char *reference,
                                 const char *candidate, const char *const (*orders)[2],
                                 size_t order_count) {
  json_t *order_json = json_array();
  for (size_t i = 0; i < order_count; ++i) {
    json_array_append_new(order_json, json_pack("[s, s]", orders[i][0], orders[i][1]));
  }
  json_object_set_new(d->run, "replay",
                      json_pack("{s:i, s:s, s:s, s:o}", "rounds", (int)rounds, "reference",
                                reference, "candidate", candidate, "variant_order", order_json));
}

/* ---- a frozen replay's pilot ------------------------------------------------ */

/* The pilot's digest of this run's artifact `mine`: the same path, or the
 * executable wherever it was; NULL when the pilot lacks it. */
static const char *pilot_digest(const struct tb_results_model *pilot, const json_t *mine) {
  bool executable = strcmp(tb_json_str(mine, "role", ""), "executable") == 0;
  for (size_t j = 0; j < pilot->artifact_count; ++j) {
    const struct tb_model_artifact *theirs = &pilot->artifacts[j];
    bool same_path = strcmp(tb_json_str(mine, "path", ""), theirs->path) == 0;
    if (same_path || (executable && strcmp(theirs->role, "executable") == 0)) {
      return theirs->sha256;
    }
  }
  return NULL;
}

static json_t *artifacts_json(const struct tb_results_model *m) {
  json_t *list = json_array();
  for (size_t i = 0; i < m->artifact_count; ++i) {
    const struct tb_model_artifact *a = &m->artifacts[i];
    json_array_append_new(
        list, json_pack("{s:s, s:s, s:s}", "path", a->path, "role", a->role, "sha256", a->sha256));
  }
  return list;
}

enum tb_status tb_document_freeze(struct tb_document *d, const char *pilot_dir,
                                  const struct tb_results_model *pilot,
                                  const char *pilot_results_sha256, struct tb_error *err) {
  size_t i;
  const json_t *mine;
  json_array_foreach(json_object_get(d->provenance, "artifacts"), i, mine) {
    const char *theirs = pilot_digest(pilot, mine);
    const char *ours = tb_json_str(mine, "sha256", "");
    if (theirs != NULL && strcmp(theirs, ours) != 0) {
      return tb_fail(err, TB_ERR_INPUT,
                     "--frozen %s: %s differs from the pilot's (sha256 %s vs %s)", pilot_dir,
                     tb_json_str(mine, "path", "?"), ours, theirs);
    }
    if (theirs == NULL && strcmp(tb_json_str(mine, "role", ""), "executable") == 0) {
      return tb_fail(err, TB_ERR_INPUT, "--frozen %s: the pilot records no executable", pilot_dir);
    }
  }
  json_object_set_new(d->run, "frozen",
                      json_pack("{s:o, s:s, s:o}", "pilot_dir", text_json(pilot_dir),
                                "pilot_results_sha256", pilot_results_sha256, "pilot_artifacts",
                                artifacts_json(pilot)));
  return TB_OK;
}

/* ---- the end of the run ----------------------------------------------------- */

void tb_document_finish(struct tb_document *d, size_t valid, const struct tb_error *err,
                        int signal_number) {
  json_object_set_new(d->provenance, "busy_processes_end", tb_capture_busy_processes());
  char finished[32];
  tb_utc_timestamp(finished, sizeof finished);
  json_object_set_new(d->run, "finished_at", json_string(finished));
  json_object_set_new(d->run, "valid_cases", json_integer((json_int_t)valid));
  /* a signal after the last case started stopped nothing */
  size_t missing = json_array_size(d->missing);
  signal_number = missing > 0 ? signal_number : 0;
  d->interrupted = signal_number != 0;
  char reason[160];
  if (signal_number != 0) {
    snprintf(reason, sizeof reason, "interrupted by %s: %zu case(s) not measured",
             tb_signal_name(signal_number), missing);
  }
  json_object_set_new(d->run, "complete", json_boolean(err->status == TB_OK && signal_number == 0));
  json_object_set_new(d->run, "error",
                      err->status != TB_OK ? json_string(err->message)
                      : signal_number      ? json_string(reason)
                                           : json_null());
  json_object_set_new(d->run, "interrupted",
                      signal_number
                          ? json_pack("{s:s, s:O}", "signal", tb_signal_name(signal_number),
                                      "missing_cases", d->missing)
                          : json_null());
}

bool tb_document_interrupted(const struct tb_document *d) {
  return d->interrupted;
}

void tb_document_set_replay_summary(struct tb_document *d, const struct tb_replay_record *r) {
  json_object_set_new(d->doc, "replay", tb_replay_record_to_json(r));
}

const json_t *tb_document_json(const struct tb_document *d) {
  return d->doc;
}
