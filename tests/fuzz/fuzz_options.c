/* Fuzz target: every parser of command-line values. The first byte picks
 * the parser ('a' + index below, modulo their count, so seeds stay
 * readable); the rest, up to a NUL, is the value. Besides "no crash, no
 * sanitizer report", each parser is held to its documented contract by a
 * reference written apart from it, and accepted values must format back. */
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>

#include "fuzz_common.h"

#include "cases/case_params.h"
#include "cases/ops.h"
#include "cases/shape.h"
#include "cli/commands.h"
#include "core/numbers.h"
#include "core/strlist.h"
#include "planner/planner.h"
#include "registry/registry.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  tb_fuzz_setup(); /* `plan` prints its table on stdout */
  return 0;
}

/* ---- references ---------------------------------------------------------- */

enum whole { NOT_DIGITS, WHOLE, TOO_LARGE };

/* tb_parse_size's spelling: one or more decimal digits, nothing else. */
static enum whole ref_whole(const char *text, unsigned long long *value) {
  unsigned long long v = 0;
  bool overflow = false;
  if (*text == '\0') {
    return NOT_DIGITS;
  }
  for (const char *p = text; *p; ++p) {
    if (*p < '0' || *p > '9') {
      return NOT_DIGITS;
    }
    unsigned d = (unsigned)(*p - '0');
    if (v > (ULLONG_MAX - d) / 10) {
      overflow = true;
    } else {
      v = v * 10 + d;
    }
  }
  *value = v;
  return overflow ? TOO_LARGE : WHOLE;
}

static bool ref_size(const char *text, unsigned long long min, unsigned long long max,
                     unsigned long long *value) {
  return ref_whole(text, value) == WHOLE && *value >= min && *value <= max;
}

/* The list parsers copy each item into a 32-byte buffer first: longer
 * items (only reachable with leading zeros) are refused. */
#define ITEM_MAX 31

/* A value accepted as `value` reads back as the same digits, leading zeros
 * aside. */
static void check_formats_back(const char *text, unsigned long long value) {
  char buf[32];
  snprintf(buf, sizeof buf, "%llu", value);
  while (text[0] == '0' && text[1] != '\0') {
    ++text;
  }
  TB_FUZZ_CHECK(strcmp(buf, text) == 0, "'%s' was read as %llu", text, value);
}

/* A refusal is a usage error with a message. */
static void check_refusal(enum tb_status st, const struct tb_error *err) {
  TB_FUZZ_CHECK(st == TB_ERR_USAGE && err->status == TB_ERR_USAGE, "status %d", (int)st);
  TB_FUZZ_CHECK(err->message[0] != '\0' && strlen(err->message) < sizeof err->message, "message");
}

/* ---- numbers (core/numbers.h) ---------------------------------------------- */

static void fuzz_size(const char *text, unsigned long long min, unsigned long long max) {
  struct tb_error err = {0};
  unsigned long long got = 0, want = 0;
  enum tb_status st = tb_parse_size(text, "--fuzz", min, max, &got, &err);
  bool accept = ref_size(text, min, max, &want);
  TB_FUZZ_CHECK((st == TB_OK) == accept, "tb_parse_size('%s', %llu, %llu) gave %d", text, min, max,
                (int)st);
  if (st == TB_OK) {
    TB_FUZZ_CHECK(got == want, "'%s' read as %llu, not %llu", text, got, want);
    check_formats_back(text, got);
  } else {
    check_refusal(st, &err);
  }
}

/* tb_parse_positive's spelling: digits [. digits] [e|E [+|-] digits], with
 * a digit before or after the point. */
static bool ref_real_spelling(const char *p) {
  size_t whole = strspn(p, "0123456789"), fraction = 0;
  p += whole;
  if (*p == '.') {
    fraction = strspn(++p, "0123456789");
    if (fraction == 0) {
      return false;
    }
    p += fraction;
  }
  if (whole == 0 && fraction == 0) {
    return false;
  }
  if (*p == 'e' || *p == 'E') {
    ++p;
    p += (*p == '+' || *p == '-');
    size_t exponent = strspn(p, "0123456789");
    if (exponent == 0) {
      return false;
    }
    p += exponent;
  }
  return *p == '\0';
}

