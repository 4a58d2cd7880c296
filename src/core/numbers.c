#include "core/numbers.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *shown(const char *text) {
  return text ? text : "";
}

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* Skips a run of digits; returns how many. */
static size_t digits(const char **p) {
  size_t n = 0;
  while (is_digit(**p)) {
    ++*p;
    ++n;
  }
  return n;
}

enum tb_status tb_parse_size(const char *text, const char *what, unsigned long long min,
                             unsigned long long max, unsigned long long *out,
                             struct tb_error *err) {
  const char *p = text ? text : "";
  if (digits(&p) == 0 || *p != '\0') {
    return tb_fail(err, TB_ERR_USAGE, "%s: '%s' is not a whole number (digits only)", what,
                   shown(text));
  }
  errno = 0;
  unsigned long long value = strtoull(text, NULL, 10);
  if (errno == ERANGE || value > max) {
    return tb_fail(err, TB_ERR_USAGE, "%s: %s is above the largest accepted value, %llu", what,
                   text, max);
  }
  if (value < min) {
    return tb_fail(err, TB_ERR_USAGE, "%s: %s is below the smallest accepted value, %llu", what,
                   text, min);
  }
  *out = value;
  return TB_OK;
}

/* digits [. digits] [e|E [+|-] digits] */
static int is_plain_real(const char *p) {
  size_t whole = digits(&p), fraction = 0;
  if (*p == '.') {
    ++p;
    fraction = digits(&p);
    if (fraction == 0) {
      return 0;
    }
  }
  if (whole == 0 && fraction == 0) {
    return 0;
  }
  if (*p == 'e' || *p == 'E') {
    ++p;
    if (*p == '+' || *p == '-') {
      ++p;
    }
    if (digits(&p) == 0) {
      return 0;
    }
  }
  return *p == '\0';
}

enum tb_status tb_parse_positive(const char *text, const char *what, double max, double *out,
                                 struct tb_error *err) {
  if (text == NULL || !is_plain_real(text)) {
    return tb_fail(err, TB_ERR_USAGE, "%s: '%s' is not a number (for example 10 or 0.5)", what,
                   shown(text));
  }
  double value = strtod(text, NULL); /* underflow gives 0 or a subnormal: refused below */
  if (!(value >= 1e-300) || !isfinite(value) || value > max) { /* 1e-300: no subnormals */
    return tb_fail(err, TB_ERR_USAGE, "%s: %s is outside [1e-300, %g]", what, text, max);
  }
  *out = value;
  return TB_OK;
}

enum tb_status tb_parse_size_list(const char *text, const char *what, unsigned count,
                                  unsigned long long min, unsigned long long max,
                                  unsigned long long *out, struct tb_error *err) {
  const char *start = text ? text : "";
  for (unsigned i = 0; i < count; ++i) {
    const char *comma = strchr(start, ',');
    size_t len = comma ? (size_t)(comma - start) : strlen(start);
    char part[32];
    if ((comma == NULL) != (i + 1 == count) || len >= sizeof part) {
      return tb_fail(err, TB_ERR_USAGE, "%s takes %u comma-separated whole numbers, not '%s'", what,
                     count, shown(text));
    }
    memcpy(part, start, len);
    part[len] = '\0';
    if (tb_parse_size(part, what, min, max, &out[i], err) != TB_OK) {
      return err->status;
    }
    start = comma ? comma + 1 : start + len;
  }
  return TB_OK;
}
