/* tilebench merge: the shards of one campaign into one results file
 * (docs/campaigns.md). Every check comes before anything is written: a
 * refused merge leaves no directory behind. */
#include "cli/merge.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cases/shard.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "measure/replay_summary.h"
#include "provenance/hash.h"
#include "report/report.h"
#include "results/load.h"
#include "results/model.h"
#include "results/results.h"
#include "results/shard_json.h"
#include "stats/case_key.h"

#define SOURCE_MAX_BYTES ((size_t)4 << 20) /* as the audit reads them */

struct shard {
  const char *dir;
  char path[PATH_MAX];
  char *bytes;
  size_t size;
  char sha256[TB_SHA256_HEX_LEN];
  json_t *doc;
  const json_t *record; /* run.shard */
  long long index, count;
  bool complete;
};

struct merge {
  const struct tb_merge_request *req;
  struct shard *shards; /* the loaded ones, in the order given */
  size_t loaded;
  const char **absent; /* directories without a results file */
  size_t absent_count;
  struct shard *ref;       /* the first loaded: what the others are held to */
  unsigned *assignment;    /* each unit's shard, by the rule */
  struct shard **by_index; /* [count]: the complete shard of each index, or NULL */
  long long count, rounds;
  const json_t *units;
};

/* ---- text -------------------------------------------------------------------- */

static bool shell_safe(const char *s) {
  if (*s == '\0') {
    return false;
  }
  for (; *s; ++s) {
    if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,@%+-", *s) ==
        NULL) {
      return false;
    }
  }
  return true;
}

char *tb_shell_command(const char *const *argv, size_t argc) {
  struct tb_strbuf b = {0};
  tb_strbuf_printf(&b, "%s", "");
  for (size_t i = 0; i < argc; ++i) {
    const char *arg = argv[i];
    tb_strbuf_printf(&b, "%s", i ? " " : "");
    if (shell_safe(arg)) {
      tb_strbuf_printf(&b, "%s", arg);
      continue;
    }
    tb_strbuf_printf(&b, "'");
    for (const char *p = arg; *p; ++p) {
      if (*p == '\'') {
        tb_strbuf_printf(&b, "'\\''");
      } else {
        tb_strbuf_printf(&b, "%c", *p);
      }
    }
    tb_strbuf_printf(&b, "'");
  }
  return tb_strbuf_take(&b);
}

/* A JSON value as short text for a message. */
static void value_text(const json_t *v, char *out, size_t size) {
  char *text = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS) : NULL;
  snprintf(out, size, "%s", text != NULL ? text : "(absent)");
  if (text != NULL && strlen(text) >= size && size > 4) {
    snprintf(out + size - 4, 4, "...");
  }
  free(text);
}

/* v, or JSON null when absent, for json_pack's "O" */
static json_t *or_null(const json_t *v) {
  return v != NULL ? (json_t *)v : json_null();
}

/* ---- loading ------------------------------------------------------------------- */

/* The value at a dotted path ("provenance.host.os"); array items by number. */
static const json_t *at(const json_t *root, const char *path) {
  char copy[256];
  snprintf(copy, sizeof copy, "%s", path);
  const json_t *v = root;
  for (char *save = NULL, *part = strtok_r(copy, ".", &save); part != NULL && v != NULL;
       part = strtok_r(NULL, ".", &save)) {
    v = json_is_array(v) ? json_array_get(v, strtoul(part, NULL, 10)) : json_object_get(v, part);
  }
  return v;
}

static bool is_count(const json_t *v, long long min, long long max) {
  return json_is_integer(v) && json_integer_value(v) >= min && json_integer_value(v) <= max;
}

static bool all_strings(const json_t *list) {
  size_t i;
  const json_t *item;
  if (!json_is_array(list)) {
    return false;
  }
  json_array_foreach(list, i, item) {
    if (!json_is_string(item)) {
      return false;
    }
  }
  return true;
}

/* run.shard holds together: its numbers in range, its units well formed,
 * keys unique, its digest the units'. */
