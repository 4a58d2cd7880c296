/* What the Markdown report and the terminal table share: cell text, the
 * figures of one case, and which cases have figures at all. */
#ifndef TB_REPORT_FORMAT_H
#define TB_REPORT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "results/model.h"

/* Text for one Markdown table cell or list item: a '|' would end the cell
 * and a line break the row, so a name from a foreign results file is
 * escaped. Returns buf. */
const char *tb_md(const char *text, char *buf, size_t size);

/* text, or fallback when the file lacked it. */
const char *tb_or(const char *text, const char *fallback);

/* Microseconds with 3 decimals, or "n/a". */
void tb_fmt_us(char *buf, size_t size, double ns);

/* GB/s of the case's minimal bytes over ns per call, or "n/a". */
void tb_fmt_gbps(char *buf, size_t size, const struct tb_model_case *c, double ns);

/* The fraction of the copy ceiling the GPU control throughput reached, or "n/a". */
void tb_fmt_fraction(char *buf, size_t size, const struct tb_model_case *c, double ceiling);

/* A validation figure in %.2e; "inf/NaN" when validated without a finite
 * value, "n/a" when the record has no validation. */
void tb_fmt_error(char *buf, size_t size, const struct tb_model_case *c, double value);

/* TFLOP/s of a gemm case over the time bandwidth uses, or "n/a". */
void tb_fmt_tflops(char *buf, size_t size, const struct tb_model_case *c);

/* The per-call time bandwidth is computed from: GPU control when measured,
 * else host E2E throughput. */
double tb_bandwidth_basis_ns(const struct tb_model_case *c);

/* A case whose provider never started (PyTorch missing, torch.compile too
 * old): it has no figures, only the reason. */
bool tb_provider_unavailable(const struct tb_model_case *c);

/* gemm records carry the realization their products were computed in. */
bool tb_is_gemm_case(const struct tb_model_case *c);

/* One replay figure: "median [min, max] range-verdict", then from schema 4
 * "; 96.9% interval [lo, hi], band ±2.0%: DECISION"; or "withheld: why". */
void tb_fmt_replay_figure(char *buf, size_t size, const struct tb_model_replay_metric *f);

/* The hazard name of a flag: the text before its colon. */
void tb_flag_head(const char *flag, char *head, size_t size);

#endif
