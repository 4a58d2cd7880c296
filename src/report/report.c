#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "stats/stats.h"
#include "results/results.h"

/* Value at a path of object keys ("host", "throughput", ...), or NULL. */
static json_t *at(const json_t *node, const char *const *keys, size_t count) {
  json_t *cur = (json_t *)node;
  for (size_t i = 0; i < count && cur != NULL; ++i) {
    cur = json_object_get(cur, keys[i]);
  }
  return cur;
}

static double number_at(const json_t *c, const char *const *keys, size_t count) {
  json_t *v = at(c, keys, count);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static double p50_ns(const json_t *c, const char *phase) {
  const char *keys[] = {"host", phase, "per_call_summary_ns", "p50"};
  return number_at(c, keys, 4);
}

/* GPU control per call (p50) of a metric, NaN without device timing. */
static double control_p50_ns(const json_t *c, const char *metric) {
  const char *keys[] = {"device", metric, "control", "per_call_summary_ns", "p50"};
  return number_at(c, keys, 5);
}

static double ceiling_gbps(const json_t *doc) {
  const char *keys[] = {"run", "copy_ceiling", "gbps"};
  return number_at(doc, keys, 3);
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

/* Text for one Markdown table cell or list item: a '|' would end the cell
 * and a line break the row, so a name from a foreign results file is
 * escaped. Returns buf. */
static const char *md(const char *text, char *buf, size_t size) {
  size_t n = 0;
  for (; *text && n + 2 < size; ++text) {
    if (*text == '|') {
      buf[n++] = '\\';
      buf[n++] = '|';
    } else {
      buf[n++] = (*text == '\n' || *text == '\r') ? ' ' : *text;
    }
  }
  buf[n] = '\0';
  return buf;
}

/* A case whose provider never started (PyTorch missing, torch.compile too
 * old): it has no figures, only the reason. */
static bool provider_unavailable(const json_t *c) {
  return strcmp(str_or(json_object_get(c, "backend"), ""), "none") == 0;
}

/* The hazard name of a flag: the text before its colon. */
static void flag_head(const json_t *flag, char *head, size_t size) {
  snprintf(head, size, "%s", str_or(flag, "?"));
  head[strcspn(head, ":")] = '\0';
}

/* Each hazard raised in the run, with how many cases raised it. */
static void hazard_counts(const json_t *cases, json_t *counts) {
  size_t i, f;
  const json_t *c, *flag;
  json_array_foreach(cases, i, c) {
    json_array_foreach(json_object_get(json_object_get(c, "device"), "flags"), f, flag) {
      char head[64];
      flag_head(flag, head, sizeof head);
      json_int_t n = json_integer_value(json_object_get(counts, head));
      json_object_set_new(counts, head, json_integer(n + 1));
    }
  }
}

/* Other processes busy at the start or end of the run, as one line, or
 * NULL when there were none (the caller frees). */
static char *background_load(const json_t *doc) {
  const json_t *prov = json_object_get(doc, "provenance");
  const char *moments[] = {"busy_processes_start", "busy_processes_end"};
  struct tb_strbuf b = {0};
  for (int k = 0; k < 2; ++k) {
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(json_object_get(prov, moments[k]), "processes"), i, p) {
      tb_strbuf_printf(&b, "%s%s (pid %lld, %.0f%% of a CPU, at the %s)", b.len ? ", " : "",
                       str_or(json_object_get(p, "name"), "?"),
                       (long long)json_integer_value(json_object_get(p, "pid")),
                       json_number_value(json_object_get(p, "cpu_percent")),
                       k == 0 ? "start" : "end");
    }
  }
  return tb_strbuf_take(&b);
}

/* The providers that did not start, each once with its reason. */
static void unavailable_providers(const json_t *cases, json_t *reasons) {
  size_t i;
  const json_t *c;
  json_array_foreach(cases, i, c) {
    const char *provider = str_or(json_object_get(c, "provider"), "?");
    if (provider_unavailable(c) && json_object_get(reasons, provider) == NULL) {
      json_object_set_new(reasons, provider, json_string(str_or(json_object_get(c, "error"), "?")));
    }
  }
}

static void headline_ratios(struct tb_strbuf *b, const json_t *cases, const char *bullet);

/* What a reader must know before any table: the counts, an incomplete run,
 * providers that did not start, every hazard raised and background load. */
static void summary_lines(struct tb_strbuf *b, const json_t *doc, const char *bullet,
                          bool with_counts) {
  const json_t *run = json_object_get(doc, "run"), *cases = json_object_get(doc, "cases");
  size_t total = json_array_size(cases);
  long long valid = (long long)json_integer_value(json_object_get(run, "valid_cases"));
  if (with_counts) {
    tb_strbuf_printf(b, "%s%zu case(s), %lld valid%s\n", bullet, total, valid,
                     valid == (long long)total ? "" : " (see Errors)");
  }
  if (json_is_false(json_object_get(run, "complete"))) {
    char why[1200];
    tb_strbuf_printf(b, "%sINCOMPLETE run: %s\n", bullet,
                     md(str_or(json_object_get(run, "error"), "stopped early"), why, sizeof why));
  }
  json_t *reasons = json_object(), *counts = json_object();
  unavailable_providers(cases, reasons);
  const char *key;
  json_t *value;
  json_object_foreach(reasons, key, value) {
    char why[1200]; /* the reason names the provider */
    tb_strbuf_printf(b, "%s%s\n", bullet, md(json_string_value(value), why, sizeof why));
  }
  headline_ratios(b, cases, bullet);
  hazard_counts(cases, counts);
  json_object_foreach(counts, key, value) {
    char name[160];
    tb_strbuf_printf(b, "%shazard raised: %s in %lld case(s)\n", bullet, md(key, name, sizeof name),
                     (long long)json_integer_value(value));
  }
  char *load = background_load(doc);
  if (load != NULL && load[0] != '\0') {
    for (char *p = load; *p; ++p) { /* process names from the file: one line */
      *p = (*p == '\n' || *p == '\r') ? ' ' : *p;
    }
    tb_strbuf_printf(b, "%sbackground load: %s; timings may be disturbed\n", bullet, load);
  }
  free(load);
  json_decref(reasons);
  json_decref(counts);
}

static void markdown_header(struct tb_strbuf *b, const json_t *doc) {
  const json_t *run = json_object_get(doc, "run");
  const json_t *git = json_object_get(json_object_get(doc, "provenance"), "git");
  tb_strbuf_printf(b, "# tilebench results\n\n");
  tb_strbuf_printf(b, "- tool: tilebench %s, results schema %lld\n",
                   str_or(json_object_get(json_object_get(doc, "tool"), "version"), "?"),
                   (long long)json_integer_value(json_object_get(doc, "schema_version")));
  tb_strbuf_printf(b, "- command: `%s`\n", str_or(json_object_get(run, "command"), "?"));
  tb_strbuf_printf(b, "- started %s, finished %s\n",
                   str_or(json_object_get(run, "started_at"), "?"),
                   str_or(json_object_get(run, "finished_at"), "?"));
  tb_strbuf_printf(b, "- backend: %s; seed %lld\n", str_or(json_object_get(run, "backend"), "?"),
                   (long long)json_integer_value(json_object_get(run, "seed")));
  json_t *dirty = json_object_get(git, "dirty");
  tb_strbuf_printf(b, "- source: commit %s%s\n", str_or(json_object_get(git, "commit"), "unknown"),
                   json_is_true(dirty) ? " (dirty worktree)" : "");
  tb_strbuf_printf(b, "\n## Summary\n\n");
  summary_lines(b, doc, "- ", true);
  tb_strbuf_printf(b, "\n");
}

/* The per-call time bandwidth is computed from: GPU control when measured,
 * else host E2E throughput. */
static double bandwidth_basis_ns(const json_t *c) {
  double control = control_p50_ns(c, "throughput");
  return isnan(control) ? p50_ns(c, "throughput") : control;
}

static void fmt_fraction(char *buf, size_t size, const json_t *c, double ceiling) {
  double ns = control_p50_ns(c, "throughput");
  double bytes = json_number_value(json_object_get(c, "minimal_bytes"));
  if (isnan(ns) || isnan(ceiling) || ns <= 0.0) {
    snprintf(buf, size, "n/a");
  } else {
    snprintf(buf, size, "%.2f", bytes / ns / ceiling);
  }
}

static const char *cache_state(const json_t *c) {
  const char *keys[] = {"provider_details", "buffers", "state"};
  json_t *v = at(c, keys, 3);
  return json_is_string(v) ? json_string_value(v) : "n/a";
}

static void markdown_cases(struct tb_strbuf *b, const json_t *cases, double ceiling) {
  tb_strbuf_printf(b, "## Timings\n\n");
  tb_strbuf_printf(b, "Host E2E: CLOCK_MONOTONIC around launch(es) and the final synchronisation. "
                      "GPU control: CUDA events on the stream around the same calls, no per-kernel "
                      "instrumentation. Throughput = a batch's time / calls; latency = one call. "
                      "GB/s = minimal bytes (inputs read once, output written once) / GPU control "
                      "throughput p50 (host E2E on the CPU backend); \"of copy\" divides it by "
                      "the device copy ceiling measured in this run. Cache: cold = inputs rotate "
                      "over buffer sets totalling at least 4x L2.\n\n");
  tb_strbuf_printf(b, "| case | valid | host thr p50 (µs/call) | host lat p50 (µs) | GPU control "
                      "thr p50 (µs/call) | GPU control lat p50 (µs) | GB/s | of copy | cache | "
                      "max abs error | max rel error |\n");
  tb_strbuf_printf(b, "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|\n");
  size_t i;
  json_t *c;
  json_array_foreach(cases, i, c) {
    char thr[32], lat[32], cthr[32], clat[32], gbps[32], frac[32], abs_err[32], rel_err[32];
    fmt_us(thr, sizeof thr, p50_ns(c, "throughput"));
    fmt_us(lat, sizeof lat, p50_ns(c, "latency"));
    fmt_us(cthr, sizeof cthr, control_p50_ns(c, "throughput"));
    fmt_us(clat, sizeof clat, control_p50_ns(c, "latency"));
    fmt_gbps(gbps, sizeof gbps, c, bandwidth_basis_ns(c));
    fmt_fraction(frac, sizeof frac, c, ceiling);
    fmt_error(abs_err, sizeof abs_err, c, "max_abs_error");
    fmt_error(rel_err, sizeof rel_err, c, "max_rel_error");
    char id[512];
    tb_strbuf_printf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                     md(str_or(json_object_get(c, "id"), "?"), id, sizeof id),
                     json_is_true(json_object_get(c, "valid")) ? "yes" : "**NO**", thr, lat, cthr,
                     clat, gbps, frac, cache_state(c), abs_err, rel_err);
  }
  tb_strbuf_printf(b, "\n");
}

