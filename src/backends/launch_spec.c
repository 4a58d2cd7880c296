#include "backends/launch_spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Deeper nesting than this is no launch description anyone writes; the cap
 * keeps the recursive descent's stack bounded whatever the input. */
#define MAX_DEPTH 32

struct parser {
  const char *text;
  size_t pos;
  int depth;
  struct tb_launch_spec *spec;
  struct tb_error *err;
};

__attribute__((format(printf, 2, 3))) static int fail_at(struct parser *p, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  tb_fail(p->err, TB_ERR_USAGE,
          "--launch '%s': %s at character %zu (the form is grid=EXPR[,EXPR[,EXPR]],"
          "block=EXPR[,EXPR[,EXPR]][,smem=EXPR] over m, n, integers, + - * /, cdiv(a,b) and "
          "parentheses)",
          p->text, what, p->pos + 1);
  return -1;
}

static void skip_spaces(struct parser *p) {
  while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t') {
    p->pos++;
  }
}

static bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

/* The name at the cursor into `name` (cut at its size); the cursor moves past it. */
static void read_name(struct parser *p, char *name, size_t size) {
  size_t len = 0;
  while (is_name_char(p->text[p->pos])) {
    if (len + 1 < size) {
      name[len++] = p->text[p->pos];
    }
    p->pos++;
  }
  name[len] = '\0';
}

static int new_node(struct parser *p, char kind, int64_t value, int lhs, int rhs) {
  struct tb_launch_spec *s = p->spec;
  if (s->node_count == TB_LAUNCH_NODES_MAX) {
    return fail_at(p, "more than %d terms", TB_LAUNCH_NODES_MAX);
  }
  s->nodes[s->node_count] = (struct tb_launch_node){kind, value, lhs, rhs};
  return s->node_count++;
}

static int parse_expr(struct parser *p);

static int expect(struct parser *p, char c) {
  skip_spaces(p);
  if (p->text[p->pos] != c) {
    return fail_at(p, "expected '%c'", c);
  }
  p->pos++;
  return 0;
}

static int parse_literal(struct parser *p) {
  int64_t value = 0;
  while (p->text[p->pos] >= '0' && p->text[p->pos] <= '9') {
    int digit = p->text[p->pos] - '0';
    if (value > (INT64_MAX - digit) / 10) {
      return fail_at(p, "a number too large");
    }
    value = value * 10 + digit;
    p->pos++;
  }
  if (is_name_char(p->text[p->pos])) {
    return fail_at(p, "a number followed by a letter (write 2*m, not 2m; no hex)");
  }
  return new_node(p, '#', value, -1, -1);
}

static int parse_cdiv(struct parser *p) {
  if (expect(p, '(') < 0) {
    return -1;
  }
  int a = parse_expr(p);
  if (a < 0 || expect(p, ',') < 0) {
    return -1;
  }
  int b = parse_expr(p);
  if (b < 0 || expect(p, ')') < 0) {
    return -1;
  }
  return new_node(p, 'c', 0, a, b);
}

/* factor := number | m | n | cdiv(expr, expr) | (expr) */
static int parse_factor(struct parser *p) {
  skip_spaces(p);
  char c = p->text[p->pos];
  if (c >= '0' && c <= '9') {
    return parse_literal(p);
  }
  if (c == '(') {
    p->pos++;
    int e = parse_expr(p);
    return e < 0 || expect(p, ')') < 0 ? -1 : e;
  }
  if (c == '\0') {
    return fail_at(p, "an expression ends early");
  }
  if (!is_name_start(c)) {
    return fail_at(p, "expected a number, m, n, cdiv( or ( but found '%c'", c);
  }
  size_t start = p->pos;
  char name[32];
  read_name(p, name, sizeof name);
  if (strcmp(name, "m") == 0 || strcmp(name, "n") == 0) {
    return new_node(p, name[0], 0, -1, -1);
  }
  if (strcmp(name, "cdiv") == 0) {
    return parse_cdiv(p);
  }
  p->pos = start;
  return fail_at(p, "unknown name '%s' (expressions know m, n and cdiv(a,b))", name);
}

/* term := factor (('*' | '/') factor)* */
static int parse_term(struct parser *p) {
  int lhs = parse_factor(p);
  for (;;) {
    skip_spaces(p);
    char op = p->text[p->pos];
    if (lhs < 0 || (op != '*' && op != '/')) {
      return lhs;
    }
    p->pos++;
    int rhs = parse_factor(p);
    lhs = rhs < 0 ? -1 : new_node(p, op, 0, lhs, rhs);
  }
}

/* expr := term (('+' | '-') term)* */
static int parse_expr(struct parser *p) {
  if (++p->depth > MAX_DEPTH) {
    return fail_at(p, "parentheses nested more than %d deep", MAX_DEPTH);
  }
  int lhs = parse_term(p);
  for (;;) {
    skip_spaces(p);
    char op = p->text[p->pos];
    if (lhs < 0 || (op != '+' && op != '-')) {
      p->depth--;
      return lhs;
    }
    p->pos++;
    int rhs = parse_term(p);
    lhs = rhs < 0 ? -1 : new_node(p, op, 0, lhs, rhs);
  }
}