static enum tb_status check_shard_record(struct shard *s, struct tb_error *err) {
  const json_t *r = s->record;
  const json_t *units = json_object_get(r, "units");
  if (!json_is_object(r) || !is_count(json_object_get(r, "count"), 1, TB_SHARD_MAX) ||
      !json_is_integer(json_object_get(r, "index")) || !json_is_array(units) ||
      !json_is_string(json_object_get(r, "campaign_sha256")) ||
      !all_strings(json_object_get(r, "campaign_argv")) ||
      json_array_size(json_object_get(r, "campaign_argv")) == 0) {
    return tb_fail(err, TB_ERR_INPUT,
                   "%s: run.shard lacks index, count, campaign_argv, campaign_sha256 or units",
                   s->path);
  }
  s->count = json_integer_value(json_object_get(r, "count"));
  s->index = json_integer_value(json_object_get(r, "index"));
  if (s->index < 0 || s->index >= s->count) {
    return tb_fail(err, TB_ERR_INPUT, "%s: run.shard.index %lld is not below its count %lld",
                   s->path, s->index, s->count);
  }
  json_t *keys = json_object();
  size_t i;
  const json_t *u;
  enum tb_status st = TB_OK;
  json_array_foreach(units, i, u) {
    const json_t *key = json_object_get(u, "key");
    if (!json_is_string(key) || !is_count(json_object_get(u, "cost"), 0, INT64_MAX) ||
        !is_count(json_object_get(u, "shard"), 0, s->count - 1) ||
        !all_strings(json_object_get(u, "records"))) {
      st = tb_fail(err, TB_ERR_INPUT,
                   "%s: run.shard.units[%zu] needs a key, a cost, a shard below %lld and records",
                   s->path, i, s->count);
      break;
    }
    if (json_object_get(keys, json_string_value(key)) != NULL) {
      st = tb_fail(err, TB_ERR_INPUT, "%s: run.shard.units names %s twice", s->path,
                   json_string_value(key));
      break;
    }
    json_object_set_new(keys, json_string_value(key), json_true());
  }
  json_decref(keys);
  if (st != TB_OK) {
    return st;
  }
  char digest[TB_SHA256_HEX_LEN];
  if (!tb_shard_campaign_sha256(units, digest) ||
      strcmp(digest, json_string_value(json_object_get(r, "campaign_sha256"))) != 0) {
    return tb_fail(err, TB_ERR_INPUT,
                   "%s: run.shard.campaign_sha256 is not the digest of its units (the file was "
                   "edited)",
                   s->path);
  }
  return TB_OK;
}

/* Loads DIR's results; false (and the directory noted as absent) when it
 * has none: a shard that failed before writing, or never ran. */
static enum tb_status load_shard(struct merge *m, const char *dir, struct tb_error *err) {
  struct shard *s = &m->shards[m->loaded];
  memset(s, 0, sizeof *s);
  s->dir = dir;
  struct tb_error none = {0};
  if (tb_results_path(dir, s->path, sizeof s->path, &none) != TB_OK) {
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
      return tb_fail(err, TB_ERR_USAGE, "%s is not a directory: merge takes shard directories",
                     dir);
    }
    m->absent[m->absent_count++] = dir;
    return TB_OK;
  }
  if (tb_results_read(s->path, &s->bytes, &s->size, err) != TB_OK ||
      tb_results_parse(s->bytes, s->size, s->path, &s->doc, err) != TB_OK) {
    free(s->bytes);
    return err->status;
  }
  m->loaded++; /* owned from here: freed with the merge */
  tb_sha256_buffer(s->bytes, s->size, s->sha256);
  s->record = at(s->doc, "run.shard");
  if (s->record == NULL) {
    return tb_fail(err, TB_ERR_INPUT,
                   "%s is not a shard: it has no run.shard (it was not run with --shard I/N)",
                   s->path);
  }
  s->complete = json_is_true(at(s->doc, "run.complete"));
  return check_shard_record(s, err);
}

/* ---- one campaign -------------------------------------------------------------- */

/* What every shard of a campaign shares exactly (docs/campaigns.md). */
static const char *const same_facts[] = {
    "run.shard.campaign_argv",
    "run.shard.count",
    "run.shard.campaign_sha256",
    "run.shard.cost_model",
    "run.shard.units",
    "tool",
    "schema_version",
    "run.backend",
    "run.seed",
    "run.measure",
    "run.variants",
    "run.planner_profile",
    "run.matrix_realizations",
    "run.gemm_block",
    "run.skipped_pairs",
    "run.frozen",
    "run.replay.rounds",
    "run.replay.reference",
    "run.replay.candidate",
    "provenance.git",
    "provenance.host.os",
    "provenance.host.kernel",
    "provenance.host.machine",
    "provenance.host.cpu_model",
    "provenance.host.logical_cpus",
    "provenance.host.affinity_cpus",
    "provenance.gpu.available",
    "provenance.gpu.driver_cuda_version",
    /* the device each shard measured on (its ordinal 0): the same model */
    "provenance.gpu.devices.0.name",
    "provenance.gpu.devices.0.compute_capability",
    "provenance.gpu.devices.0.multiprocessors",
    "provenance.gpu.devices.0.l2_bytes",
    "provenance.gpu.devices.0.memory_bytes",
    "provenance.gpu.devices.0.max_sm_clock_khz",
};

static bool same_value(const json_t *a, const json_t *b) {
  return (a == NULL && b == NULL) || (a != NULL && b != NULL && json_equal(a, b));
}

/* The artifacts as a set of {path, role, sha256}. */
static bool same_artifacts(const json_t *a, const json_t *b) {
  if (json_array_size(a) != json_array_size(b)) {
    return false;
  }
  size_t i, j;
  const json_t *x, *y;
  json_array_foreach(a, i, x) {
    bool found = false;
    json_array_foreach(b, j, y) {
      found = found || json_equal(x, y);
    }
    if (!found) {
      return false;
    }
  }
  return true;
}