/* TFLOP/s of a gemm case: 2mnk over the time per call that bandwidth uses
 * (GPU control, else host E2E); "n/a" without a time. */
static void fmt_tflops(char *buf, size_t size, const json_t *c) {
  double flops = 2.0 * json_number_value(json_object_get(c, "m")) *
                 json_number_value(json_object_get(c, "n")) *
                 json_number_value(json_object_get(c, "k"));
  double ns = bandwidth_basis_ns(c);
  snprintf(buf, size, isnan(ns) || ns <= 0.0 ? "n/a" : "%.2f", flops / ns / 1e3);
}

/* gemm records carry the realization their products were computed in. */
static bool is_gemm_case(const json_t *c) {
  return json_is_string(json_object_get(c, "realization"));
}

/* gemm is judged by arithmetic, not bytes: TFLOP/s = 2mnk / time per call,
 * with the precision every number was computed at. */
static void markdown_gemm(struct tb_strbuf *b, const json_t *cases) {
  size_t i, shown = 0;
  json_t *c;
  json_array_foreach(cases, i, c) {
    if (!is_gemm_case(c)) {
      continue;
    }
    if (shown++ == 0) {
      tb_strbuf_printf(b, "## GEMM\n\n"
                          "TFLOP/s = 2·m·n·k / GPU control throughput p50 (host E2E on the CPU "
                          "backend). Precision: fp32 (CUDA cores, or cuBLAS/torch without TF32), "
                          "tf32 (operands rounded to TF32 on the tensor cores; TF32 tolerance), "
                          "3xTF32 (tensor cores with an error-compensated split; fp32 "
                          "tolerance).\n\n"
                          "| case | precision | valid | time p50 (µs/call) | TFLOP/s | GPU control "
                          "lat p50 (µs) | max abs error | atol |\n"
                          "|---|---|---|---:|---:|---:|---:|---:|\n");
    }
    char time[32], rate[32], lat[32], err[32], atol[32];
    fmt_us(time, sizeof time, bandwidth_basis_ns(c));
    fmt_us(lat, sizeof lat, control_p50_ns(c, "latency"));
    fmt_tflops(rate, sizeof rate, c);
    fmt_error(err, sizeof err, c, "max_abs_error");
    fmt_error(atol, sizeof atol, c, "atol");
    char id[512], precision[64];
    tb_strbuf_printf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
                     md(str_or(json_object_get(c, "id"), "?"), id, sizeof id),
                     md(str_or(json_object_get(c, "precision"), "?"), precision, sizeof precision),
                     json_is_true(json_object_get(c, "valid")) ? "yes" : "**NO**", time, rate, lat,
                     err, atol);
  }
  if (shown > 0) {
    tb_strbuf_printf(b, "\n");
  }
}

