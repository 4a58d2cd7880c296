/* The one strict parser of numbers given on the command line or in the
 * environment: plain decimal digits only (no sign, no spaces, no hex, no
 * "inf"), so every option accepts and refuses the same spellings. */
#ifndef TB_CORE_NUMBERS_H
#define TB_CORE_NUMBERS_H

#include "core/error.h"

/* A whole number in [min, max]: digits only. Refused with TB_ERR_USAGE and
 * a message naming `what` (the option) otherwise. */
enum tb_status tb_parse_size(const char *text, const char *what, unsigned long long min,
                             unsigned long long max, unsigned long long *out, struct tb_error *err);

/* A real number in (0, max]: digits, an optional fraction and an optional
 * exponent ("10", "0.5", "2e-3"). */
enum tb_status tb_parse_positive(const char *text, const char *what, double max, double *out,
                                 struct tb_error *err);

/* A list of exactly `count` whole numbers in [min, max] separated by commas
 * ("128,64,16"). */
enum tb_status tb_parse_size_list(const char *text, const char *what, unsigned count,
                                  unsigned long long min, unsigned long long max,
                                  unsigned long long *out, struct tb_error *err);

#endif