static void fuzz_positive(const char *text, double max) {
  struct tb_error err = {0};
  double got = 0.0;
  enum tb_status st = tb_parse_positive(text, "--fuzz-ms", max, &got, &err);
  double want = ref_real_spelling(text) ? strtod(text, NULL) : NAN;
  bool accept = want >= 1e-300 && isfinite(want) && want <= max; /* false for NaN */
  TB_FUZZ_CHECK((st == TB_OK) == accept, "tb_parse_positive('%s', %g) gave %d", text, max, (int)st);
  if (st == TB_OK) {
    TB_FUZZ_CHECK(got == want, "'%s' read as %.17g, not %.17g", text, got, want);
  } else {
    check_refusal(st, &err);
  }
}

/* Exactly `count` items at commas, each accepted alone. */
static bool ref_size_list(const char *text, unsigned count, unsigned long long min,
                          unsigned long long max, unsigned long long *values) {
  const char *start = text;
  for (unsigned i = 0; i < count; ++i) {
    const char *comma = strchr(start, ',');
    size_t len = comma ? (size_t)(comma - start) : strlen(start);
    char item[ITEM_MAX + 1];
    if ((comma == NULL) != (i + 1 == count) || len > ITEM_MAX) {
      return false;
    }
    memcpy(item, start, len);
    item[len] = '\0';
    if (!ref_size(item, min, max, &values[i])) {
      return false;
    }
    start = comma ? comma + 1 : start + len;
  }
  return true;
}

/* One to four items, the count taken from the length so that both right
 * and wrong counts are tried. */
static void fuzz_size_list(const char *text) {
  unsigned count = 1 + (unsigned)(strlen(text) % 4);
  unsigned long long got[4] = {0}, want[4] = {0};
  struct tb_error err = {0};
  enum tb_status st = tb_parse_size_list(text, "--fuzz-list", count, 0, ULLONG_MAX, got, &err);
  bool accept = ref_size_list(text, count, 0, ULLONG_MAX, want);
  TB_FUZZ_CHECK((st == TB_OK) == accept, "tb_parse_size_list('%s', %u) gave %d", text, count,
                (int)st);
  if (st == TB_OK) {
    TB_FUZZ_CHECK(memcmp(got, want, sizeof got) == 0, "'%s' read differently", text);
  } else {
    check_refusal(st, &err);
  }
}

static void fuzz_gemm_block(const char *text) {
  struct tb_gemm_block block = {0, 0, 0};
  unsigned long long want[3];
  struct tb_error err = {0};
  enum tb_status st = tb_gemm_block_parse(text, &block, &err);
  TB_FUZZ_CHECK((st == TB_OK) == ref_size_list(text, 3, 1, 4096, want), "'%s' gave %d", text,
                (int)st);
  if (st == TB_OK) {
    TB_FUZZ_CHECK(block.m == want[0] && block.n == want[1] && block.k == want[2],
                  "'%s' read as %u,%u,%u", text, block.m, block.n, block.k);
  } else {
    check_refusal(st, &err);
  }
}

/* ---- shapes (cases/shape.h) ---------------------------------------------- */

/* MxN or MxNxK, each dimension a whole number in [1, TB_MAX_DIM]. */
static bool ref_shape(const char *text, struct tb_shape *shape) {
  unsigned long long dims[3] = {0, 0, 0};
  unsigned count = 0;
  const char *start = text;
  for (;;) {
    const char *x = strchr(start, 'x');
    size_t len = x ? (size_t)(x - start) : strlen(start);
    char part[ITEM_MAX + 1];
    if (count == 3 || len > ITEM_MAX) {
      return false;
    }
    memcpy(part, start, len);
    part[len] = '\0';
    if (!ref_size(part, 1, TB_MAX_DIM, &dims[count++])) {
      return false;
    }
    if (x == NULL) {
      break;
    }
    start = x + 1;
  }
  *shape = (struct tb_shape){dims[0], dims[1], dims[2]};
  return count >= 2;
}

