#include "report/columns.h"

#include <math.h>

static struct tb_cell text(const char *s) {
  return (struct tb_cell){.kind = s != NULL ? TB_CELL_TEXT : TB_CELL_ABSENT, .text = s};
}

static struct tb_cell integer(long long v) {
  return (struct tb_cell){.kind = TB_CELL_INTEGER, .integer = v};
}

/* NaN (not measured, not recorded) is an absent cell, never a number. */
static struct tb_cell number(double v) {
  return (struct tb_cell){.kind = isfinite(v) ? TB_CELL_NUMBER : TB_CELL_ABSENT, .number = v};
}

static struct tb_cell id(const struct tb_report_row *r) {
  return text(r->c->id);
}
static struct tb_cell op(const struct tb_report_row *r) {
  return text(r->c->op);
}
static struct tb_cell m(const struct tb_report_row *r) {
  return integer(r->c->m);
}
static struct tb_cell n(const struct tb_report_row *r) {
  return integer(r->c->n);
}
static struct tb_cell view(const struct tb_report_row *r) {
  return text(r->c->view_kind);
}
static struct tb_cell provider(const struct tb_report_row *r) {
  return text(r->c->provider);
}
static struct tb_cell variant(const struct tb_report_row *r) {
  return text(r->c->variant);
}
static struct tb_cell scope(const struct tb_report_row *r) {
  return text(tb_row_scope_name(r->scope));
}
static struct tb_cell mode(const struct tb_report_row *r) {
  return text(r->mode);
}
static struct tb_cell p50(const struct tb_report_row *r) {
  return number(r->p50_ns);
}
static struct tb_cell min(const struct tb_report_row *r) {
  return number(r->min_ns);
}
static struct tb_cell max(const struct tb_report_row *r) {
  return number(r->max_ns);
}
static struct tb_cell cv(const struct tb_report_row *r) {
  return number(r->robust_cv);
}
static struct tb_cell gbps(const struct tb_report_row *r) {
  return number(r->gbps);
}
static struct tb_cell fraction(const struct tb_report_row *r) {
  return number(r->copy_fraction);
}

static struct tb_cell k(const struct tb_report_row *r) {
  return r->c->has_k ? integer(r->c->k) : (struct tb_cell){.kind = TB_CELL_ABSENT};
}

static struct tb_cell valid(const struct tb_report_row *r) {
  return (struct tb_cell){.kind = TB_CELL_BOOL, .flag = r->c->valid};
}

static struct tb_cell samples(const struct tb_report_row *r) {
  return r->samples > 0 ? integer((long long)r->samples) : (struct tb_cell){.kind = TB_CELL_ABSENT};
}

/* 0 in the model means the record had no minimal_bytes: absent, not zero. */
static struct tb_cell bytes(const struct tb_report_row *r) {
  return r->c->minimal_bytes > 0.0 ? number(r->c->minimal_bytes)
                                   : (struct tb_cell){.kind = TB_CELL_ABSENT};
}

const struct tb_column tb_report_columns[] = {
    {"id", id},
    {"op", op},
    {"m", m},
    {"n", n},
    {"k", k},
    {"view", view},
    {"provider", provider},
    {"variant", variant},
    {"valid", valid},
    {"scope", scope},
    {"mode", mode},
    {"p50_ns", p50},
    {"min_ns", min},
    {"max_ns", max},
    {"samples", samples},
    {"robust_cv", cv},
    {"minimal_bytes", bytes},
    {"gbps", gbps},
    {"copy_fraction", fraction},
};
const size_t tb_report_column_count = sizeof tb_report_columns / sizeof tb_report_columns[0];
