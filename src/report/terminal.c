/* The compact table printed at the end of `run`, from the model alone. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "report/format.h"
#include "report/report.h"
#include "report/summary.h"

/* gemm's own figure below the table: TFLOP/s at the stated precision. */
static void terminal_gemm(struct tb_strbuf *b, const struct tb_results_model *m) {
  size_t shown = 0;
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    if (!tb_is_gemm_case(c) || tb_provider_unavailable(c)) {
      continue;
    }
    if (shown++ == 0) {
      tb_strbuf_printf(b, "\n%-44s %-20s %9s\n", "gemm case", "precision", "TFLOP/s");
    }
    char rate[32];
    tb_fmt_tflops(rate, sizeof rate, c);
    tb_strbuf_printf(b, "%-44s %-20s %9s\n", c->id, tb_or(c->precision, "?"), rate);
  }
}

static const char *const replay_metric_labels[TB_MODEL_REPLAY_METRICS] = {
    "GPU throughput", "GPU latency", "host throughput", "host latency"};

/* Both GPU metrics withheld for one reason (the CPU backend): one line. */
static bool gpu_withheld_alike(const struct tb_model_replay_case *c) {
  const char *a = c->metrics[0].withheld, *b = c->metrics[1].withheld;
  return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* A replay's figures per case below the table: the gain range and its
 * verdict, the interval of the median gain and its decision. */
static void terminal_replay(struct tb_strbuf *b, const struct tb_model_replay *r) {
  if (!r->present) {
    return;
  }
  tb_strbuf_printf(b,
                   "\nreplay: gain = %s / %s per round (> 1: the candidate faster), median [min, "
                   "max] over %lld rounds and the range's verdict; the interval of the median, "
                   "the band and the decision\n",
                   tb_or(r->reference, "?"), tb_or(r->candidate, "?"), r->rounds);
  for (size_t i = 0; i < r->case_count; ++i) {
    const struct tb_model_replay_case *c = &r->cases[i];
    tb_strbuf_printf(b, "%s\n", tb_or(c->name, "?"));
    int first = 0;
    if (gpu_withheld_alike(c)) {
      tb_strbuf_printf(b, "  %-16s %s\n", "GPU", c->metrics[0].withheld);
      first = 2;
    }
    for (int m = first; m < TB_MODEL_REPLAY_METRICS; ++m) {
      char text[256];
      tb_fmt_replay_figure(text, sizeof text, &c->metrics[m]);
      tb_strbuf_printf(b, "  %-16s %s\n", replay_metric_labels[m], text);
    }
    for (size_t v = 0; v < c->versus_count; ++v) {
      const struct tb_model_versus *x = &c->versus[v];
      char text[256];
      tb_fmt_replay_figure(text, sizeof text, x->has_per_call ? &x->per_call : &x->gpu_throughput);
      tb_strbuf_printf(b, "  native / %s (%s), per call (%s): %s\n", tb_or(x->provider, "?"),
                       tb_or(x->variant, "?"),
                       x->has_per_call ? tb_or(x->per_call_scope, "-") : "GPU", text);
    }
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

char *tb_report_terminal_table(const struct tb_results_model *m, struct tb_error *err) {
  struct tb_strbuf b = {0};
  table_row(&b, (const char *const[]){"case", "valid", "host thr µs", "host lat µs", "GPU thr µs",
                                      "GB/s", "of copy"});
  for (size_t i = 0; i < m->case_count; ++i) {
    const struct tb_model_case *c = &m->cases[i];
    if (tb_provider_unavailable(c)) { /* named once in the summary below, with its reason */
      continue;
    }
    char thr[32], lat[32], cthr[32], gbps[32], frac[32];
    tb_fmt_us(thr, sizeof thr, c->host_throughput.p50_ns);
    tb_fmt_us(lat, sizeof lat, c->host_latency.p50_ns);
    tb_fmt_us(cthr, sizeof cthr, c->control_throughput.p50_ns);
    tb_fmt_gbps(gbps, sizeof gbps, c, tb_bandwidth_basis_ns(c));
    tb_fmt_fraction(frac, sizeof frac, c, m->copy_ceiling_gbps);
    table_row(&b,
              (const char *const[]){c->id, c->valid ? "yes" : "NO", thr, lat, cthr, gbps, frac});
  }
  terminal_gemm(&b, m);
  terminal_replay(&b, &m->replay);
  struct tb_strbuf summary = {0}; /* set apart by a blank line when there is any */
  tb_report_summary_lines(&summary, m, "tilebench: ", false);
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