static bool same_shape(struct tb_shape a, struct tb_shape b) {
  return a.m == b.m && a.n == b.n && a.k == b.k;
}

static void fuzz_shape(const char *text) {
  struct tb_shape got = {0, 0, 0}, want = {0, 0, 0};
  struct tb_error err = {0};
  enum tb_status st = tb_shape_parse(text, &got, &err);
  TB_FUZZ_CHECK((st == TB_OK) == ref_shape(text, &want), "tb_shape_parse('%s') gave %d", text,
                (int)st);
  if (st != TB_OK) {
    check_refusal(st, &err);
    return;
  }
  TB_FUZZ_CHECK(same_shape(got, want), "'%s' read as %zux%zux%zu", text, got.m, got.n, got.k);
  /* The formatted shape parses back to the same shape. */
  char formatted[96];
  struct tb_shape again = {0, 0, 0};
  tb_shape_format(got, formatted, sizeof formatted);
  TB_FUZZ_CHECK(tb_shape_parse(formatted, &again, &err) == TB_OK && same_shape(got, again),
                "'%s' formatted as '%s' does not read back", text, formatted);
  /* A short buffer truncates, never overflows (ASan watches its end). */
  size_t room = 1 + strlen(formatted) % 8;
  char *small = malloc(room);
  if (small != NULL) {
    tb_shape_format(got, small, room);
    size_t kept = strlen(formatted) < room ? strlen(formatted) : room - 1;
    TB_FUZZ_CHECK(strlen(small) == kept && strncmp(small, formatted, kept) == 0,
                  "'%s' truncated to '%s'", formatted, small);
    free(small);
  }
}

/* ---- lists (core/strlist.h) ---------------------------------------------- */

static void fuzz_strlist(const char *text) {
  struct tb_strlist list;
  struct tb_error err = {0};
  enum tb_status st = tb_strlist_split(text, "--fuzz-list", &list, &err);
  size_t len = strlen(text), commas = 0;
  for (const char *p = text; *p; ++p) {
    commas += *p == ',';
  }
  bool accept = len > 0 && text[0] != ',' && text[len - 1] != ',' && strstr(text, ",,") == NULL;
  TB_FUZZ_CHECK((st == TB_OK) == accept, "tb_strlist_split('%s') gave %d", text, (int)st);
  if (st != TB_OK) {
    check_refusal(st, &err);
    TB_FUZZ_CHECK(list.items == NULL && list.count == 0, "a refused list keeps items");
    return;
  }
  TB_FUZZ_CHECK(list.count == commas + 1, "'%s' split into %zu items", text, list.count);
  /* The items, joined again by commas, are the text. */
  size_t at = 0;
  for (size_t i = 0; i < list.count; ++i) {
    size_t item = strlen(list.items[i]);
    TB_FUZZ_CHECK(item > 0 && strchr(list.items[i], ',') == NULL, "item %zu", i);
    TB_FUZZ_CHECK(strncmp(text + at, list.items[i], item) == 0, "item %zu differs", i);
    at += item;
    TB_FUZZ_CHECK(text[at] == (i + 1 == list.count ? '\0' : ','), "after item %zu", i);
    at += i + 1 < list.count;
  }
  tb_strlist_free(&list);
}

/* ---- names (cases/, planner/, registry/) ----------------------------------- */

static void fuzz_op_name(const char *text) {
  const struct tb_op_info *info = tb_op_by_name(text);
  bool known = false;
  for (int op = 0; op < TB_OP_COUNT; ++op) {
    known |= strcmp(tb_op_info((enum tb_op)op)->name, text) == 0;
  }
  TB_FUZZ_CHECK((info != NULL) == known, "'%s'", text);
  if (info != NULL) {
    TB_FUZZ_CHECK(strcmp(info->name, text) == 0 && tb_op_info(info->op) == info, "'%s'", text);
  }
}

