/* The launch description of a CUDA source user kernel (--launch): what
 * parses, what each shape evaluates to, and every refusal with the part of
 * the description it names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/launch_spec.h"
#include "test_support.h"

static struct tb_launch_dims eval_ok(const char *text, int64_t m, int64_t n) {
  struct tb_launch_spec spec;
  struct tb_launch_dims dims;
  struct tb_error err = {0};
  if (tb_launch_spec_parse(text, &spec, &err) != TB_OK ||
      tb_launch_spec_eval(&spec, m, n, &dims, &err) != TB_OK) {
    print_error("%s: %s\n", text, err.message);
    fail();
  }
  return dims;
}

/* Refused by the parser, with `part` in the message. */
static void parse_refuses(const char *text, const char *part) {
  struct tb_launch_spec spec;
  struct tb_error err = {0};
  assert_int_equal(tb_launch_spec_parse(text, &spec, &err), TB_ERR_USAGE);
  if (strstr(err.message, part) == NULL) {
    print_error("'%s' refused as: %s (expected to mention '%s')\n", text, err.message, part);
    fail();
  }
}

/* Parsed, then refused for the shape m x n, with `part` in the message. */
static void eval_refuses(const char *text, int64_t m, int64_t n, const char *part) {
  struct tb_launch_spec spec;
  struct tb_launch_dims dims;
  struct tb_error err = {0};
  assert_int_equal(tb_launch_spec_parse(text, &spec, &err), TB_OK);
  assert_int_equal(tb_launch_spec_eval(&spec, m, n, &dims, &err), TB_ERR_USAGE);
  if (strstr(err.message, part) == NULL) {
    print_error("'%s' on %lldx%lld refused as: %s (expected '%s')\n", text, (long long)m,
                (long long)n, err.message, part);
    fail();
  }
}

static void one_dimension_each(void **state) {
  struct tb_launch_dims d = eval_ok("grid=m,block=256,smem=0", 4096, 1024);
  assert_int_equal(d.grid[0], 4096);
  assert_int_equal(d.grid[1], 1);
  assert_int_equal(d.grid[2], 1);
  assert_int_equal(d.block[0], 256);
  assert_int_equal(d.block[1], 1);
  assert_int_equal(d.smem_bytes, 0);
  d = eval_ok("grid=m,block=128", 3, 5); /* smem absent: 0 */
  assert_int_equal(d.smem_bytes, 0);
}

static void expressions(void **state) {
  struct tb_launch_dims d = eval_ok("grid=cdiv(m,4),block=32,4,smem=(n+3)*4", 37, 769);
  assert_int_equal(d.grid[0], 10); /* 37 / 4 rounded up */
  assert_int_equal(d.block[0], 32);
  assert_int_equal(d.block[1], 4);
  assert_int_equal(d.smem_bytes, (769 + 3) * 4);
  d = eval_ok(" grid = cdiv( m * n , 1024 ) , 2 , 3 , block = 1024 / 4 - 2 * 8 ", 100, 100);
  assert_int_equal(d.grid[0], 10);
  assert_int_equal(d.grid[1], 2);
  assert_int_equal(d.grid[2], 3);
  assert_int_equal(d.block[0], 240); /* precedence: 256 - 16 */
  d = eval_ok("grid=m/3,block=(1+1)*(2+2)", 10, 1);
  assert_int_equal(d.grid[0], 3); /* truncating */
  assert_int_equal(d.block[0], 8);
  d = eval_ok("block=n,grid=cdiv(cdiv(m,2),2),smem=n-n", 9, 64); /* keys in any order */
  assert_int_equal(d.grid[0], 3);
  assert_int_equal(d.block[0], 64);
}

static void refused_syntax(void **state) {
  parse_refuses("", "expected grid=");
  parse_refuses("m", "expected grid=");
  parse_refuses("grid=m", "no block=");
  parse_refuses("block=256", "no grid=");
  parse_refuses("grid=m,blok=256", "unknown key 'blok'");
  parse_refuses("grid=m,block=256,grid=1", "grid given twice");
  parse_refuses("grid=k,block=256", "unknown name 'k'");
  parse_refuses("grid=max(m,1),block=256", "unknown name 'max'");
  parse_refuses("grid=m,block=256,smem=1,2", "smem takes one expression");
  parse_refuses("grid=1,2,3,4,block=1", "at most three dimensions");
  parse_refuses("grid=,block=1", "expected a number");
  parse_refuses("grid=m,block=", "ends early");
  parse_refuses("grid=m+,block=1", "expected a number");
  parse_refuses("grid=-m,block=1", "found '-'");
  parse_refuses("grid=(m,block=1", "expected ')'");
  parse_refuses("grid=m),block=1", "unexpected ')'");
  parse_refuses("grid=cdiv(m),block=1", "expected ','");
  parse_refuses("grid=cdiv m,block=1", "expected '('");
  parse_refuses("grid=2m,block=1", "followed by a letter");
  parse_refuses("grid=0x10,block=1", "followed by a letter");
  parse_refuses("grid=m;block=1", "unexpected ';'");
  parse_refuses("grid=99999999999999999999,block=1", "too large");
  parse_refuses("grid=m block=1", "unexpected 'b'");
  parse_refuses("grid=m,,block=1", "expected a number");
  parse_refuses("grid=1.5,block=1", "unexpected '.'");
}

