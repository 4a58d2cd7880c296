/* results.md, from the model of a results file alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "report/format.h"
#include "report/native_pairs.h"
#include "report/report.h"
#include "report/summary.h"
#include "stats/interval.h"
#include "stats/stats.h"

/* Each user kernel library the run measured, once: the file name the
 * user knows it by and the digest that says which build it was. */
static void user_libraries(struct tb_strbuf *b, const struct tb_results_model *m) {
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    bool first = c->user_library != NULL && c->user_sha256 != NULL;
    for (size_t k = 0; k < i && first; ++k) {
      const struct tb_model_case *e = &m->cases[k];
      first = e->user_library == NULL || e->user_sha256 == NULL ||
              strcmp(e->user_library, c->user_library) != 0 ||
              strcmp(e->user_sha256, c->user_sha256) != 0;
    }
    if (first) {
      char name[512], digest[160], provider[64];
      tb_strbuf_printf(b, "- user kernel (provider %s): %s sha256:%s\n",
                       tb_md(c->provider, provider, sizeof provider),
                       tb_md(c->user_library, name, sizeof name),
                       tb_md(c->user_sha256, digest, sizeof digest));
    }
  }
}

static void markdown_header(struct tb_strbuf *b, const struct tb_results_model *m) {
  tb_strbuf_printf(b, "# tilebench results\n\n");
  tb_strbuf_printf(b, "- tool: tilebench %s, results schema %lld\n", tb_or(m->tool_version, "?"),
                   m->schema_version);
  tb_strbuf_printf(b, "- command: `%s`\n", tb_or(m->command, "?"));
  tb_strbuf_printf(b, "- started %s, finished %s\n", tb_or(m->started_at, "?"),
                   tb_or(m->finished_at, "?"));
  tb_strbuf_printf(b, "- backend: %s; seed %lld\n", tb_or(m->backend, "?"), m->seed);
  if (m->shard_index >= 0) {
    tb_strbuf_printf(b,
                     "- shard %lld of %lld (0-based) of campaign %.12s: this shard's cases only\n",
                     m->shard_index, m->shard_count, tb_or(m->campaign_sha256, "?"));
  }
  if (m->merged_shards > 0) {
    tb_strbuf_printf(b, "- merged from %lld shard(s) of campaign %.12s (`run.merge`)\n",
                     m->merged_shards, tb_or(m->campaign_sha256, "?"));
  }
  tb_strbuf_printf(b, "- source: commit %s%s\n", tb_or(m->git_commit, "unknown"),
                   m->git_dirty ? " (dirty worktree)" : "");
  user_libraries(b, m);
  tb_strbuf_printf(b, "\n## Summary\n\n");
  tb_report_summary_lines(b, m, "- ", true);
  tb_strbuf_printf(b, "\n");
}

static void markdown_cases(struct tb_strbuf *b, const struct tb_results_model *m, double ceiling) {
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
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    char thr[32], lat[32], cthr[32], clat[32], gbps[32], frac[32], abs_err[32], rel_err[32];
    tb_fmt_us(thr, sizeof thr, c->host_throughput.p50_ns);
    tb_fmt_us(lat, sizeof lat, c->host_latency.p50_ns);
    tb_fmt_us(cthr, sizeof cthr, c->control_throughput.p50_ns);
    tb_fmt_us(clat, sizeof clat, c->control_latency.p50_ns);
    tb_fmt_gbps(gbps, sizeof gbps, c, tb_bandwidth_basis_ns(c));
    tb_fmt_fraction(frac, sizeof frac, c, ceiling);
    tb_fmt_error(abs_err, sizeof abs_err, c, c->max_abs_error);
    tb_fmt_error(rel_err, sizeof rel_err, c, c->max_rel_error);
    char id[512];
    tb_strbuf_printf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                     tb_md(c->id, id, sizeof id), c->valid ? "yes" : "**NO**", thr, lat, cthr, clat,
                     gbps, frac, tb_or(c->buffer_state, "n/a"), abs_err, rel_err);
  }
  tb_strbuf_printf(b, "\n");
}

/* The samples of the figure bandwidth uses (GPU control throughput when
 * measured, else host E2E throughput), or NULL when there are none. */