/* thread_env but CUDA_VISIBLE_DEVICES, which names each shard's own device. */
static bool same_thread_env(const json_t *a, const json_t *b, const char **which) {
  const char *key;
  const json_t *v;
  for (int pass = 0; pass < 2; ++pass) {
    const json_t *one = pass ? b : a, *other = pass ? a : b;
    json_object_foreach((json_t *)one, key, v) {
      if (strcmp(key, "CUDA_VISIBLE_DEVICES") != 0 && !same_value(v, json_object_get(other, key))) {
        *which = key;
        return false;
      }
    }
  }
  return true;
}

/* Refuses a shard of another campaign, build or kind of machine. */
static enum tb_status check_same_campaign(const struct shard *ref, const struct shard *s,
                                          struct tb_error *err) {
  static const char hint[] =
      "; the shards of one campaign run the same command line (but --shard and --out), the "
      "same build and the same kind of machine";
  for (size_t i = 0; i < sizeof same_facts / sizeof same_facts[0]; ++i) {
    const json_t *a = at(ref->doc, same_facts[i]), *b = at(s->doc, same_facts[i]);
    if (!same_value(a, b)) {
      char ta[200], tb[200];
      value_text(b, ta, sizeof ta);
      value_text(a, tb, sizeof tb);
      return tb_fail(err, TB_ERR_INPUT,
                     "%s is not a shard of the campaign of %s: %s is %s, not %s%s", s->dir,
                     ref->dir, same_facts[i], ta, tb, hint);
    }
  }
  if (!same_artifacts(at(ref->doc, "provenance.artifacts"), at(s->doc, "provenance.artifacts"))) {
    return tb_fail(err, TB_ERR_INPUT,
                   "%s is not a shard of the campaign of %s: provenance.artifacts differ (another "
                   "executable or library)%s",
                   s->dir, ref->dir, hint);
  }
  const char *which = NULL;
  if (!same_thread_env(at(ref->doc, "provenance.thread_env"), at(s->doc, "provenance.thread_env"),
                       &which)) {
    return tb_fail(err, TB_ERR_INPUT,
                   "%s is not a shard of the campaign of %s: provenance.thread_env.%s differs%s",
                   s->dir, ref->dir, which, hint);
  }
  return TB_OK;
}

/* The units' shards re-derived by the rule (cases/shard.h), and held to
 * the recorded ones. */
static enum tb_status check_assignment(struct merge *m, struct tb_error *err) {
  size_t count = json_array_size(m->units);
  struct tb_shard_unit *units = calloc(count ? count : 1, sizeof *units);
  m->assignment = calloc(count ? count : 1, sizeof *m->assignment);
  if (units == NULL || m->assignment == NULL) {
    free(units);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory");
  }
  size_t i;
  const json_t *u;
  json_array_foreach(m->units, i, u) {
    snprintf(units[i].key, sizeof units[i].key, "%s", json_string_value(json_object_get(u, "key")));
    units[i].cost = (uint64_t)json_integer_value(json_object_get(u, "cost"));
  }
  enum tb_status st = tb_shard_assign(units, count, (unsigned)m->count, m->assignment, err);
  free(units);
  if (st != TB_OK) {
    return tb_fail(err, TB_ERR_INPUT, "%s: run.shard: %s", m->ref->path, err->message);
  }
  json_array_foreach(m->units, i, u) {
    if (json_integer_value(json_object_get(u, "shard")) != (json_int_t)m->assignment[i]) {
      return tb_fail(err, TB_ERR_INPUT,
                     "%s: run.shard.units deals %s to shard %lld; the rule deals it to %u",
                     m->ref->path, json_string_value(json_object_get(u, "key")),
                     (long long)json_integer_value(json_object_get(u, "shard")), m->assignment[i]);
    }
  }
  return TB_OK;
}

/* A complete shard holds every record of its units, each once per round,
 * and nothing else. */
static enum tb_status check_share(const struct merge *m, const struct shard *s,
                                  struct tb_error *err) {
  json_t *expected = json_object(); /* id -> times still expected */
  size_t i, r;
  const json_t *u, *id;
  json_array_foreach(m->units, i, u) {
    if (m->assignment[i] == (unsigned)s->index) {
      json_array_foreach(json_object_get(u, "records"), r, id) {
        const json_t *seen = json_object_get(expected, json_string_value(id));
        json_object_set_new(expected, json_string_value(id),
                            json_integer((seen ? json_integer_value(seen) : 0) + m->rounds));
      }
    }
  }
  const json_t *c;
  enum tb_status st = TB_OK;
  json_array_foreach(json_object_get(s->doc, "cases"), i, c) {
    const char *case_id = tb_json_str(c, "id", "");
    const json_t *left = json_object_get(expected, case_id);
    if (left == NULL || json_integer_value(left) == 0) {
      st = tb_fail(err, TB_ERR_INPUT, "%s holds %s%s, which is not shard %lld's share", s->path,
                   case_id, left ? " once too often" : "", s->index);
      break;
    }
    json_object_set_new(expected, case_id, json_integer(json_integer_value(left) - 1));
  }
  const char *key;
  const json_t *left;
  json_object_foreach(expected, key, left) {
    if (st == TB_OK && json_integer_value(left) != 0) {
      st = tb_fail(err, TB_ERR_INPUT, "%s is marked complete but lacks %s of shard %lld's share",
                   s->path, key, s->index);
    }
  }
  json_decref(expected);
  return st;
}