static void fuzz_view_name(const char *text) {
  enum tb_view_kind kind = TB_VIEW_COUNT;
  struct tb_error err = {0};
  enum tb_status st = tb_view_kind_parse(text, &kind, &err);
  bool known = strcmp(text, "packed") == 0 || strcmp(text, "strided") == 0;
  TB_FUZZ_CHECK((st == TB_OK) == known, "'%s' gave %d", text, (int)st);
  if (st == TB_OK) {
    TB_FUZZ_CHECK(kind < TB_VIEW_COUNT && strcmp(tb_view_name(kind), text) == 0, "'%s'", text);
  } else {
    check_refusal(st, &err);
  }
}

static void fuzz_variant_name(const char *text) {
  enum tb_variant variant = TB_VARIANT_COUNT;
  struct tb_error err = {0};
  enum tb_status st = tb_variant_parse(text, &variant, &err);
  bool known = false;
  for (int v = 0; v < TB_VARIANT_COUNT; ++v) {
    known |= strcmp(tb_variant_name((enum tb_variant)v), text) == 0;
  }
  /* sSpP, S and P 1..32 without leading zeros: formatting (s, p) back must give the text */
  unsigned s = 0, p = 0;
  char again[32] = "";
  if (sscanf(text, "s%2up%2u", &s, &p) == 2 && s >= 1 && s <= 32 && p >= 1 && p <= 32) {
    snprintf(again, sizeof again, "s%up%u", s, p);
    known |= strcmp(again, text) == 0;
  }
  TB_FUZZ_CHECK((st == TB_OK) == known, "'%s' gave %d", text, (int)st);
  if (st == TB_OK) {
    unsigned fs = 0, fp = 0;
    bool synonym = strcmp(text, "s1p8") == 0 || strcmp(text, "s2p4") == 0;
    TB_FUZZ_CHECK(synonym
                      ? variant == (text[1] == '1' ? TB_VARIANT_REFERENCE : TB_VARIANT_CANDIDATE)
                      : strcmp(tb_variant_name(variant), text) == 0,
                  "'%s'", text);
    TB_FUZZ_CHECK(variant == TB_VARIANT_AUTOMATIC ||
                      (tb_variant_fixed_shape(variant, &fs, &fp) &&
                       (variant < TB_VARIANT_COUNT || (fs == s && fp == p))),
                  "'%s' named %s", text, tb_variant_name(variant));
  } else {
    check_refusal(st, &err);
  }
}

static void fuzz_realization_name(const char *text) {
  enum tb_realization r = TB_REALIZATION_COUNT;
  struct tb_error err = {0};
  enum tb_status st = tb_realization_parse(text, &r, &err);
  bool known = false;
  for (int k = 0; k < TB_REALIZATION_COUNT; ++k) {
    known |= strcmp(tb_realization_name((enum tb_realization)k), text) == 0;
  }
  TB_FUZZ_CHECK((st == TB_OK) == known, "'%s' gave %d", text, (int)st);
  if (st == TB_OK) {
    TB_FUZZ_CHECK(r < TB_REALIZATION_COUNT && strcmp(tb_realization_name(r), text) == 0, "'%s'",
                  text);
  } else {
    check_refusal(st, &err);
  }
}

static void fuzz_profile_name(const char *text) {
  struct tb_error err = {0};
  enum tb_status st = tb_planner_profile_check(text, &err);
  bool known = strcmp(text, TB_PLANNER_PROFILE_ANALYTIC) == 0 ||
               strcmp(text, TB_PLANNER_PROFILE_CALIBRATED) == 0 ||
               strcmp(text, TB_PLANNER_PROFILE_CALIBRATED_2) == 0;
  TB_FUZZ_CHECK((st == TB_OK) == known, "'%s' gave %d", text, (int)st);
  if (st != TB_OK) {
    check_refusal(st, &err);
  }
}

