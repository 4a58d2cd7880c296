#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"
#include "results/results.h"

enum tb_status tb_results_load(const char *path, json_t **doc, struct tb_error *err) {
  json_error_t jerr;
  *doc = json_load_file(path, 0, &jerr);
  if (*doc == NULL) {
    return tb_fail(err, TB_ERR_INPUT, "cannot read %s: %s (line %d)", path, jerr.text, jerr.line);
  }
  const char *schema = json_string_value(json_object_get(*doc, "schema"));
  json_t *version = json_object_get(*doc, "schema_version");
  if (schema == NULL || strcmp(schema, TB_RESULTS_SCHEMA) != 0 || !json_is_integer(version)) {
    json_decref(*doc);
    *doc = NULL;
    return tb_fail(err, TB_ERR_INPUT, "%s is not a tilebench results file", path);
  }
  if (json_integer_value(version) != TB_RESULTS_SCHEMA_VERSION) {
    long long v = (long long)json_integer_value(version);
    json_decref(*doc);
    *doc = NULL;
    return tb_fail(err, TB_ERR_INPUT, "%s has schema version %lld; this tilebench reads version %d",
                   path, v, TB_RESULTS_SCHEMA_VERSION);
  }
  return TB_OK;
}

/* Value at a path of object keys ("host", "throughput", ...), or NULL. */
static json_t *at(const json_t *node, const char *const *keys, size_t count) {
  json_t *cur = (json_t *)node;
  for (size_t i = 0; i < count && cur != NULL; ++i) {
    cur = json_object_get(cur, keys[i]);
  }
  return cur;
}

static double p50_ns(const json_t *c, const char *phase) {
  const char *keys[] = {"host", phase, "per_call_summary_ns", "p50"};
  json_t *v = at(c, keys, 4);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Microseconds with 3 significant decimals, or "n/a". */
static void fmt_us(char *buf, size_t size, double ns) {
  if (isnan(ns)) {
    snprintf(buf, size, "n/a");
  } else {
    snprintf(buf, size, "%.3f", ns / 1e3);
  }
}

static void fmt_gbps(char *buf, size_t size, const json_t *c, double ns) {
  double bytes = json_number_value(json_object_get(c, "minimal_bytes"));
  if (isnan(ns) || ns <= 0.0) {
    snprintf(buf, size, "n/a");
  } else {
    snprintf(buf, size, "%.1f", bytes / ns); /* bytes per ns = GB/s */
  }
}

static void fmt_error(char *buf, size_t size, const json_t *c, const char *field) {
  json_t *v = json_object_get(json_object_get(c, "validation"), field);
  if (json_is_number(v)) {
    snprintf(buf, size, "%.2e", json_number_value(v));
  } else {
    snprintf(buf, size, json_object_get(c, "validation") ? "inf/NaN" : "n/a");
  }
}

static const char *str_or(const json_t *v, const char *fallback) {
  return json_is_string(v) ? json_string_value(v) : fallback;
}

static void markdown_header(struct tb_strbuf *b, const json_t *doc) {
  const json_t *run = json_object_get(doc, "run");
  const json_t *git = json_object_get(json_object_get(doc, "provenance"), "git");
  tb_strbuf_printf(b, "# tilebench results\n\n");
  tb_strbuf_printf(b, "- tool: tilebench %s, results schema %lld\n",
                   str_or(json_object_get(json_object_get(doc, "tool"), "version"), "?"),
                   (long long)json_integer_value(json_object_get(doc, "schema_version")));
  tb_strbuf_printf(b, "- command: `%s`\n", str_or(json_object_get(run, "command"), "?"));
  tb_strbuf_printf(b, "- started %s, finished %s\n", str_or(json_object_get(run, "started_at"), "?"),
                   str_or(json_object_get(run, "finished_at"), "?"));
  tb_strbuf_printf(b, "- backend: %s; seed %lld\n", str_or(json_object_get(run, "backend"), "?"),
                   (long long)json_integer_value(json_object_get(run, "seed")));
  json_t *dirty = json_object_get(git, "dirty");
  tb_strbuf_printf(b, "- source: commit %s%s\n", str_or(json_object_get(git, "commit"), "unknown"),
                   json_is_true(dirty) ? " (dirty worktree)" : "");
  tb_strbuf_printf(b, "- cases: %zu, valid: %lld\n\n",
                   json_array_size(json_object_get(doc, "cases")),
                   (long long)json_integer_value(json_object_get(run, "valid_cases")));
}

static void markdown_cases(struct tb_strbuf *b, const json_t *cases) {
  tb_strbuf_printf(b, "## Timings\n\n");
  tb_strbuf_printf(b, "Host E2E: CLOCK_MONOTONIC around launch(es) and the final synchronisation. "
                      "Throughput = a calibrated batch's time / calls; latency = one call + sync. "
                      "GB/s counts the minimal bytes (inputs read once, output written once) over "
                      "the host throughput p50. GPU control: CUDA events around the batch.\n\n");
  tb_strbuf_printf(b, "| case | valid | host throughput p50 (µs/call) | host latency p50 (µs) | "
                      "GB/s (host throughput) | GPU control | max abs error | max rel error |\n");
  tb_strbuf_printf(b, "|---|---|---:|---:|---:|---|---:|---:|\n");
  size_t i;
  json_t *c;
  json_array_foreach(cases, i, c) {
    char thr[32], lat[32], gbps[32], abs_err[32], rel_err[32];
    double t = p50_ns(c, "throughput");
    fmt_us(thr, sizeof thr, t);
    fmt_us(lat, sizeof lat, p50_ns(c, "latency"));
    fmt_gbps(gbps, sizeof gbps, c, t);
    fmt_error(abs_err, sizeof abs_err, c, "max_abs_error");
    fmt_error(rel_err, sizeof rel_err, c, "max_rel_error");
    const char *device = json_is_null(json_object_get(c, "device")) ? "not available" : "measured";
    tb_strbuf_printf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
                     str_or(json_object_get(c, "id"), "?"),
                     json_is_true(json_object_get(c, "valid")) ? "yes" : "**NO**", thr, lat, gbps,
                     device, abs_err, rel_err);
  }
  tb_strbuf_printf(b, "\n");
}

