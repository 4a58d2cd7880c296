#include "results/model.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/load.h"

/* ---- reading one checked document: the only JSON walks of the readers ---- */

/* The value at a path of object keys, or NULL. */
static const json_t *at(const json_t *node, const char *const *keys, size_t count) {
  for (size_t i = 0; i < count && node != NULL; ++i) {
    node = json_object_get(node, keys[i]);
  }
  return node;
}

#define AT(node, ...)                                                                              \
  at((node), (const char *const[]){__VA_ARGS__},                                                   \
     sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static const char *text(const json_t *v) {
  return json_is_string(v) ? json_string_value(v) : NULL;
}

static double number_or_nan(const json_t *v) {
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The numbers of a JSON array, in order; false when memory ran out. */
/* run.measure.stopping in one line, so two runs' rules compare as text. */
static void describe_stopping_rule(const json_t *rule, char *out, size_t size) {
  const char *kind = text(json_object_get(rule, "rule"));
  if (kind == NULL || strcmp(kind, "noise") != 0) {
    snprintf(out, size, "fixed sample count");
    return;
  }
  snprintf(out, size, "noise <= %g, %lld to %lld samples, min time %g s, timeout %g s",
           number_or_nan(json_object_get(rule, "max_noise")),
           (long long)json_integer_value(json_object_get(rule, "min_samples")),
           (long long)json_integer_value(json_object_get(rule, "max_samples")),
           number_or_nan(json_object_get(rule, "min_time_s")),
           number_or_nan(json_object_get(rule, "timeout_s")));
}

static bool numbers(const json_t *array, double **out, size_t *count) {
  *out = NULL;
  *count = 0;
  if (json_array_size(array) == 0) {
    return true;
  }
  *out = malloc(json_array_size(array) * sizeof **out);
  if (*out == NULL) {
    return false;
  }
  size_t i;
  const json_t *v;
  json_array_foreach(array, i, v) {
    if (json_is_number(v)) {
      (*out)[(*count)++] = json_number_value(v);
    }
  }
  return true;
}

static bool scope(const json_t *phase, struct tb_model_scope *s) {
  s->p50_ns = number_or_nan(AT(phase, "per_call_summary_ns", "p50"));
  return numbers(json_object_get(phase, "per_call_ns"), &s->per_call_ns, &s->count);
}

static void probe(const json_t *throughput, struct tb_model_probe *p) {
  const json_t *ratios = json_object_get(throughput, "probe_over_control_summary");
  p->present = throughput != NULL;
  p->kernel_p50_ns = number_or_nan(AT(throughput, "probe", "kernel_per_call_summary_ns", "p50"));
  p->ratio_median = json_number_value(json_object_get(ratios, "median"));
  p->ratio_min = json_number_value(json_object_get(ratios, "min"));
  p->ratio_max = json_number_value(json_object_get(ratios, "max"));
  p->first_sample_kernels =
      (long long)json_integer_value(json_array_get(AT(throughput, "probe", "kernels"), 0));
}

static void stopping(const json_t *record, struct tb_model_stopping *s) {
  s->rule = text(json_object_get(record, "rule"));
  s->reason = text(json_object_get(record, "reason"));
  s->taken = (long long)json_integer_value(json_object_get(record, "samples_taken"));
  s->noise = number_or_nan(json_object_get(record, "noise"));
  s->max_noise = number_or_nan(json_object_get(record, "max_noise"));
  s->flag = text(json_array_get(json_object_get(record, "flags"), 0));
}

/* Appends the flags of one record's array to the case's. */
static bool flags(const json_t *array, struct tb_model_case *c) {
  size_t more = json_array_size(array);
  if (more == 0) {
    return true;
  }
  const char **grown = realloc(c->flags, (c->flag_count + more) * sizeof *grown);
  if (grown == NULL) {
    return false;
  }
  c->flags = grown;
  for (size_t i = 0; i < more; ++i) {
    c->flags[c->flag_count++] = text(json_array_get(array, i));
  }
  return true;
}

/* The scope device.throughput.gap_free names, when there is one. */
static bool gap_free(const json_t *throughput, struct tb_model_case *c) {
  c->gap_free_throughput.p50_ns = NAN;
  const char *mode = text(AT(throughput, "gap_free", "mode"));
  const json_t *control = mode == NULL ? NULL
                          : strcmp(mode, "eager") == 0
                              ? json_object_get(throughput, "control")
                              : AT(throughput, "batch_modes", mode, "control");
  if (!json_is_object(control)) {
    return true;
  }
  c->gap_free_mode = mode;
  return scope(control, &c->gap_free_throughput);
}

static bool device(const json_t *d, struct tb_model_case *c) {
  c->control_complete = json_is_true(json_object_get(d, "control_complete"));
  probe(json_object_get(d, "throughput"), &c->probe);
  return gap_free(json_object_get(d, "throughput"), c) &&
         scope(AT(d, "throughput", "control"), &c->control_throughput) &&
         scope(AT(d, "latency", "control"), &c->control_latency) &&
         flags(json_object_get(d, "flags"), c);
}

static bool one_case(const json_t *j, struct tb_model_case *c) {
  const json_t *validation = json_object_get(j, "validation");
  c->id = json_string_value(json_object_get(j, "id"));
  c->op = json_string_value(json_object_get(j, "op"));
  c->provider = json_string_value(json_object_get(j, "provider"));
  c->valid = json_is_true(json_object_get(j, "valid"));
  c->m = (long long)json_integer_value(json_object_get(j, "m"));
  c->n = (long long)json_integer_value(json_object_get(j, "n"));
  c->has_k = json_object_get(j, "k") != NULL;
  c->k = (long long)json_integer_value(json_object_get(j, "k"));
  c->backend = text(json_object_get(j, "backend"));
  c->variant = text(json_object_get(j, "variant"));
  c->has_realization = json_object_get(j, "realization") != NULL;
  c->realization = text(json_object_get(j, "realization"));
  c->precision = text(json_object_get(j, "precision"));
  c->view_kind = text(AT(j, "input_view", "kind"));
  c->has_round = json_object_get(j, "round") != NULL;
  c->round = (long long)json_integer_value(json_object_get(j, "round"));
  c->minimal_bytes = json_number_value(json_object_get(j, "minimal_bytes"));
  c->has_validation = validation != NULL;
  c->max_abs_error = number_or_nan(json_object_get(validation, "max_abs_error"));
  c->max_rel_error = number_or_nan(json_object_get(validation, "max_rel_error"));
  c->atol = number_or_nan(json_object_get(validation, "atol"));
  c->buffer_state = text(AT(j, "provider_details", "buffers", "state"));
  c->user_library = text(AT(j, "provider_details", "file_name"));
  c->user_sha256 = text(AT(j, "provider_details", "sha256"));
  c->source_sha256 = text(json_object_get(j, "source_sha256"));
  c->selected_kernel_score = number_or_nan(
      AT(json_array_get(json_object_get(j, "execution_plans"), 0), "selected", "kernel_score"));
  c->device_unavailable_reason = text(json_object_get(j, "device_unavailable_reason"));
  c->error = text(json_object_get(j, "error"));
  c->torch_version = text(AT(j, "provider_details", "worker", "torch"));
  c->plans = json_object_get(j, "execution_plans");
  stopping(AT(j, "host", "stopping"), &c->host_stopping);
  stopping(AT(j, "device", "throughput", "stopping"), &c->device_stopping);
  return scope(AT(j, "host", "throughput"), &c->host_throughput) &&
         scope(AT(j, "host", "latency"), &c->host_latency) &&
         device(json_object_get(j, "device"), c) &&
         flags(AT(j, "host", "cpu_frequency", "flags"), c);
}

static bool background(const json_t *snapshot, struct tb_model_background *b) {
  const json_t *procs = json_object_get(snapshot, "processes");
  b->threshold_cpu_percent = json_number_value(json_object_get(snapshot, "threshold_cpu_percent"));
  b->count = json_array_size(procs);
  if (b->count == 0) {
    return true;
  }
  b->processes = calloc(b->count, sizeof *b->processes);
  for (size_t i = 0; b->processes != NULL && i < b->count; ++i) {
    const json_t *p = json_array_get(procs, i);
    b->processes[i].name = text(json_object_get(p, "name"));
    b->processes[i].pid = (long long)json_integer_value(json_object_get(p, "pid"));
    b->processes[i].cpu_percent = json_number_value(json_object_get(p, "cpu_percent"));
  }
  return b->processes != NULL;
}

static bool artifacts(const json_t *array, struct tb_results_model *m) {
  m->artifact_count = json_array_size(array);
  if (m->artifact_count == 0) {
    return true;
  }
  m->artifacts = calloc(m->artifact_count, sizeof *m->artifacts);
  for (size_t i = 0; m->artifacts != NULL && i < m->artifact_count; ++i) {
    const json_t *a = json_array_get(array, i);
    m->artifacts[i] = (struct tb_model_artifact){json_string_value(json_object_get(a, "path")),
                                                 json_string_value(json_object_get(a, "role")),
                                                 json_string_value(json_object_get(a, "sha256"))};
  }
  return m->artifacts != NULL;
}

static bool gpus(const json_t *gpu, struct tb_results_model *m) {
  const json_t *devices = json_object_get(gpu, "devices");
  m->gpu_available = json_is_true(json_object_get(gpu, "available"));
  m->driver_cuda_version = text(json_object_get(gpu, "driver_cuda_version"));
  m->gpu_count = json_array_size(devices);
  if (m->gpu_count == 0) {
    return true;
  }
  m->gpus = calloc(m->gpu_count, sizeof *m->gpus);
  for (size_t i = 0; m->gpus != NULL && i < m->gpu_count; ++i) {
    const json_t *d = json_array_get(devices, i);
    m->gpus[i] = (struct tb_model_gpu){text(json_object_get(d, "name")),
                                       text(json_object_get(d, "compute_capability")),
                                       text(json_object_get(d, "uuid"))};
  }
  return m->gpus != NULL;
}

/* ---- the replay summary --------------------------------------------------- */

static const char *const replay_metrics[TB_MODEL_REPLAY_METRICS] = {
    "gpu_throughput", "gpu_latency", "host_throughput", "host_latency"};

static struct tb_model_replay_metric replay_metric(const json_t *m) {
  return (struct tb_model_replay_metric){
      text(json_object_get(m, "withheld")),         json_number_value(json_object_get(m, "median")),
      json_number_value(json_object_get(m, "min")), json_number_value(json_object_get(m, "max")),
      text(json_object_get(m, "verdict")),          number_or_nan(AT(m, "interval", "lo")),
      number_or_nan(AT(m, "interval", "hi")),       number_or_nan(AT(m, "interval", "coverage")),
      number_or_nan(json_object_get(m, "band")),    text(json_object_get(m, "decision"))};
}

/* {provider: {variant: {metric: ...}}} in the document's order. */
static bool versus(const json_t *table, struct tb_model_replay_case *c) {
  const char *provider, *variant;
  const json_t *per_provider, *metrics;
  size_t count = 0;
  json_object_foreach((json_t *)table, provider, per_provider) {
    count += json_object_size(per_provider);
  }
  if (count == 0) {
    return true;
  }
  c->versus = calloc(count, sizeof *c->versus);
  if (c->versus == NULL) {
    return false;
  }
  json_object_foreach((json_t *)table, provider, per_provider) {
    json_object_foreach((json_t *)per_provider, variant, metrics) {
      const json_t *per_call = json_object_get(metrics, "per_call");
      c->versus[c->versus_count++] =
          (struct tb_model_versus){provider,
                                   variant,
                                   replay_metric(json_object_get(metrics, "gpu_throughput")),
                                   json_is_object(per_call),
                                   replay_metric(per_call),
                                   text(json_object_get(per_call, "scope"))};
    }
  }
  return true;
}

static bool replay_case(const json_t *j, struct tb_model_replay_case *c) {
  const json_t *predicted = json_object_get(j, "model_predicts_candidate_better");
  c->name = text(json_object_get(j, "case"));
  c->model_predicts = json_is_null(predicted) ? -1 : json_is_true(predicted);
  for (int m = 0; m < TB_MODEL_REPLAY_METRICS; ++m) {
    c->metrics[m] = replay_metric(AT(j, "metrics", replay_metrics[m]));
  }
  return versus(json_object_get(j, "native_over_framework"), c);
}

static bool replay(const json_t *j, struct tb_model_replay *r) {
  r->present = j != NULL;
  if (j == NULL) {
    return true;
  }
  r->reference = text(json_object_get(j, "reference"));
  r->candidate = text(json_object_get(j, "candidate"));
  r->rounds = (long long)json_integer_value(json_object_get(j, "rounds"));
  r->model_predicts_candidate_better =
      (long long)json_integer_value(json_object_get(j, "model_predicts_candidate_better"));
  r->has_versus_counts = json_object_size(json_object_get(j, "native_over_framework_counts")) > 0;
  for (int m = 0; m < TB_MODEL_REPLAY_METRICS; ++m) {
    const json_t *k = AT(j, "counts", replay_metrics[m]);
    r->counts[m] = (struct tb_model_replay_counts){
        (long long)json_integer_value(json_object_get(k, "cases")),
        (long long)json_integer_value(json_object_get(k, "withheld")),
        (long long)json_integer_value(json_object_get(k, "positive_median")),
        (long long)json_integer_value(json_object_get(k, "all_pairs_positive")),
        (long long)json_integer_value(json_object_get(k, "all_pairs_negative"))};
  }
  const json_t *cases = json_object_get(j, "cases");
  r->case_count = json_array_size(cases);
  if (r->case_count == 0) {
    return true;
  }
  r->cases = calloc(r->case_count, sizeof *r->cases);
  bool ok = r->cases != NULL;
  for (size_t i = 0; ok && i < r->case_count; ++i) {
    ok = replay_case(json_array_get(cases, i), &r->cases[i]);
  }
  return ok;
}

/* ---- the whole document --------------------------------------------------- */

static void run_facts(const json_t *doc, struct tb_results_model *m) {
  const json_t *run = json_object_get(doc, "run"), *prov = json_object_get(doc, "provenance");
  m->schema_version = (long long)json_integer_value(json_object_get(doc, "schema_version"));
  m->tool_version = text(AT(doc, "tool", "version"));
  m->command = text(json_object_get(run, "command"));
  m->started_at = text(json_object_get(run, "started_at"));
  m->finished_at = text(json_object_get(run, "finished_at"));
  m->backend = text(json_object_get(run, "backend"));
  m->error = text(json_object_get(run, "error"));
  m->seed = (long long)json_integer_value(json_object_get(run, "seed"));
  m->valid_cases = (long long)json_integer_value(json_object_get(run, "valid_cases"));
  describe_stopping_rule(AT(run, "measure", "stopping"), m->stopping_rule, sizeof m->stopping_rule);
  m->incomplete = json_is_false(json_object_get(run, "complete"));
  m->copy_ceiling_gbps = number_or_nan(AT(run, "copy_ceiling", "gbps"));
  const json_t *scale = json_object_get(run, "tolerance_scale");
  m->tolerance_scale = json_is_number(scale) ? json_number_value(scale) : 1.0;
  m->git_commit = text(AT(prov, "git", "commit"));
  m->git_dirty = json_is_true(AT(prov, "git", "dirty"));
  m->git_dirty_known = json_is_boolean(AT(prov, "git", "dirty"));
  m->git_diff_sha256 = text(AT(prov, "git", "diff_sha256"));
  m->host_os = text(AT(prov, "host", "os"));
  m->host_cpu_model = text(AT(prov, "host", "cpu_model"));
  m->host_logical_cpus = (long long)json_integer_value(AT(prov, "host", "logical_cpus"));
  const json_t *shard = json_object_get(run, "shard");
  m->shard_index = json_is_integer(json_object_get(shard, "index"))
                       ? (long long)json_integer_value(json_object_get(shard, "index"))
                       : -1;
  m->shard_count = (long long)json_integer_value(json_object_get(shard, "count"));
  m->merged_shards = (long long)json_integer_value(AT(run, "merge", "shard_count"));
  m->campaign_sha256 = text(json_is_object(shard) ? json_object_get(shard, "campaign_sha256")
                                                  : AT(run, "merge", "campaign_sha256"));
}

enum tb_status tb_results_model_fill(const json_t *doc, struct tb_results_model *m,
                                     struct tb_error *err) {
  memset(m, 0, sizeof *m);
  m->doc = json_incref((json_t *)doc);
  run_facts(doc, m);
  const json_t *prov = json_object_get(doc, "provenance"), *cases = json_object_get(doc, "cases");
  bool ok = background(json_object_get(prov, "busy_processes_start"), &m->background[0]) &&
            background(json_object_get(prov, "busy_processes_end"), &m->background[1]) &&
            artifacts(json_object_get(prov, "artifacts"), m) &&
            gpus(json_object_get(prov, "gpu"), m) &&
            replay(json_object_get(doc, "replay"), &m->replay);
  m->case_count = json_array_size(cases);
  if (ok && m->case_count > 0) {
    m->cases = calloc(m->case_count, sizeof *m->cases);
    ok = m->cases != NULL;
  }
  for (size_t i = 0; ok && i < m->case_count; ++i) {
    ok = one_case(json_array_get(cases, i), &m->cases[i]);
  }
  if (!ok) {
    tb_results_model_free(m);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory reading the results");
  }
  return TB_OK;
}

static void free_case(struct tb_model_case *c) {
  free(c->host_throughput.per_call_ns);
  free(c->host_latency.per_call_ns);
  free(c->control_throughput.per_call_ns);
  free(c->gap_free_throughput.per_call_ns);
  free(c->control_latency.per_call_ns);
  free(c->flags);
}

void tb_results_model_free(struct tb_results_model *m) {
  for (size_t i = 0; m->cases != NULL && i < m->case_count; ++i) {
    free_case(&m->cases[i]);
  }
  free(m->cases);
  for (size_t i = 0; m->replay.cases != NULL && i < m->replay.case_count; ++i) {
    free(m->replay.cases[i].versus);
  }
  free(m->replay.cases);
  free(m->background[0].processes);
  free(m->background[1].processes);
  free(m->artifacts);
  free(m->gpus);
  json_decref(m->doc);
  memset(m, 0, sizeof *m);
}

enum tb_status tb_results_model_load(const char *path, struct tb_results_model *m, char *sha256_hex,
                                     struct tb_error *err) {
  json_t *doc = NULL;
  memset(m, 0, sizeof *m);
  if (tb_results_load(path, &doc, sha256_hex, err) != TB_OK) {
    return err->status;
  }
  tb_results_model_fill(doc, m, err);
  json_decref(doc); /* the model holds its own reference */
  return err->status;
}

enum tb_status tb_results_model_load_dir(const char *dir, struct tb_results_model *m,
                                         struct tb_error *err) {
  char path[PATH_MAX];
  memset(m, 0, sizeof *m);
  if (tb_results_path(dir, path, sizeof path, err) != TB_OK) {
    return err->status;
  }
  return tb_results_model_load(path, m, NULL, err);
}