static const struct tb_model_scope *spread_scope(const struct tb_model_case *c, const char **name) {
  bool gpu = c->control_complete && c->control_throughput.count > 0;
  *name = gpu ? "GPU" : "host";
  const struct tb_model_scope *s = gpu ? &c->control_throughput : &c->host_throughput;
  return s->count > 0 ? s : NULL;
}

/* How far each case's samples spread: a p50 alone hides a noisy case. */
static void markdown_spread(struct tb_strbuf *b, const struct tb_results_model *m) {
  tb_strbuf_printf(b,
                   "## Spread\n\n"
                   "Per case, the throughput samples behind GB/s (GPU control when measured, "
                   "else host E2E): min, p50 and max per call, and the robust coefficient of "
                   "variation CV = 1.4826 × median absolute deviation / p50. **noisy** when "
                   "CV > %.0f %%: differences smaller than the case's own spread cannot be "
                   "resolved (`docs/method.md` §3.1).\n\n"
                   "| case | scope | samples | min (µs/call) | p50 (µs/call) | max (µs/call) | "
                   "CV | noise |\n|---|---|---:|---:|---:|---:|---:|---|\n",
                   100.0 * TB_NOISY_CV);
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    const char *scope;
    const struct tb_model_scope *s = spread_scope(c, &scope);
    if (s == NULL) {
      continue;
    }
    struct tb_summary sum = tb_summarize(s->per_call_ns, s->count);
    double cv = tb_robust_cv(s->per_call_ns, s->count);
    char lo[32], mid[32], hi[32], id[512];
    tb_fmt_us(lo, sizeof lo, sum.min);
    tb_fmt_us(mid, sizeof mid, sum.p50);
    tb_fmt_us(hi, sizeof hi, sum.max);
    tb_strbuf_printf(b, "| %s | %s | %zu | %s | %s | %s | %.1f %% | %s |\n",
                     tb_md(c->id, id, sizeof id), scope, s->count, lo, mid, hi, 100.0 * cv,
                     cv > TB_NOISY_CV ? "**noisy**" : "");
  }
  tb_strbuf_printf(b, "\n");
}

/* One line of the Stopping section: a phase that ran the noise rule. */
static bool stopping_line(struct tb_strbuf *b, const char *id, const char *phase,
                          const struct tb_model_stopping *s) {
  if (s->rule == NULL || strcmp(s->rule, "noise") != 0) {
    return false;
  }
  char escaped_id[512], head[64], escaped[160];
  tb_flag_head(s->flag != NULL ? s->flag : "none", head, sizeof head);
  tb_strbuf_printf(b, "| %s | %s | %lld | %.3g | %.3g | %s | %s |\n",
                   tb_md(id, escaped_id, sizeof escaped_id), phase, s->taken, s->noise,
                   s->max_noise, tb_or(s->reason, "?"),
                   s->flag != NULL ? tb_md(head, escaped, sizeof escaped) : "none");
  return true;
}

/* How each case's phases stopped (docs/method.md §2.6): a line per case and
 * phase, shown when the run took the noise rule. */
static void markdown_stopping(struct tb_strbuf *b, const struct tb_results_model *m) {
  bool noise_rule = false;
  for (size_t i = 0; i < m->case_count && !noise_rule; ++i) {
    const char *rule = m->cases[i].host_stopping.rule;
    noise_rule = rule != NULL && strcmp(rule, "noise") == 0;
  }
  if (!noise_rule) {
    return;
  }
  tb_strbuf_printf(b, "## Stopping\n\n"
                      "Each phase's throughput samples were taken until their noise (1.4826 × "
                      "MAD / median; on the device phase, of the eager control) was at most the "
                      "bound, within the floors and ceilings of `run.measure.stopping` "
                      "(`docs/method.md` §2.6); latency took the same count. "
                      "**not_converged**: stopped by a ceiling with the noise above the "
                      "bound.\n\n"
                      "| case | phase | samples | noise | bound (--max-noise) | stopped by | "
                      "flags |\n|---|---|---:|---:|---:|---|---|\n");
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    stopping_line(b, c->id, "host throughput", &c->host_stopping);
    stopping_line(b, c->id, "device throughput (eager control)", &c->device_stopping);
  }
  tb_strbuf_printf(b, "\n");
}