/* ---- a refused merge: what is missing and how to rerun it ---------------------- */

static const char *executable_of(const struct shard *s) {
  size_t i;
  const json_t *a;
  json_array_foreach(at(s->doc, "provenance.artifacts"), i, a) {
    if (strcmp(tb_json_str(a, "role", ""), "executable") == 0) {
      return tb_json_str(a, "path", "tilebench");
    }
  }
  return "tilebench";
}

/* Where a rerun of shard `index` may go: beside the first directory given,
 * under a name nothing holds yet. */
static void rerun_dir(const struct merge *m, long long index, char *out, size_t size) {
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", m->req->dirs[0]);
  size_t len = strlen(parent);
  while (len > 1 && parent[len - 1] == '/') {
    parent[--len] = '\0';
  }
  char *slash = strrchr(parent, '/');
  if (slash == NULL) {
    snprintf(parent, sizeof parent, ".");
  } else if (slash == parent) {
    parent[1] = '\0';
  } else {
    *slash = '\0';
  }
  for (int attempt = 1; attempt < 1000; ++attempt) {
    char suffix[16] = "";
    if (attempt > 1) {
      snprintf(suffix, sizeof suffix, "-%d", attempt);
    }
    snprintf(out, size, "%s/shard-%lld-of-%lld-rerun%s", strcmp(parent, "/") ? parent : "", index,
             m->count, suffix);
    if (access(out, F_OK) != 0) {
      return;
    }
  }
}

static void print_command(const char *prefix, const char *const *argv, size_t argc) {
  char *text = tb_shell_command(argv, argc);
  fprintf(stderr, "  %s%s\n", prefix ? prefix : "", text ? text : "(out of memory)");
  free(text);
}

/* The cases of the missing shards, one rerun command for each, and the
 * merge that then completes the campaign. */
static int refuse_missing(const struct merge *m) {
  size_t missing_shards = 0, missing_cases = 0;
  for (long long i = 0; i < m->count; ++i) {
    missing_shards += m->by_index[i] == NULL;
  }
  fprintf(stderr,
          "tilebench merge: refused: %zu of %lld shard(s) missing or incomplete:", missing_shards,
          m->count);
  for (long long i = 0; i < m->count; ++i) {
    if (m->by_index[i] == NULL) {
      fprintf(stderr, " %lld", i);
    }
  }
  fputc('\n', stderr);
  for (size_t i = 0; i < m->absent_count; ++i) {
    fprintf(stderr, "  %s holds no results.json (the shard failed before writing, or never ran)\n",
            m->absent[i]);
  }
  for (size_t i = 0; i < m->loaded; ++i) {
    const struct shard *s = &m->shards[i];
    if (!s->complete) {
      fprintf(stderr, "  %s (shard %lld) is incomplete: %s\n", s->dir, s->index,
              tb_json_str(at(s->doc, "run"), "error", "run.complete is false"));
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      fprintf(stderr, "missing cases (%zu%s):\n", missing_cases,
              m->rounds > 1 ? ", each in every round" : "");
    }
    size_t u;
    const json_t *unit;
    json_array_foreach(m->units, u, unit) {
      if (m->by_index[m->assignment[u]] != NULL) {
        continue;
      }
      size_t r;
      const json_t *id;
      json_array_foreach(json_object_get(unit, "records"), r, id) {
        if (pass == 0) {
          missing_cases++;
        } else {
          fprintf(stderr, "  %s (shard %u)\n", json_string_value(id), m->assignment[u]);
        }
      }
    }
  }
  const json_t *campaign = at(m->ref->doc, "run.shard.campaign_argv");
  size_t argc = json_array_size(campaign);
  const char **argv = calloc(argc + 8 + m->req->dir_count + m->count, sizeof *argv);
  char(*dirs)[PATH_MAX] = calloc((size_t)m->count, sizeof *dirs);
  if (argv == NULL || dirs == NULL) {
    free(argv);
    free(dirs);
    return 1;
  }
  fprintf(stderr, "rerun just those (a rerun writes a new directory; nothing is replaced):\n");
  for (long long i = 0; i < m->count; ++i) {
    if (m->by_index[i] != NULL) {
      continue;
    }
    char shard[48];
    snprintf(shard, sizeof shard, "%lld/%lld", i, m->count);
    rerun_dir(m, i, dirs[i], sizeof dirs[i]);
    size_t n = 0;
    argv[n++] = executable_of(m->ref);
    for (size_t k = 0; k < argc; ++k) {
      argv[n++] = json_string_value(json_array_get(campaign, k));
    }
    argv[n++] = "--shard";
    argv[n++] = shard;
    argv[n++] = "--out";
    argv[n++] = dirs[i];
    const char *prefix = (size_t)i < m->req->rerun_prefix_count ? m->req->rerun_prefix[i] : NULL;
    print_command(prefix, argv, n);
  }
  size_t n = 0;
  argv[n++] = executable_of(m->ref);
  argv[n++] = "merge";
  for (long long i = 0; i < m->count; ++i) {
    argv[n++] = m->by_index[i] != NULL ? m->by_index[i]->dir : dirs[i];
  }
  char out[PATH_MAX + 16];
  snprintf(out, sizeof out, "%s%s", m->req->out, m->req->in_place ? "-merged" : "");
  argv[n++] = "--out";
  argv[n++] = out;
  fprintf(stderr, "then merge:\n");
  print_command(NULL, argv, n);
  free(argv);
  free(dirs);
  return 1;
}

