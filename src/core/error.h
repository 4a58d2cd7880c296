/* Error records: every fallible function returns a tb_status and fills a
 * tb_error with a message a user can act on. The CLI maps the status to the
 * process exit code (2 for bad usage or input, 1 for a failed run). */
#ifndef TB_CORE_ERROR_H
#define TB_CORE_ERROR_H

#include <stdarg.h>

enum tb_status {
  TB_OK = 0,
  TB_ERR_USAGE = 2,      /* bad flags or arguments: exit 2 */
  TB_ERR_INPUT = 3,      /* bad input data or files: exit 2 */
  TB_ERR_RUN = 4,        /* the run itself failed: exit 1 */
  TB_ERR_SYSTEM = 5,     /* the OS refused something (I/O, memory): exit 1 */
  TB_ERR_UNAVAILABLE = 6 /* a capability (driver, device) is absent: exit 1 */
};

struct tb_error {
  enum tb_status status;
  char message[1024];
};

/* Records the first failure only: later calls keep the original cause. */
enum tb_status tb_fail(struct tb_error *err, enum tb_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void tb_error_clear(struct tb_error *err);

/* Process exit code for a status: 0, 1 or 2. */
int tb_exit_code(enum tb_status status);

#endif