/* gemm is judged by arithmetic, not bytes: TFLOP/s = 2mnk / time per call,
 * with the precision every number was computed at. */
static void markdown_gemm(struct tb_strbuf *b, const struct tb_results_model *m) {
  size_t shown = 0;
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    if (!tb_is_gemm_case(c)) {
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
    tb_fmt_us(time, sizeof time, tb_bandwidth_basis_ns(c));
    tb_fmt_us(lat, sizeof lat, c->control_latency.p50_ns);
    tb_fmt_tflops(rate, sizeof rate, c);
    tb_fmt_error(err, sizeof err, c, c->max_abs_error);
    tb_fmt_error(atol, sizeof atol, c, c->atol);
    char id[512], precision[64];
    tb_strbuf_printf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", tb_md(c->id, id, sizeof id),
                     tb_md(tb_or(c->precision, "?"), precision, sizeof precision),
                     c->valid ? "yes" : "**NO**", time, rate, lat, err, atol);
  }
  if (shown > 0) {
    tb_strbuf_printf(b, "\n");
  }
}

/* The hazard names of a case's flags, "; "-separated (the caller frees). */
static char *flag_heads(const struct tb_model_case *c) {
  struct tb_strbuf flags = {0};
  for (size_t f = 0; f < c->flag_count; ++f) {
    char head[64], escaped[160];
    tb_flag_head(c->flags[f], head, sizeof head);
    tb_strbuf_printf(&flags, "%s%s", f ? "; " : "", tb_md(head, escaped, sizeof escaped));
  }
  return tb_strbuf_take(&flags);
}

/* The probe, apart and labelled: instrumented times are a diagnostic. */
static void markdown_probe(struct tb_strbuf *b, const struct tb_results_model *m) {
  size_t shown = 0;
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    if (!c->probe.present) {
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
    tb_fmt_us(kernel, sizeof kernel, c->probe.kernel_p50_ns);
    char *flag_text = flag_heads(c);
    char id[512];
    tb_strbuf_printf(b, "| %s | %s | %.3f [%.3f, %.3f] | %lld | %s |\n",
                     tb_md(c->id, id, sizeof id), kernel, c->probe.ratio_median, c->probe.ratio_min,
                     c->probe.ratio_max, c->probe.first_sample_kernels,
                     flag_text && flag_text[0] ? flag_text : "none");
    free(flag_text);
  }
  if (shown > 0) {
    tb_strbuf_printf(b, "\n");
  }
}

static void markdown_problems(struct tb_strbuf *b, const struct tb_results_model *m) {
  size_t shown = 0;
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    if (c->error != NULL) {
      if (shown++ == 0) {
        tb_strbuf_printf(b, "## Errors\n\n");
      }
      char id[512], text[1200];
      tb_strbuf_printf(b, "- %s: %s\n", tb_md(c->id, id, sizeof id),
                       tb_md(c->error, text, sizeof text));
    }
  }
  if (shown > 0) {
    tb_strbuf_printf(b, "\n");
  }
  /* Device timing absence is stated, never hidden. */
  const char *why = m->case_count > 0 ? m->cases[0].device_unavailable_reason : NULL;
  if (why != NULL) {
    tb_strbuf_printf(b, "GPU timing not available: %s.\n\n", why);
  }
}

static void markdown_load(struct tb_strbuf *b, const struct tb_results_model *m) {
  tb_strbuf_printf(b, "## Environment\n\n");
  tb_strbuf_printf(b, "- host: %s, %s, %lld logical CPUs\n", tb_or(m->host_os, "?"),
                   tb_or(m->host_cpu_model, "?"), m->host_logical_cpus);
  for (int k = 0; k < 2; ++k) {
    const struct tb_model_background *snap = &m->background[k];
    tb_strbuf_printf(b, "- background load at %s: ", k == 0 ? "start" : "end");
    if (snap->count == 0) {
      tb_strbuf_printf(b, "no other process above %.0f%% of a CPU\n", snap->threshold_cpu_percent);
      continue;
    }
    for (size_t i = 0; i < snap->count; ++i) {
      const struct tb_model_process *p = &snap->processes[i];
      tb_strbuf_printf(b, "%s%s (pid %lld) %.0f%%", i ? ", " : "**", tb_or(p->name, "?"), p->pid,
                       p->cpu_percent);
    }
    tb_strbuf_printf(b, "** (timings may be disturbed)\n");
  }
}