/* ---- the merged document --------------------------------------------------------- */

/* The device a shard measured on, as each of its cases names it. */
static json_t *device_of(const struct shard *s) {
  const char *backend = tb_json_str(at(s->doc, "run"), "backend", "?");
  const json_t *gpu = at(s->doc, "provenance.gpu.devices.0");
  json_t *device =
      json_pack("{s:s, s:O, s:O}", "backend", backend, "hostname",
                or_null(at(s->doc, "provenance.host.hostname")), "cuda_visible_devices",
                or_null(at(s->doc, "provenance.thread_env.CUDA_VISIBLE_DEVICES")));
  json_object_set_new(device, "gpu",
                      strcmp(backend, "cuda") == 0 && json_is_object(gpu)
                          ? json_pack("{s:O, s:O, s:O}", "ordinal",
                                      or_null(json_object_get(gpu, "ordinal")), "name",
                                      or_null(json_object_get(gpu, "name")), "uuid",
                                      or_null(json_object_get(gpu, "uuid")))
                          : json_null());
  return device;
}

struct placed {
  json_t *record;
  long long round;
  size_t unit, position;
};

static int by_place(const void *a, const void *b) {
  const struct placed *x = a, *y = b;
  if (x->round != y->round) {
    return x->round < y->round ? -1 : 1;
  }
  if (x->unit != y->unit) {
    return x->unit < y->unit ? -1 : 1;
  }
  return x->position < y->position ? -1 : x->position > y->position;
}

/* Every shard's cases, each with its shard and device, in the order the
 * whole campaign measures them: round by round, unit by unit. */
static json_t *merged_cases(const struct merge *m) {
  json_t *unit_index = json_object();
  size_t u, total = 0;
  const json_t *unit;
  json_array_foreach(m->units, u, unit) {
    json_object_set_new(unit_index, json_string_value(json_object_get(unit, "key")),
                        json_integer((json_int_t)u));
  }
  for (long long i = 0; i < m->count; ++i) {
    total += json_array_size(json_object_get(m->by_index[i]->doc, "cases"));
  }
  struct placed *all = calloc(total ? total : 1, sizeof *all);
  json_t *cases = json_array();
  if (all == NULL) {
    json_decref(unit_index);
    return cases;
  }
  size_t n = 0;
  for (long long i = 0; i < m->count; ++i) {
    const struct shard *s = m->by_index[i];
    json_t *device = device_of(s);
    size_t k;
    const json_t *c;
    json_array_foreach(json_object_get(s->doc, "cases"), k, c) {
      char key[TB_SHARD_KEY_SIZE];
      tb_case_unit_key(tb_json_str(c, "id", ""), key, sizeof key);
      json_t *record = json_copy((json_t *)c);
      json_object_set_new(record, "shard", json_integer(i));
      json_object_set(record, "measured_on", device);
      const json_t *round = json_object_get(c, "round");
      all[n++] = (struct placed){record, json_is_integer(round) ? json_integer_value(round) : -1,
                                 (size_t)json_integer_value(json_object_get(unit_index, key)), k};
    }
    json_decref(device);
  }
  qsort(all, n, sizeof *all, by_place);
  for (size_t k = 0; k < n; ++k) {
    json_array_append_new(cases, all[k].record);
  }
  free(all);
  json_decref(unit_index);
  return cases;
}