/* A key is a name followed by '='; anything else after a comma is one more
 * dimension of the key before it (grid=m,1 is two grid dimensions). */
static bool at_key(struct parser *p, char *name, size_t size) {
  size_t start = p->pos;
  skip_spaces(p);
  if (is_name_start(p->text[p->pos])) {
    read_name(p, name, size);
    skip_spaces(p);
    if (p->text[p->pos] == '=') {
      p->pos++;
      return true;
    }
  }
  p->pos = start;
  return false;
}

/* The slots of key `name` and how many it takes, or NULL for an unknown key. */
static int *slots_of(struct tb_launch_spec *s, const char *name, int *capacity) {
  *capacity = strcmp(name, "smem") == 0 ? 1 : 3;
  if (strcmp(name, "grid") == 0) {
    return s->grid;
  }
  if (strcmp(name, "block") == 0) {
    return s->block;
  }
  return strcmp(name, "smem") == 0 ? &s->smem : NULL;
}

static int parse_item(struct parser *p, const char **key, int **slots, int *capacity, int *count) {
  char name[32];
  size_t start = p->pos;
  if (at_key(p, name, sizeof name)) {
    int *found = slots_of(p->spec, name, capacity);
    if (found == NULL) {
      p->pos = start;
      return fail_at(p, "unknown key '%s' (keys: grid, block, smem)", name);
    }
    if (found[0] >= 0) {
      p->pos = start;
      return fail_at(p, "%s given twice", name);
    }
    *key = found == p->spec->grid ? "grid" : found == p->spec->block ? "block" : "smem";
    *slots = found;
    *count = 0;
  } else if (*slots == NULL) {
    return fail_at(p, "expected grid=, block= or smem=");
  }
  if (*count == *capacity) {
    return fail_at(p,
                   *capacity == 1 ? "%s takes one expression"
                                  : "%s takes at most three dimensions (x, y, z)",
                   *key);
  }
  int e = parse_expr(p);
  if (e < 0) {
    return -1;
  }
  (*slots)[(*count)++] = e;
  return 0;
}

enum tb_status tb_launch_spec_parse(const char *text, struct tb_launch_spec *spec,
                                    struct tb_error *err) {
  memset(spec, 0, sizeof *spec);
  for (int i = 0; i < 3; ++i) {
    spec->grid[i] = spec->block[i] = -1;
  }
  spec->smem = -1;
  if (strlen(text) >= sizeof spec->text) {
    return tb_fail(err, TB_ERR_USAGE, "--launch: a description of more than %d characters",
                   TB_LAUNCH_TEXT_MAX - 1);
  }
  snprintf(spec->text, sizeof spec->text, "%s", text);
  struct parser p = {spec->text, 0, 0, spec, err};
  const char *key = NULL;
  int *slots = NULL, capacity = 0, count = 0;
  for (;;) {
    if (parse_item(&p, &key, &slots, &capacity, &count) < 0) {
      return err->status;
    }
    skip_spaces(&p);
    if (p.text[p.pos] == '\0') {
      break;
    }
    if (p.text[p.pos] != ',') {
      fail_at(&p, "unexpected '%c'", p.text[p.pos]);
      return err->status;
    }
    p.pos++;
  }
  if (spec->grid[0] < 0 || spec->block[0] < 0) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--launch '%s': no %s= (both grid= and block= are needed, for example "
                   "grid=m,block=256)",
                   text, spec->grid[0] < 0 ? "grid" : "block");
  }
  return TB_OK;
}

/* ---- evaluation ---------------------------------------------------------- */

struct evaluator {
  const struct tb_launch_spec *spec;
  int64_t m, n;
  const char *problem; /* the first one met, or NULL */
};

static int64_t ceil_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) == (b < 0)) ? q + 1 : q;
}

static int64_t eval_node(struct evaluator *e, int index) {
  const struct tb_launch_node *node = &e->spec->nodes[index];
  switch (node->kind) {
  case '#': return node->value;
  case 'm': return e->m;
  case 'n': return e->n;
  default: break;
  }
  int64_t a = eval_node(e, node->lhs), b = eval_node(e, node->rhs), r = 0;
  if (e->problem != NULL) {
    return 0;
  }
  bool overflow = false;
  switch (node->kind) {
  case '+': overflow = __builtin_add_overflow(a, b, &r); break;
  case '-': overflow = __builtin_sub_overflow(a, b, &r); break;
  case '*': overflow = __builtin_mul_overflow(a, b, &r); break;
  case '/':
  case 'c':
    if (node->kind == 'c' && b <= 0) {
      e->problem = "cdiv(a,b) with b not above 0";
      return 0;
    }
    if (b == 0) {
      e->problem = "a division by zero";
      return 0;
    }
    overflow = a == INT64_MIN && b == -1;
    r = overflow ? 0 : node->kind == '/' ? a / b : ceil_div(a, b);
    break;
  default: e->problem = "a broken expression"; return 0;
  }
  if (overflow) {
    e->problem = "an overflow of 64-bit integers";
  }
  return r;
}