/* Native / frameworks per case: ratios of p50s, < 1 when native is faster.
 * A single run's ratio is not a verdict: replays give ranges. */
static void markdown_ratios(struct tb_strbuf *b, const struct tb_results_model *m) {
  static struct tb_native_pair pairs[TB_REPORT_MAX_PAIRS];
  size_t count = tb_native_pairs(m, pairs, TB_REPORT_MAX_PAIRS);
  if (count == 0) {
    return;
  }
  /* Records with batch modes (schema 3) rank by the host-gap-free column
   * first; the eager GPU control stays beside it, labelled. */
  bool gap_free = false;
  for (size_t k = 0; k < count; ++k) {
    gap_free |= pairs[k].native->gap_free_mode != NULL && pairs[k].framework->gap_free_mode != NULL;
  }
  tb_strbuf_printf(b, "## Native / frameworks (one run: ratios of p50s, < 1 = native faster)\n\n");
  tb_strbuf_printf(b, gap_free ? "| case | vs | GPU host-gap-free throughput (scope) | GPU eager "
                                 "control throughput | host throughput | host latency |\n"
                                 "|---|---|---:|---:|---:|---:|\n"
                               : "| case | vs | GPU control throughput | host throughput | host "
                                 "latency |\n|---|---|---:|---:|---:|\n");
  for (size_t k = 0; k < count; ++k) {
    const struct tb_model_case *n = pairs[k].native, *t = pairs[k].framework;
    char f[64] = "", g[32], h[32], l[32];
    if (gap_free) {
      double fn = n->gap_free_throughput.p50_ns, ft = t->gap_free_throughput.p50_ns;
      bool same =
          n->gap_free_mode && t->gap_free_mode && !strcmp(n->gap_free_mode, t->gap_free_mode);
      if (isnan(fn / ft)) {
        snprintf(f, sizeof f, "n/a | ");
      } else {
        snprintf(f, sizeof f, "%.3f (%s) | ", fn / ft, same ? n->gap_free_mode : "scopes differ");
      }
    }
    double gn = n->control_throughput.p50_ns, gt = t->control_throughput.p50_ns;
    snprintf(g, sizeof g, isnan(gn / gt) ? "n/a" : "%.3f", gn / gt);
    snprintf(h, sizeof h, "%.3f", n->host_throughput.p50_ns / t->host_throughput.p50_ns);
    snprintf(l, sizeof l, "%.3f", n->host_latency.p50_ns / t->host_latency.p50_ns);
    char id[512], vs[64];
    tb_strbuf_printf(b, "| %s | %s | %s%s | %s | %s |\n", tb_md(n->id, id, sizeof id),
                     tb_md(t->provider, vs, sizeof vs), f, g, h, l);
  }
  tb_strbuf_printf(b, "\n");
}

/* Native vs frameworks in a replay: ratio_r = native_r / framework_r. */
static void markdown_replay_versus(struct tb_strbuf *b, const struct tb_model_replay *r) {
  if (!r->has_versus_counts) {
    return;
  }
  tb_strbuf_printf(b, "### Native vs frameworks (ratio_r = native_r / framework_r; < 1 = native "
                      "faster), per call in the best scope both measured (graph or held GPU "
                      "control, else eager, else host; GPU control throughput in records before "
                      "schema 4), median [min, max]\n\n"
                      "| case | framework | variant | scope | ratio |\n|---|---|---|---|---|\n");
  for (size_t i = 0; i < r->case_count; ++i) {
    const struct tb_model_replay_case *c = &r->cases[i];
    for (size_t v = 0; v < c->versus_count; ++v) {
      const struct tb_model_versus *x = &c->versus[v];
      char text[256];
      tb_fmt_replay_figure(text, sizeof text, x->has_per_call ? &x->per_call : &x->gpu_throughput);
      char name[512], who[64], which[64], scope[32];
      tb_strbuf_printf(
          b, "| %s | %s | %s | %s | %s |\n", tb_md(tb_or(c->name, "?"), name, sizeof name),
          tb_md(x->provider, who, sizeof who), tb_md(x->variant, which, sizeof which),
          tb_md(x->has_per_call ? tb_or(x->per_call_scope, "-") : "GPU", scope, sizeof scope),
          text);
    }
  }
  tb_strbuf_printf(b, "\n");
}