/* The probe, apart and labelled: instrumented times are a diagnostic. */
static void markdown_probe(struct tb_strbuf *b, const json_t *cases) {
  size_t i, shown = 0;
  json_t *c;
  json_array_foreach(cases, i, c) {
    const json_t *thr = at(c, (const char *const[]){"device", "throughput"}, 2);
    if (thr == NULL) {
      continue;
    }
    if (shown++ == 0) {
      tb_strbuf_printf(b,
                       "## Probe (diagnostic, instrumented by CUPTI)\n\n"
                       "Kernel time is the sum of CUPTI kernel intervals per call. "
                       "probe/control is the median over samples of probe_i / control_i "
                       "(min, max); outside [0.95, 1.05] the probe perturbed what it measured.\n\n"
                       "| case | kernel time p50 (µs/call) | probe/control median [min, max] | "
                       "kernels/sample | flags |\n|---|---:|---|---:|---|\n");
    }
    char kernel[32];
    fmt_us(kernel, sizeof kernel,
           number_at(thr, (const char *const[]){"probe", "kernel_per_call_summary_ns", "p50"}, 3));
    const json_t *rs = json_object_get(thr, "probe_over_control_summary");
    json_t *kernels = at(thr, (const char *const[]){"probe", "kernels"}, 2);
    struct tb_strbuf flags = {0};
    size_t f;
    json_t *flag;
    json_array_foreach(at(c, (const char *const[]){"device", "flags"}, 2), f, flag) {
      char head[64], escaped[160];
      flag_head(flag, head, sizeof head);
      tb_strbuf_printf(&flags, "%s%s", f ? "; " : "", md(head, escaped, sizeof escaped));
    }
    char *flag_text = tb_strbuf_take(&flags);
    char id[512];
    tb_strbuf_printf(b, "| %s | %s | %.3f [%.3f, %.3f] | %lld | %s |\n",
                     md(str_or(json_object_get(c, "id"), "?"), id, sizeof id), kernel,
                     json_number_value(json_object_get(rs, "median")),
                     json_number_value(json_object_get(rs, "min")),
                     json_number_value(json_object_get(rs, "max")),
                     (long long)json_integer_value(json_array_get(kernels, 0)),
                     flag_text && flag_text[0] ? flag_text : "none");
    free(flag_text);
  }
  if (shown > 0) {
    tb_strbuf_printf(b, "\n");
  }
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
      char id[512], text[1200];
      tb_strbuf_printf(b, "- %s: %s\n", md(str_or(json_object_get(c, "id"), "?"), id, sizeof id),
                       md(str_or(json_object_get(c, "error"), "?"), text, sizeof text));
    }
  }
  if (shown > 0) {
    tb_strbuf_printf(b, "\n");
  }
  /* Device timing absence is stated, never hidden. */
  json_t *first = json_array_get(cases, 0);
  const char *why =
      first ? json_string_value(json_object_get(first, "device_unavailable_reason")) : NULL;
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