/* What the merged run records of each shard. */
static json_t *shard_entry(const struct shard *s) {
  json_t *e = json_pack(
      "{s:I, s:s, s:s, s:s, s:I, s:O, s:O, s:O, s:O, s:O, s:o}", "index", (json_int_t)s->index,
      "dir", s->dir, "file", "", "results_sha256", s->sha256, "cases",
      (json_int_t)json_array_size(json_object_get(s->doc, "cases")), "argv",
      or_null(at(s->doc, "run.argv")), "started_at", or_null(at(s->doc, "run.started_at")),
      "finished_at", or_null(at(s->doc, "run.finished_at")), "valid_cases",
      or_null(at(s->doc, "run.valid_cases")), "copy_ceiling",
      or_null(at(s->doc, "run.copy_ceiling")), "measured_on", device_of(s));
  char file[64];
  snprintf(file, sizeof file, "shards/%lld/%s", s->index, TB_RESULTS_FILE);
  json_object_set_new(e, "file", json_string(file));
  json_t *prov = json_object();
  static const char *const keys[] = {"host", "gpu", "thread_env", "busy_processes_start",
                                     "busy_processes_end"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i) {
    const json_t *v = json_object_get(json_object_get(s->doc, "provenance"), keys[i]);
    json_object_set(prov, keys[i], v ? (json_t *)v : json_null());
  }
  json_object_set_new(e, "provenance", prov);
  return e;
}

static json_t *argv_json(int argc, char **argv) {
  json_t *list = json_array();
  for (int i = 0; i < argc; ++i) {
    json_t *s = json_string(argv[i]);
    json_array_append_new(list, s ? s : json_string("?"));
  }
  return list;
}

/* The earliest (or latest) of the shards' run.<key>: ISO 8601 UTC sorts as text. */
static const char *extreme_time(const struct merge *m, const char *key, int sign) {
  const char *best = NULL;
  for (long long i = 0; i < m->count; ++i) {
    const char *t = tb_json_str(json_object_get(m->by_index[i]->doc, "run"), key, NULL);
    if (t != NULL && (best == NULL || sign * strcmp(t, best) > 0)) {
      best = t;
    }
  }
  return best;
}

static json_t *merged_document(const struct merge *m) {
  const json_t *first = m->by_index[0]->doc;
  json_t *doc = json_copy((json_t *)first);
  json_t *run = json_copy(json_object_get(first, "run"));
  json_object_set_new(doc, "run", run);
  json_object_del(doc, "replay");
  json_object_set_new(doc, "schema_version", json_integer(TB_RESULTS_SCHEMA_VERSION));
  const json_t *campaign = at(first, "run.shard.campaign_argv");
  json_object_set(run, "argv", (json_t *)campaign);
  const char **words = calloc(json_array_size(campaign) + 1, sizeof *words);
  size_t i;
  const json_t *word;
  words[0] = "tilebench";
  json_array_foreach(campaign, i, word) {
    words[i + 1] = json_string_value(word);
  }
  char *command = tb_shell_command(words, json_array_size(campaign) + 1);
  free(words);
  json_object_set_new(run, "command", json_string(command ? command : ""));
  free(command);
  json_object_set_new(run, "started_at", json_string(extreme_time(m, "started_at", -1)));
  json_object_set_new(run, "finished_at", json_string(extreme_time(m, "finished_at", 1)));
  json_int_t valid = 0;
  for (long long k = 0; k < m->count; ++k) {
    valid += json_integer_value(at(m->by_index[k]->doc, "run.valid_cases"));
  }
  json_object_set_new(run, "valid_cases", json_integer(valid));
  json_object_set_new(run, "complete", json_true());
  json_object_set_new(run, "error", json_null());
  json_object_set_new(run, "interrupted", json_null());
  json_object_del(run, "shard");
  json_t *shards = json_array();
  for (long long k = 0; k < m->count; ++k) {
    json_array_append_new(shards, shard_entry(m->by_index[k]));
  }
  char merged_at[32];
  tb_utc_timestamp(merged_at, sizeof merged_at);
  const json_t *record = m->by_index[0]->record;
  json_object_set_new(
      run, "merge",
      json_pack("{s:I, s:O, s:O, s:O, s:O, s:o, s:s, s:o}", "shard_count", (json_int_t)m->count,
                "campaign_argv", json_object_get(record, "campaign_argv"), "campaign_sha256",
                json_object_get(record, "campaign_sha256"), "cost_model",
                or_null(json_object_get(record, "cost_model")), "units", m->units, "argv",
                argv_json(m->req->argc, m->req->argv), "merged_at", merged_at, "shards", shards));
  json_object_set_new(doc, "cases", merged_cases(m));
  return doc;
}

/* A replay's summary over the merged cases (each shard's covers its own). */
static enum tb_status summarise_replay(json_t *doc, struct tb_error *err) {
  const json_t *replay = at(doc, "run.replay");
  if (replay == NULL) {
    return TB_OK;
  }
  struct tb_results_model model;
  struct tb_replay_record summary;
  if (tb_results_model_fill(doc, &model, err) != TB_OK) {
    return err->status;
  }
  if (tb_replay_summary(&model, tb_json_str(replay, "reference", ""),
                        tb_json_str(replay, "candidate", ""),
                        (unsigned)json_integer_value(json_object_get(replay, "rounds")), &summary,
                        err) == TB_OK) {
    json_object_set_new(doc, "replay", tb_replay_record_to_json(&summary));
    tb_replay_record_free(&summary);
  }
  tb_results_model_free(&model);
  return err->status;
}

