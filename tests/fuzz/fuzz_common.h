/* Shared by the fuzz targets (libFuzzer): the entry points' prototypes, a
 * quiet stdout, and property checks that abort with a message. */
#ifndef TB_FUZZ_COMMON_H
#define TB_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where violated properties are reported: a copy of stderr taken before
 * libFuzzer's -close_fd_mask=2 (scripts/fuzz.sh) silences the harness's own
 * messages, so the reason still reaches the log beside the stack. */
static int tb_fuzz_report_fd = 2;

/* Once, from LLVMFuzzerInitialize: the reports the code prints on stdout
 * (tables, compare's verdicts) would only slow the fuzzer down. */
static inline void tb_fuzz_setup(void) {
  int fd = dup(2);
  if (fd >= 0) {
    tb_fuzz_report_fd = fd;
  }
  if (freopen("/dev/null", "w", stdout) == NULL) {
    abort();
  }
}

/* A property that must hold: libFuzzer records the input as a crash. */
#define TB_FUZZ_CHECK(cond, ...)                                                                   \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      dprintf(tb_fuzz_report_fd, "fuzz property violated (%s:%d): %s: ", __FILE__, __LINE__,       \
              #cond);                                                                              \
      dprintf(tb_fuzz_report_fd, __VA_ARGS__);                                                     \
      dprintf(tb_fuzz_report_fd, "\n");                                                            \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

/* The bytes up to the first NUL as a C string in an allocation of exactly
 * its length, so a read past the terminator is an ASan report; NULL when
 * memory ran out. */
static inline char *tb_fuzz_string(const uint8_t *data, size_t size) {
  size_t len = strnlen((const char *)data, size);
  char *text = malloc(len + 1);
  if (text != NULL) {
    memcpy(text, data, len);
    text[len] = '\0';
  }
  return text;
}

#endif