/* Whether two cases agree on `key`, both lacking it included. */
static bool same_field(const json_t *a, const json_t *b, const char *key) {
  const json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
  return (x == NULL && y == NULL) || (x != NULL && y != NULL && json_equal(x, y));
}

/* The same computation: op, shape (k too), input view and, for gemm, the
 * realization (so precisions are never mixed). */
static bool same_computation(const json_t *a, const json_t *b) {
  return same_field(a, b, "op") && same_field(a, b, "m") && same_field(a, b, "n") &&
         same_field(a, b, "k") && same_field(a, b, "realization") &&
         json_equal(json_object_get(json_object_get(a, "input_view"), "kind"),
                    json_object_get(json_object_get(b, "input_view"), "kind"));
}

static bool is_framework(const char *provider) {
  return strncmp(provider, "torch", 5) == 0 || strcmp(provider, "cublas") == 0;
}

/* Native / frameworks (torch, torch-compile, cublas) per case (the same
 * computation; the native automatic variant): ratios of p50s, < 1 when
 * native is faster. A single run's ratio is not a verdict: replays give
 * ranges. */
/* The native (automatic variant) and framework records of the same
 * computation in one run, one pair per framework and case. */
struct pair {
  const json_t *native, *framework;
};

static size_t native_pairs(const json_t *cases, struct pair *pairs, size_t most) {
  size_t i, j, count = 0;
  json_t *n, *t;
  json_array_foreach(cases, i, n) {
    const char *provider = str_or(json_object_get(n, "provider"), "");
    json_t *variant = json_object_get(n, "variant");
    if (strcmp(provider, "native") != 0 || json_object_get(n, "round") ||
        (json_is_string(variant) && strcmp(json_string_value(variant), "automatic") != 0)) {
      continue;
    }
    json_array_foreach(cases, j, t) {
      const char *other = str_or(json_object_get(t, "provider"), "");
      if (is_framework(other) && !json_object_get(t, "round") && !provider_unavailable(t) &&
          same_computation(n, t) && count < most) {
        pairs[count++] = (struct pair){n, t};
      }
    }
  }
  return count;
}