/* One dimension: evaluated (1 when not given) and within [low, high]. */
static enum tb_status eval_dim(struct evaluator *e, int root, const char *what, int64_t low,
                               int64_t high, uint32_t *out, struct tb_error *err) {
  if (root < 0) {
    *out = low == 0 ? 0 : 1;
    return TB_OK;
  }
  e->problem = NULL;
  int64_t v = eval_node(e, root);
  if (e->problem != NULL) {
    return tb_fail(err, TB_ERR_USAGE, "--launch '%s': %s for shape %lldx%lld: %s", e->spec->text,
                   what, (long long)e->m, (long long)e->n, e->problem);
  }
  if (v < low || v > high) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--launch '%s': %s is %lld for shape %lldx%lld; it must be from %lld to %lld",
                   e->spec->text, what, (long long)v, (long long)e->m, (long long)e->n,
                   (long long)low, (long long)high);
  }
  *out = (uint32_t)v;
  return TB_OK;
}

enum tb_status tb_launch_spec_eval(const struct tb_launch_spec *spec, int64_t m, int64_t n,
                                   struct tb_launch_dims *dims, struct tb_error *err) {
  static const char *const grid_names[] = {"grid x", "grid y", "grid z"};
  static const char *const block_names[] = {"block x", "block y", "block z"};
  static const int64_t grid_max[] = {INT32_MAX, 65535, 65535};
  static const int64_t block_max[] = {1024, 1024, 64};
  struct evaluator e = {spec, m, n, NULL};
  memset(dims, 0, sizeof *dims);
  for (int i = 0; i < 3; ++i) {
    if (eval_dim(&e, spec->grid[i], grid_names[i], 1, grid_max[i], &dims->grid[i], err) != TB_OK ||
        eval_dim(&e, spec->block[i], block_names[i], 1, block_max[i], &dims->block[i], err) !=
            TB_OK) {
      return err->status;
    }
  }
  uint64_t threads = (uint64_t)dims->block[0] * dims->block[1] * dims->block[2];
  if (threads > 1024) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--launch '%s': block is %ux%ux%u = %llu threads for shape %lldx%lld; CUDA "
                   "allows at most 1024",
                   spec->text, dims->block[0], dims->block[1], dims->block[2],
                   (unsigned long long)threads, (long long)m, (long long)n);
  }
  return eval_dim(&e, spec->smem, "smem", 0, INT32_MAX, &dims->smem_bytes, err);
}

/* ---- --launch @file -------------------------------------------------------- */

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) {
    s++;
  }
  size_t len = strlen(s);
  while (len > 0 && isspace((unsigned char)s[len - 1])) {
    s[--len] = '\0';
  }
  return s;
}

/* The one line of `contents` that is neither empty nor a comment. */
static enum tb_status only_line(char *contents, const char *path, char *out, size_t out_size,
                                struct tb_error *err) {
  int found = 0;
  for (char *line = strtok(contents, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    line = trim(line);
    if (line[0] == '\0' || line[0] == '#') {
      continue;
    }
    if (++found > 1) {
      return tb_fail(err, TB_ERR_USAGE,
                     "--launch @%s: more than one description (one line, such as "
                     "grid=m,block=256; lines starting with # are comments)",
                     path);
    }
    if (strlen(line) >= out_size) {
      return tb_fail(err, TB_ERR_USAGE, "--launch @%s: a description of more than %zu characters",
                     path, out_size - 1);
    }
    snprintf(out, out_size, "%s", line);
  }
  if (found == 0) {
    return tb_fail(err, TB_ERR_USAGE, "--launch @%s: the file holds no description", path);
  }
  return TB_OK;
}

enum tb_status tb_launch_text_resolve(const char *text, char *out, size_t out_size,
                                      struct tb_error *err) {
  if (text[0] != '@') {
    if (strlen(text) >= out_size) {
      return tb_fail(err, TB_ERR_USAGE, "--launch: a description of more than %zu characters",
                     out_size - 1);
    }
    snprintf(out, out_size, "%s", text);
    return TB_OK;
  }
  const char *path = text + 1;
  FILE *f = path[0] != '\0' ? fopen(path, "r") : NULL;
  if (f == NULL) {
    return tb_fail(err, TB_ERR_USAGE, "--launch @%s: cannot read it: %s", path,
                   path[0] != '\0' ? strerror(errno) : "no file named after the @");
  }
  char contents[4096];
  size_t got = fread(contents, 1, sizeof contents - 1, f);
  bool more = fgetc(f) != EOF;
  fclose(f);
  if (more || memchr(contents, '\0', got) != NULL) {
    return tb_fail(err, TB_ERR_USAGE,
                   "--launch @%s: not a launch description (longer than %zu bytes, or binary)",
                   path, sizeof contents - 1);
  }
  contents[got] = '\0';
  return only_line(contents, path, out, out_size, err);
}