static const char *const replay_metric_names[TB_MODEL_REPLAY_METRICS] = {
    "gpu_throughput", "gpu_latency", "host_throughput", "host_latency"};

static void markdown_replay_cases(struct tb_strbuf *b, const struct tb_model_replay *r) {
  for (size_t i = 0; i < r->case_count; ++i) {
    const struct tb_model_replay_case *c = &r->cases[i];
    char name[512];
    tb_strbuf_printf(b, "| %s | %s |", tb_md(tb_or(c->name, "?"), name, sizeof name),
                     c->model_predicts < 0   ? "n/a"
                     : c->model_predicts > 0 ? "yes"
                                             : "no");
    for (int m = 0; m < TB_MODEL_REPLAY_METRICS; ++m) {
      char text[256];
      tb_fmt_replay_figure(text, sizeof text, &c->metrics[m]);
      tb_strbuf_printf(b, " %s |", text);
    }
    tb_strbuf_printf(b, "\n");
  }
}

/* Replay verdicts: every figure is a range over rounds, never a median alone. */
static void markdown_replay(struct tb_strbuf *b, const struct tb_model_replay *r) {
  if (!r->present) {
    return;
  }
  tb_strbuf_printf(b,
                   "## Replay: %s (reference) vs %s (candidate), %lld rounds\n\n"
                   "gain_r = reference_r / candidate_r from each round's p50s; > 1 means the "
                   "candidate was faster. Shown as median [min, max] over rounds and a verdict "
                   "from the range; then the interval of the median gain, its coverage, the "
                   "band ±max(2 %%, the variants' noise) and the decision (SAME, FASTER, SLOWER, "
                   "INCONCLUSIVE; docs/method.md §3.2). A metric is withheld when any round lacks "
                   "its pair.\n\n"
                   "| case | model favours candidate | GPU throughput | GPU latency | host "
                   "throughput | host latency |\n|---|---|---|---|---|---|\n",
                   tb_or(r->reference, "?"), tb_or(r->candidate, "?"), r->rounds);
  markdown_replay_cases(b, r);
  tb_strbuf_printf(b,
                   "\n| metric | cases | withheld | median > 1 | faster in all pairs | slower in "
                   "all pairs |\n|---|---:|---:|---:|---:|---:|\n");
  for (int m = 0; m < TB_MODEL_REPLAY_METRICS; ++m) {
    const struct tb_model_replay_counts *k = &r->counts[m];
    tb_strbuf_printf(b, "| %s | %lld | %lld | %lld | %lld | %lld |\n", replay_metric_names[m],
                     k->cases, k->withheld, k->positive_median, k->all_pairs_positive,
                     k->all_pairs_negative);
  }
  tb_strbuf_printf(b, "\nThe cost model predicted the candidate better in %lld case(s).\n\n",
                   r->model_predicts_candidate_better);
  markdown_replay_versus(b, r);
}

char *tb_report_markdown(const struct tb_results_model *m, struct tb_error *err) {
  struct tb_strbuf b = {0};
  markdown_header(&b, m);
  double ceiling = m->copy_ceiling_gbps;
  if (!isnan(ceiling)) {
    tb_strbuf_printf(&b,
                     "Device copy ceiling (this run, 1 GiB device-to-device, read + write "
                     "bytes): **%.0f GB/s**.\n\n",
                     ceiling);
  }
  markdown_replay(&b, &m->replay);
  markdown_ratios(&b, m);
  markdown_cases(&b, m, ceiling);
  markdown_spread(&b, m);
  markdown_stopping(&b, m);
  markdown_gemm(&b, m);
  markdown_probe(&b, m);
  markdown_problems(&b, m);
  markdown_load(&b, m);
  char *text = tb_strbuf_take(&b);
  if (text == NULL) {
    tb_fail(err, TB_ERR_SYSTEM, "out of memory building the report");
  }
  return text;
}