#define TB_REPORT_MAX_PAIRS 4096

static void markdown_ratios(struct tb_strbuf *b, const json_t *cases) {
  static struct pair pairs[TB_REPORT_MAX_PAIRS];
  size_t count = native_pairs(cases, pairs, TB_REPORT_MAX_PAIRS);
  if (count == 0) {
    return;
  }
  tb_strbuf_printf(b, "## Native / frameworks (one run: ratios of p50s, < 1 = native faster)\n\n"
                      "| case | vs | GPU control throughput | host throughput | host latency |\n"
                      "|---|---|---:|---:|---:|\n");
  for (size_t k = 0; k < count; ++k) {
    const json_t *n = pairs[k].native, *t = pairs[k].framework;
    char g[32], h[32], l[32];
    double gn = control_p50_ns(n, "throughput"), gt = control_p50_ns(t, "throughput");
    snprintf(g, sizeof g, isnan(gn / gt) ? "n/a" : "%.3f", gn / gt);
    snprintf(h, sizeof h, "%.3f", p50_ns(n, "throughput") / p50_ns(t, "throughput"));
    snprintf(l, sizeof l, "%.3f", p50_ns(n, "latency") / p50_ns(t, "latency"));
    char id[512], vs[64];
    tb_strbuf_printf(b, "| %s | %s | %s | %s | %s |\n",
                     md(str_or(json_object_get(n, "id"), "?"), id, sizeof id),
                     md(str_or(json_object_get(t, "provider"), "?"), vs, sizeof vs), g, h, l);
  }
  tb_strbuf_printf(b, "\n");
}