/* ---- writing ---------------------------------------------------------------------- */

static enum tb_status make_dir(const char *path, bool must_be_new, struct tb_error *err) {
  if (mkdir(path, 0755) == 0 || (!must_be_new && errno == EEXIST)) {
    return TB_OK;
  }
  return errno == EEXIST
             ? tb_fail(err, TB_ERR_USAGE,
                       "--out %s exists; a merge writes a new directory (nothing "
                       "is ever overwritten)",
                       path)
             : tb_fail(err, TB_ERR_INPUT, "cannot create %s: %s", path, strerror(errno));
}

/* out's parents, then out itself, which must be new. */
static enum tb_status create_out(const char *out, struct tb_error *err) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s", out) >= (int)sizeof path || out[0] == '\0') {
    return tb_fail(err, TB_ERR_USAGE, "--out: a usable directory name, please");
  }
  for (char *p = path + 1; *p; ++p) {
    if (*p == '/') {
      *p = '\0';
      if (make_dir(path, false, err) != TB_OK) {
        return err->status;
      }
      *p = '/';
    }
  }
  return make_dir(path, true, err);
}

static bool is_path(const char *a, const char *b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  return realpath(a, ra) != NULL && realpath(b, rb) != NULL && strcmp(ra, rb) == 0;
}

/* The sources a shard's cases name, found in the shard's sources/ and
 * checked against their names; copied when `out` is given. */
static enum tb_status shard_sources(const struct shard *s, const char *out, struct tb_error *err) {
  size_t i;
  const json_t *c;
  json_array_foreach(json_object_get(s->doc, "cases"), i, c) {
    const char *sha = tb_json_str(c, "source_sha256", NULL);
    if (sha == NULL) {
      continue;
    }
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/sources/%s.cu", s->dir, sha);
    FILE *f = fopen(path, "rb");
    char *text = malloc(SOURCE_MAX_BYTES + 1);
    size_t got = f != NULL && text != NULL ? fread(text, 1, SOURCE_MAX_BYTES + 1, f) : 0;
    if (f != NULL) {
      fclose(f);
    }
    char digest[TB_SHA256_HEX_LEN] = "";
    if (f != NULL && text != NULL && got <= SOURCE_MAX_BYTES) {
      tb_sha256_buffer(text, got, digest);
      text[got] = '\0';
    }
    enum tb_status st = TB_OK;
    if (strcmp(digest, sha) != 0) {
      st = tb_fail(err, TB_ERR_INPUT, "%s's case %s names source %s, which %s", s->dir,
                   tb_json_str(c, "id", "?"), sha,
                   f == NULL ? "its sources/ lacks" : "does not hash to its name there");
    } else if (out != NULL && strlen(text) == got) {
      st = tb_archive_source(out, sha, text, err);
    } else if (out != NULL) {
      st = tb_fail(err, TB_ERR_INPUT, "%s holds a NUL byte: not a CUDA source", path);
    }
    free(text);
    if (st != TB_OK) {
      return st;
    }
  }
  return TB_OK;
}

static enum tb_status write_merged(const struct merge *m, json_t *doc, struct tb_error *err) {
  const char *out = m->req->out;
  char dir[PATH_MAX + 64];
  if (!m->req->in_place && (create_out(out, err) != TB_OK || tb_claim_out_dir(out, err) != TB_OK)) {
    return err->status;
  }
  snprintf(dir, sizeof dir, "%s/shards", out);
  if (make_dir(dir, false, err) != TB_OK) {
    return err->status;
  }
  for (long long i = 0; i < m->count; ++i) {
    const struct shard *s = m->by_index[i];
    snprintf(dir, sizeof dir, "%s/shards/%lld", out, i);
    if (!is_path(s->dir, dir) &&
        (make_dir(dir, true, err) != TB_OK ||
         tb_write_bytes_atomic(dir, TB_RESULTS_FILE, s->bytes, s->size, err) != TB_OK)) {
      return err->status;
    }
    if (shard_sources(s, out, err) != TB_OK) {
      return err->status;
    }
  }
  if (tb_write_json_atomic(out, TB_RESULTS_FILE, doc, err) != TB_OK) {
    return err->status;
  }
  struct tb_results_model model;
  if (tb_results_model_fill(doc, &model, err) != TB_OK) {
    return err->status;
  }
  char *md = tb_report_markdown(&model, err);
  if (md != NULL) {
    tb_write_text_atomic(out, "results.md", md, err);
    free(md);
  }
  if (err->status == TB_OK && !m->req->quiet) {
    char *table = tb_report_terminal_table(&model, err);
    if (table != NULL) {
      fputs(table, stdout);
      free(table);
    }
  }
  tb_results_model_free(&model);
  if (!m->req->in_place && err->status == TB_OK) {
    tb_release_out_dir(out);
  }
  return err->status;
}