/* What `run` does with each of its lists: split, then every item parsed. */
static void fuzz_cli_list(const char *text) {
  struct tb_strlist list;
  struct tb_error err = {0};
  if (tb_strlist_split(text, "--fuzz-list", &list, &err) != TB_OK) {
    return;
  }
  for (size_t i = 0; i < list.count; ++i) {
    const char *item = list.items[i];
    fuzz_op_name(item);
    fuzz_view_name(item);
    fuzz_variant_name(item);
    fuzz_realization_name(item);
    fuzz_shape(item);
    (void)tb_provider_known(item);
  }
  tb_strlist_free(&list);
}

/* ---- `tilebench plan`, whose values all reach the planner ----------------------- */

#define PLAN_MAX_ARGS 32

/* Lines of the value are argv[1..]; the command's exit code is 0, or 2 for
 * a refused value: the planner never fails a run. */
static void fuzz_plan(char *text) {
  static char name[] = "plan", reset_name[] = "reset";
  char *argv[PLAN_MAX_ARGS + 2] = {name};
  int argc = 1;
  for (char *line = text; line != NULL && argc <= PLAN_MAX_ARGS;) {
    char *newline = strchr(line, '\n');
    if (newline != NULL) {
      *newline = '\0';
    }
    argv[argc++] = line;
    line = newline ? newline + 1 : NULL;
  }
  argv[argc] = NULL;
  /* optind = 0 makes glibc forget the previous input's argv (the command
   * itself only sets optind = 1, which keeps a pointer into it). */
  static const struct option none[] = {{NULL, 0, NULL, 0}};
  char *reset[] = {reset_name, NULL};
  optind = 0;
  (void)getopt_long(1, reset, "", none, NULL);
  int rc = tb_cmd_plan(argc, argv);
  TB_FUZZ_CHECK(rc == 0 || rc == 2, "plan exited %d", rc);
}

/* ---- dispatch ------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) {
    return 0;
  }
  char *text = tb_fuzz_string(data + 1, size - 1);
  if (text == NULL) {
    return 0;
  }
  enum { PARSERS = 18 };
  switch ((unsigned char)(data[0] - 'a') % PARSERS) {
  case 0: fuzz_shape(text); break;               /* 'a' --shapes item, --shape */
  case 1: fuzz_size(text, 0, ULLONG_MAX); break; /* 'b' any whole number */
  case 2: fuzz_size(text, 2, 64); break;         /* 'c' --rounds */
  case 3: fuzz_size(text, 0, LLONG_MAX); break;  /* 'd' --seed */
  case 4: fuzz_size(text, 1, 100000); break;     /* 'e' --samples */
  case 5: fuzz_positive(text, 600000); break;    /* 'f' --warmup-ms, --sample-ms */
  case 6: fuzz_positive(text, DBL_MAX); break;   /* 'g' any positive real */
  case 7: fuzz_size_list(text); break;           /* 'h' a list of whole numbers */
  case 8: fuzz_gemm_block(text); break;          /* 'i' --gemm-block */
  case 9: fuzz_strlist(text); break;             /* 'j' any list */
  case 10: fuzz_op_name(text); break;            /* 'k' --op */
  case 11: fuzz_view_name(text); break;          /* 'l' --input-views item */
  case 12: fuzz_variant_name(text); break;       /* 'm' --variant(s) */
  case 13: fuzz_realization_name(text); break;   /* 'n' --matrix-realization */
  case 14: fuzz_profile_name(text); break;       /* 'o' --profile */
  case 15: (void)tb_provider_known(text); break; /* 'p' --providers item */
  case 16: fuzz_cli_list(text); break;           /* 'q' a list as `run` parses it */
  default: fuzz_plan(text); break;               /* 'r' `tilebench plan` argv */
  }
  free(text);
  return 0;
}