/* Per framework: the median [min, max] over cases of native / framework
 * throughput p50 (GPU control where both have it, else host E2E). */
static void headline_ratios(struct tb_strbuf *b, const json_t *cases, const char *bullet) {
  static struct pair pairs[TB_REPORT_MAX_PAIRS];
  static double ratios[TB_REPORT_MAX_PAIRS];
  size_t count = native_pairs(cases, pairs, TB_REPORT_MAX_PAIRS);
  static const char *const frameworks[] = {"torch", "torch-compile", "cublas"};
  for (size_t f = 0; f < sizeof frameworks / sizeof frameworks[0]; ++f) {
    size_t n = 0, gpu = 0;
    for (size_t k = 0; k < count; ++k) {
      if (strcmp(str_or(json_object_get(pairs[k].framework, "provider"), ""), frameworks[f]) != 0) {
        continue;
      }
      double gn = control_p50_ns(pairs[k].native, "throughput");
      double gt = control_p50_ns(pairs[k].framework, "throughput");
      int device = !isnan(gn) && !isnan(gt);
      double ratio =
          device ? gn / gt
                 : p50_ns(pairs[k].native, "throughput") / p50_ns(pairs[k].framework, "throughput");
      if (isfinite(ratio)) {
        ratios[n++] = ratio;
        gpu += device;
      }
    }
    if (n > 0) {
      struct tb_summary r = tb_summarize(ratios, n);
      tb_strbuf_printf(b,
                       "%snative / %s throughput: median %.3f [%.3f, %.3f] over %zu case(s) (%s; "
                       "< 1 = native faster)\n",
                       bullet, frameworks[f], r.p50, r.min, r.max, n,
                       gpu == n ? "GPU control" : "host E2E where no GPU");
    }
  }
}

/* Native vs frameworks in a replay: ratio_r = native_r / framework_r. */
static void markdown_replay_versus(struct tb_strbuf *b, const json_t *replay) {
  const json_t *counts = json_object_get(replay, "native_over_framework_counts");
  if (json_object_size(counts) == 0) {
    return;
  }
  tb_strbuf_printf(b, "### Native vs frameworks (ratio_r = native_r / framework_r; < 1 = native "
                      "faster), GPU control throughput, median [min, max]\n\n"
                      "| case | framework | variant | ratio |\n|---|---|---|---|\n");
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(replay, "cases"), i, c) {
    const char *provider;
    json_t *per_provider;
    json_object_foreach(json_object_get(c, "native_over_framework"), provider, per_provider) {
      const char *variant;
      json_t *metrics;
      json_object_foreach(per_provider, variant, metrics) {
        const json_t *m = json_object_get(metrics, "gpu_throughput");
        const char *withheld = json_string_value(json_object_get(m, "withheld"));
        char text[160];
        if (withheld != NULL) {
          snprintf(text, sizeof text, "withheld: %s", withheld);
        } else {
          snprintf(text, sizeof text, "%.3f [%.3f, %.3f] %s",
                   json_number_value(json_object_get(m, "median")),
                   json_number_value(json_object_get(m, "min")),
                   json_number_value(json_object_get(m, "max")),
                   str_or(json_object_get(m, "verdict"), "?"));
        }
        char name[512], who[64], which[64];
        tb_strbuf_printf(b, "| %s | %s | %s | %s |\n",
                         md(str_or(json_object_get(c, "case"), "?"), name, sizeof name),
                         md(provider, who, sizeof who), md(variant, which, sizeof which), text);
      }
    }
  }
  tb_strbuf_printf(b, "\n");
}