/* ---- the whole ------------------------------------------------------------------------ */

static int fail(struct tb_error *err) {
  fprintf(stderr, "tilebench merge: %s\n", err->message);
  return tb_exit_code(err->status);
}

/* Loads and checks every shard; fills by_index. A status other than TB_OK
 * refuses the merge. */
static enum tb_status gather(struct merge *m, struct tb_error *err) {
  for (size_t i = 0; i < m->req->dir_count; ++i) {
    if (load_shard(m, m->req->dirs[i], err) != TB_OK) {
      return err->status;
    }
  }
  if (m->loaded == 0) {
    return tb_fail(err, TB_ERR_INPUT,
                   "none of the %zu directories holds a shard's results.json: nothing to merge "
                   "(rerun the campaign's shards)",
                   m->req->dir_count);
  }
  m->ref = &m->shards[0];
  m->count = m->ref->count;
  m->units = json_object_get(m->ref->record, "units");
  const json_t *rounds = at(m->ref->doc, "run.replay.rounds");
  m->rounds = json_is_integer(rounds) ? json_integer_value(rounds) : 1;
  for (size_t i = 1; i < m->loaded; ++i) {
    if (check_same_campaign(m->ref, &m->shards[i], err) != TB_OK) {
      return err->status;
    }
  }
  if (check_assignment(m, err) != TB_OK) {
    return err->status;
  }
  m->by_index = calloc((size_t)m->count, sizeof *m->by_index);
  const struct shard **seen = calloc((size_t)m->count, sizeof *seen);
  if (m->by_index == NULL || seen == NULL) {
    free(seen);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory");
  }
  for (size_t i = 0; i < m->loaded && err->status == TB_OK; ++i) {
    struct shard *s = &m->shards[i];
    const struct shard *other = seen[s->index];
    if (other != NULL) {
      tb_fail(err, TB_ERR_INPUT,
              "shard %lld/%lld is given twice: %s (%s) and %s (%s); every shard is merged "
              "exactly once: leave one out",
              s->index, m->count, other->dir, other->complete ? "complete" : "incomplete", s->dir,
              s->complete ? "complete" : "incomplete");
      break;
    }
    seen[s->index] = s;
    if (s->complete && check_share(m, s, err) == TB_OK) {
      m->by_index[s->index] = s;
    }
  }
  free(seen);
  for (long long i = 0; i < m->count && err->status == TB_OK; ++i) {
    if (m->by_index[i] != NULL) {
      shard_sources(m->by_index[i], NULL, err);
    }
  }
  return err->status;
}

static void merge_free(struct merge *m) {
  for (size_t i = 0; i < m->loaded; ++i) {
    json_decref(m->shards[i].doc);
    free(m->shards[i].bytes);
  }
  free(m->shards);
  free(m->absent);
  free(m->assignment);
  free(m->by_index);
}

int tb_merge_shards(const struct tb_merge_request *req) {
  struct tb_error err = {0};
  struct merge m = {0};
  m.req = req;
  if (!req->in_place && access(req->out, F_OK) == 0) {
    tb_fail(&err, TB_ERR_USAGE,
            "--out %s exists; a merge writes a new directory (nothing is ever overwritten)",
            req->out);
    return fail(&err);
  }
  m.shards = calloc(req->dir_count + 1, sizeof *m.shards);
  m.absent = calloc(req->dir_count + 1, sizeof *m.absent);
  if (m.shards == NULL || m.absent == NULL) {
    merge_free(&m);
    tb_fail(&err, TB_ERR_SYSTEM, "out of memory");
    return fail(&err);
  }
  int rc = 0;
  if (gather(&m, &err) != TB_OK) {
    rc = fail(&err);
  } else {
    bool whole = true;
    for (long long i = 0; i < m.count; ++i) {
      whole = whole && m.by_index[i] != NULL;
    }
    if (!whole) {
      rc = refuse_missing(&m);
    } else {
      json_t *doc = merged_document(&m);
      if (summarise_replay(doc, &err) != TB_OK || write_merged(&m, doc, &err) != TB_OK) {
        rc = fail(&err);
      } else {
        long long total = (long long)json_array_size(json_object_get(doc, "cases"));
        long long valid = json_integer_value(at(doc, "run.valid_cases"));
        printf("\nmerged %lld shard(s) of campaign %.12s: %lld of %lld cases valid; results in "
               "%s/%s\n",
               m.count, json_string_value(json_object_get(m.ref->record, "campaign_sha256")), valid,
               total, req->out, TB_RESULTS_FILE);
        for (size_t i = 0; i < m.absent_count; ++i) {
          printf("note: %s held no results.json and was left out\n", m.absent[i]);
        }
        if (valid != total) {
          fprintf(stderr, "tilebench merge: %lld case(s) invalid; see %s/results.md\n",
                  total - valid, req->out);
          rc = 1;
        }
      }
      json_decref(doc);
    }
  }
  merge_free(&m);
  return rc;
}