static void markdown_problems(struct tb_strbuf *b, const json_t *cases) {
  size_t i, shown = 0;
  json_t *c;
  json_array_foreach(cases, i, c) {
    const char *error = json_string_value(json_object_get(c, "error"));
    if (error != NULL) {
      if (shown++ == 0) {
        tb_strbuf_printf(b, "## Errors\n\n");
      }
      tb_strbuf_printf(b, "- %s: %s\n", str_or(json_object_get(c, "id"), "?"), error);
    }
  }
  if (shown > 0) {
    tb_strbuf_printf(b, "\n");
  }
  /* Device timing absence is stated, never hidden. */
  json_t *first = json_array_get(cases, 0);
  const char *why = first ? json_string_value(json_object_get(first, "device_unavailable_reason"))
                          : NULL;
  if (why != NULL) {
    tb_strbuf_printf(b, "GPU timing not available: %s.\n\n", why);
  }
}

static void markdown_load(struct tb_strbuf *b, const json_t *doc) {
  const json_t *prov = json_object_get(doc, "provenance");
  tb_strbuf_printf(b, "## Environment\n\n");
  const json_t *host = json_object_get(prov, "host");
  tb_strbuf_printf(b, "- host: %s, %s, %lld logical CPUs\n",
                   str_or(json_object_get(host, "os"), "?"),
                   str_or(json_object_get(host, "cpu_model"), "?"),
                   (long long)json_integer_value(json_object_get(host, "logical_cpus")));
  const char *moments[] = {"busy_processes_start", "busy_processes_end"};
  for (int k = 0; k < 2; ++k) {
    const json_t *snap = json_object_get(prov, moments[k]);
    const json_t *procs = json_object_get(snap, "processes");
    tb_strbuf_printf(b, "- background load at %s: ", k == 0 ? "start" : "end");
    if (json_array_size(procs) == 0) {
      tb_strbuf_printf(b, "no other process above %.0f%% of a CPU\n",
                       json_number_value(json_object_get(snap, "threshold_cpu_percent")));
      continue;
    }
    size_t i;
    json_t *p;
    json_array_foreach(procs, i, p) {
      tb_strbuf_printf(b, "%s%s (pid %lld) %.0f%%", i ? ", " : "**",
                       str_or(json_object_get(p, "name"), "?"),
                       (long long)json_integer_value(json_object_get(p, "pid")),
                       json_number_value(json_object_get(p, "cpu_percent")));
    }
    tb_strbuf_printf(b, "** (timings may be disturbed)\n");
  }
}

char *tb_report_markdown(const json_t *doc, struct tb_error *err) {
  const json_t *cases = json_object_get(doc, "cases");
  if (!json_is_array(cases)) {
    tb_fail(err, TB_ERR_INPUT, "results document has no 'cases' array");
    return NULL;
  }
  struct tb_strbuf b = {0};
  markdown_header(&b, doc);
  markdown_cases(&b, cases);
  markdown_problems(&b, cases);
  markdown_load(&b, doc);
  char *text = tb_strbuf_take(&b);
  if (text == NULL) {
    tb_fail(err, TB_ERR_SYSTEM, "out of memory building the report");
  }
  return text;
}

char *tb_report_terminal_table(const json_t *doc, struct tb_error *err) {
  const json_t *cases = json_object_get(doc, "cases");
  if (!json_is_array(cases)) {
    tb_fail(err, TB_ERR_INPUT, "results document has no 'cases' array");
    return NULL;
  }
  struct tb_strbuf b = {0};
  tb_strbuf_printf(&b, "%-40s %6s %14s %14s %10s\n", "case", "valid", "thr p50 µs", "lat p50 µs",
                   "GB/s");
  size_t i;
  json_t *c;
  json_array_foreach(cases, i, c) {
    char thr[32], lat[32], gbps[32];
    double t = p50_ns(c, "throughput");
    fmt_us(thr, sizeof thr, t);
    fmt_us(lat, sizeof lat, p50_ns(c, "latency"));
    fmt_gbps(gbps, sizeof gbps, c, t);
    tb_strbuf_printf(&b, "%-40s %6s %14s %14s %10s\n", str_or(json_object_get(c, "id"), "?"),
                     json_is_true(json_object_get(c, "valid")) ? "yes" : "NO", thr, lat, gbps);
  }
  char *text = tb_strbuf_take(&b);
  if (text == NULL) {
    tb_fail(err, TB_ERR_SYSTEM, "out of memory building the table");
  }
  return text;
}