/* Replay verdicts: every figure is a range over rounds, never a median alone. */
static void markdown_replay(struct tb_strbuf *b, const json_t *replay) {
  if (replay == NULL) {
    return;
  }
  const char *metrics[] = {"gpu_throughput", "gpu_latency", "host_throughput", "host_latency"};
  tb_strbuf_printf(b,
                   "## Replay: %s (reference) vs %s (candidate), %lld rounds\n\n"
                   "gain_r = reference_r / candidate_r from each round's p50s; > 1 means the "
                   "candidate was faster. Shown as median [min, max] over rounds and a verdict "
                   "from the range. A metric is withheld when any round lacks its pair.\n\n"
                   "| case | model favours candidate | GPU throughput | GPU latency | host "
                   "throughput | host latency |\n|---|---|---|---|---|---|\n",
                   str_or(json_object_get(replay, "reference"), "?"),
                   str_or(json_object_get(replay, "candidate"), "?"),
                   (long long)json_integer_value(json_object_get(replay, "rounds")));
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(replay, "cases"), i, c) {
    json_t *predicted = json_object_get(c, "model_predicts_candidate_better");
    char name[512];
    tb_strbuf_printf(b, "| %s | %s |",
                     md(str_or(json_object_get(c, "case"), "?"), name, sizeof name),
                     json_is_null(predicted)   ? "n/a"
                     : json_is_true(predicted) ? "yes"
                                               : "no");
    for (int m = 0; m < 4; ++m) {
      const json_t *mj = json_object_get(json_object_get(c, "metrics"), metrics[m]);
      const char *withheld = json_string_value(json_object_get(mj, "withheld"));
      if (withheld != NULL) {
        tb_strbuf_printf(b, " withheld: %s |", withheld);
      } else {
        tb_strbuf_printf(b, " %.3f [%.3f, %.3f] %s |",
                         json_number_value(json_object_get(mj, "median")),
                         json_number_value(json_object_get(mj, "min")),
                         json_number_value(json_object_get(mj, "max")),
                         str_or(json_object_get(mj, "verdict"), "?"));
      }
    }
    tb_strbuf_printf(b, "\n");
  }
  tb_strbuf_printf(b,
                   "\n| metric | cases | withheld | median > 1 | faster in all pairs | slower in "
                   "all pairs |\n|---|---:|---:|---:|---:|---:|\n");
  for (int m = 0; m < 4; ++m) {
    const json_t *k = json_object_get(json_object_get(replay, "counts"), metrics[m]);
    tb_strbuf_printf(b, "| %s | %lld | %lld | %lld | %lld | %lld |\n", metrics[m],
                     (long long)json_integer_value(json_object_get(k, "cases")),
                     (long long)json_integer_value(json_object_get(k, "withheld")),
                     (long long)json_integer_value(json_object_get(k, "positive_median")),
                     (long long)json_integer_value(json_object_get(k, "all_pairs_positive")),
                     (long long)json_integer_value(json_object_get(k, "all_pairs_negative")));
  }
  tb_strbuf_printf(
      b, "\nThe cost model predicted the candidate better in %lld case(s).\n\n",
      (long long)json_integer_value(json_object_get(replay, "model_predicts_candidate_better")));
  markdown_replay_versus(b, replay);
}

char *tb_report_markdown(const json_t *doc, struct tb_error *err) {
  const json_t *cases = json_object_get(doc, "cases");
  if (!json_is_array(cases)) {
    tb_fail(err, TB_ERR_INPUT, "results document has no 'cases' array");
    return NULL;
  }
  struct tb_strbuf b = {0};
  markdown_header(&b, doc);
  double ceiling = ceiling_gbps(doc);
  if (!isnan(ceiling)) {
    tb_strbuf_printf(&b,
                     "Device copy ceiling (this run, 1 GiB device-to-device, read + write "
                     "bytes): **%.0f GB/s**.\n\n",
                     ceiling);
  }
  markdown_replay(&b, json_object_get(doc, "replay"));
  markdown_ratios(&b, cases);
  markdown_cases(&b, cases, ceiling);
  markdown_gemm(&b, cases);
  markdown_probe(&b, cases);
  markdown_problems(&b, cases);
  markdown_load(&b, doc);
  char *text = tb_strbuf_take(&b);
  if (text == NULL) {
    tb_fail(err, TB_ERR_SYSTEM, "out of memory building the report");
  }
  return text;
}