static void refused_values(void **state) {
  eval_refuses("grid=m-m,block=32", 8, 8, "grid x is 0");
  eval_refuses("grid=m-9,block=32", 8, 8, "grid x is -1");
  eval_refuses("grid=m,block=1025", 8, 8, "block x is 1025");
  eval_refuses("grid=m,block=32,65", 8, 8, "block is 32x65x1 = 2080 threads");
  eval_refuses("grid=m,block=1,1,65", 8, 8, "block z is 65");
  eval_refuses("grid=1,65536,block=1", 8, 8, "grid y is 65536");
  eval_refuses("grid=m*n*1024,block=1", 65536, 65536, "grid x is");
  eval_refuses("grid=m/(n-n),block=1", 8, 8, "division by zero");
  eval_refuses("grid=cdiv(m,0),block=1", 8, 8, "cdiv(a,b) with b not above 0");
  eval_refuses("grid=9223372036854775807+m,block=1", 8, 8, "overflow");
  eval_refuses("grid=m*9223372036854775807,block=1", 8, 8, "overflow");
  eval_refuses("grid=m,block=1,smem=0-1", 8, 8, "smem is -1");
  eval_refuses("grid=m,block=1,smem=n*1099511627776", 8, 8, "smem is");
  eval_refuses("grid=m,block=n", 8, 2048, "for shape 8x2048"); /* the shape is named */
}

/* Fuzz-like: every prefix and every one-character corruption of valid
 * descriptions either parses and evaluates, or is refused with a message;
 * never a crash or an unterminated message (ASan runs this too). */
static void mangled_inputs(void **state) {
  static const char *const valid[] = {"grid=cdiv(m,4),2,block=32,4,smem=(n+3)*4",
                                      "block=n/2,grid=m*(1+n)/n,smem=0"};
  static const char noise[] = "()+-*/,=mnx0 9@#\t\xff";
  char text[128];
  for (size_t v = 0; v < sizeof valid / sizeof *valid; ++v) {
    size_t len = strlen(valid[v]);
    for (size_t cut = 0; cut <= len; ++cut) {
      for (size_t k = 0; k < sizeof noise; ++k) {
        snprintf(text, sizeof text, "%s", valid[v]);
        if (cut < len) {
          text[cut] = noise[k]; /* the last k is '\0': every prefix */
        }
        struct tb_launch_spec spec;
        struct tb_launch_dims dims;
        struct tb_error err = {0};
        if (tb_launch_spec_parse(text, &spec, &err) == TB_OK) {
          enum tb_status st = tb_launch_spec_eval(&spec, 37, 769, &dims, &err);
          assert_true(st == TB_OK || st == TB_ERR_USAGE);
        } else {
          assert_int_equal(err.status, TB_ERR_USAGE);
          assert_true(strlen(err.message) > 0 && strlen(err.message) < sizeof err.message);
        }
      }
    }
  }
  char deep[600];
  memset(deep, '(', sizeof deep - 1);
  deep[sizeof deep - 1] = '\0';
  parse_refuses(deep, "more than 511 characters");
  char nested[200] = "grid=";
  for (int i = 0; i < 40; ++i) {
    strcat(nested, "(");
  }
  strcat(nested, "m");
  parse_refuses(nested, "nested more than");
  char many[500] = "grid=m";
  for (int i = 0; i < 100; ++i) {
    strcat(many, "+1");
  }
  strcat(many, ",block=1");
  parse_refuses(many, "more than 128 terms");
}

static void write_file(const char *path, const char *contents) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(contents, f);
  fclose(f);
}

static void from_a_file(void **state) {
  char dir[] = "/tmp/tb_launch_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128], arg[160], out[TB_LAUNCH_TEXT_MAX];
  struct tb_error err = {0};
  snprintf(path, sizeof path, "%s/softmax.launch", dir);
  snprintf(arg, sizeof arg, "@%s", path);
  write_file(path, "# one block per row\n\n  grid=m,block=256  \n");
  assert_int_equal(tb_launch_text_resolve(arg, out, sizeof out, &err), TB_OK);
  assert_string_equal(out, "grid=m,block=256");
  write_file(path, "grid=m,block=256\ngrid=m,block=128\n");
  assert_int_equal(tb_launch_text_resolve(arg, out, sizeof out, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "more than one description"));
  tb_error_clear(&err);
  write_file(path, "# nothing\n");
  assert_int_equal(tb_launch_text_resolve(arg, out, sizeof out, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "holds no description"));
  tb_error_clear(&err);
  unlink(path);
  assert_int_equal(tb_launch_text_resolve(arg, out, sizeof out, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "cannot read it"));
  tb_error_clear(&err);
  assert_int_equal(tb_launch_text_resolve("@", out, sizeof out, &err), TB_ERR_USAGE);
  tb_error_clear(&err);
  assert_int_equal(tb_launch_text_resolve("grid=m,block=1", out, sizeof out, &err), TB_OK);
  assert_string_equal(out, "grid=m,block=1");
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_dimension_each), cmocka_unit_test(expressions),
      cmocka_unit_test(refused_syntax),     cmocka_unit_test(refused_values),
      cmocka_unit_test(mangled_inputs),     cmocka_unit_test(from_a_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
