#include "report/format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Text for one Markdown table cell or list item: a '|' would end the cell
 * and a line break the row, so a name from a foreign results file is
 * escaped. Returns buf. */
const char *tb_md(const char *text, char *buf, size_t size) {
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

const char *tb_or(const char *text, const char *fallback) {
  return text != NULL ? text : fallback;
}

void tb_fmt_us(char *buf, size_t size, double ns) {
  if (isnan(ns)) {
    snprintf(buf, size, "n/a");
  } else {
    snprintf(buf, size, "%.3f", ns / 1e3);
  }
}

void tb_fmt_gbps(char *buf, size_t size, const struct tb_model_case *c, double ns) {
  if (isnan(ns) || ns <= 0.0) {
    snprintf(buf, size, "n/a");
  } else {
    snprintf(buf, size, "%.1f", c->minimal_bytes / ns); /* bytes per ns = GB/s */
  }
}

void tb_fmt_fraction(char *buf, size_t size, const struct tb_model_case *c, double ceiling) {
  double ns = c->control_throughput.p50_ns;
  if (isnan(ns) || isnan(ceiling) || ns <= 0.0) {
    snprintf(buf, size, "n/a");
  } else {
    snprintf(buf, size, "%.2f", c->minimal_bytes / ns / ceiling);
  }
}

void tb_fmt_error(char *buf, size_t size, const struct tb_model_case *c, double value) {
  if (!isnan(value)) {
    snprintf(buf, size, "%.2e", value);
  } else {
    snprintf(buf, size, c->has_validation ? "inf/NaN" : "n/a");
  }
}

double tb_bandwidth_basis_ns(const struct tb_model_case *c) {
  double control = c->control_throughput.p50_ns;
  return isnan(control) ? c->host_throughput.p50_ns : control;
}

void tb_fmt_tflops(char *buf, size_t size, const struct tb_model_case *c) {
  double flops = 2.0 * (double)c->m * (double)c->n * (double)c->k;
  double ns = tb_bandwidth_basis_ns(c);
  snprintf(buf, size, isnan(ns) || ns <= 0.0 ? "n/a" : "%.2f", flops / ns / 1e3);
}

bool tb_provider_unavailable(const struct tb_model_case *c) {
  return strcmp(tb_or(c->backend, ""), "none") == 0;
}

bool tb_is_gemm_case(const struct tb_model_case *c) {
  return c->realization != NULL;
}

void tb_flag_head(const char *flag, char *head, size_t size) {
  snprintf(head, size, "%s", tb_or(flag, "?"));
  head[strcspn(head, ":")] = '\0';
}

void tb_fmt_replay_figure(char *buf, size_t size, const struct tb_model_replay_metric *f) {
  if (f->withheld != NULL) {
    snprintf(buf, size, "withheld: %s", f->withheld);
    return;
  }
  int used = snprintf(buf, size, "%.3f [%.3f, %.3f] %s", f->median, f->min, f->max,
                      tb_or(f->verdict, "?"));
  if (f->decision != NULL && used > 0 && (size_t)used < size) {
    snprintf(buf + used, size - (size_t)used, "; %.1f%% interval [%.3f, %.3f], band ±%.1f%%: %s",
             100.0 * f->coverage, f->lo, f->hi, 100.0 * f->band, f->decision);
  }
}