/* gemm's own figure below the table: TFLOP/s at the stated precision. */
static void terminal_gemm(struct tb_strbuf *b, const json_t *cases) {
  size_t i, shown = 0;
  json_t *c;
  json_array_foreach(cases, i, c) {
    if (!is_gemm_case(c) || provider_unavailable(c)) {
      continue;
    }
    if (shown++ == 0) {
      tb_strbuf_printf(b, "\n%-44s %-20s %9s\n", "gemm case", "precision", "TFLOP/s");
    }
    char rate[32];
    fmt_tflops(rate, sizeof rate, c);
    tb_strbuf_printf(b, "%-44s %-20s %9s\n", str_or(json_object_get(c, "id"), "?"),
                     str_or(json_object_get(c, "precision"), "?"), rate);
  }
}

/* printf's widths count bytes: pad by the characters a terminal shows
 * (UTF-8 continuation bytes take no column), right-aligned unless left. */
static void cell(struct tb_strbuf *b, const char *text, int width, bool left) {
  int shown = 0;
  for (const char *p = text; *p; ++p) {
    shown += ((unsigned char)*p & 0xC0) != 0x80;
  }
  int pad = width > shown ? width - shown : 0;
  tb_strbuf_printf(b, "%*s%s%*s", left ? 0 : pad, "", text, left ? pad : 0, "");
}

static void table_row(struct tb_strbuf *b, const char *const *cells) {
  static const int widths[] = {44, 5, 12, 12, 12, 8, 7};
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) {
    if (i > 0) {
      tb_strbuf_printf(b, " ");
    }
    cell(b, cells[i], widths[i], i == 0);
  }
  tb_strbuf_printf(b, "\n");
}

char *tb_report_terminal_table(const json_t *doc, struct tb_error *err) {
  const json_t *cases = json_object_get(doc, "cases");
  if (!json_is_array(cases)) {
    tb_fail(err, TB_ERR_INPUT, "results document has no 'cases' array");
    return NULL;
  }
  struct tb_strbuf b = {0};
  table_row(&b, (const char *const[]){"case", "valid", "host thr µs", "host lat µs", "GPU thr µs",
                                      "GB/s", "of copy"});
  double ceiling = ceiling_gbps(doc);
  size_t i;
  json_t *c;
  json_array_foreach(cases, i, c) {
    if (provider_unavailable(c)) { /* named once in the summary below, with its reason */
      continue;
    }
    char thr[32], lat[32], cthr[32], gbps[32], frac[32];
    fmt_us(thr, sizeof thr, p50_ns(c, "throughput"));
    fmt_us(lat, sizeof lat, p50_ns(c, "latency"));
    fmt_us(cthr, sizeof cthr, control_p50_ns(c, "throughput"));
    fmt_gbps(gbps, sizeof gbps, c, bandwidth_basis_ns(c));
    fmt_fraction(frac, sizeof frac, c, ceiling);
    table_row(&b, (const char *const[]){str_or(json_object_get(c, "id"), "?"),
                                        json_is_true(json_object_get(c, "valid")) ? "yes" : "NO",
                                        thr, lat, cthr, gbps, frac});
  }
  terminal_gemm(&b, cases);
  struct tb_strbuf summary = {0}; /* set apart by a blank line when there is any */
  summary_lines(&summary, doc, "tilebench: ", false);
  char *lines = tb_strbuf_take(&summary);
  if (lines != NULL && lines[0] != '\0') {
    tb_strbuf_printf(&b, "\n%s", lines);
  }
  free(lines);
  char *text = tb_strbuf_take(&b);
  if (text == NULL) {
    tb_fail(err, TB_ERR_SYSTEM, "out of memory building the table");
  }
  return text;
}
