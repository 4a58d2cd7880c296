#include "core/clock.h"

#include <time.h>

int64_t tb_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void tb_utc_timestamp(char *buf, size_t size) {
  time_t now = time(NULL);
  struct tm utc;
  gmtime_r(&now, &utc);
  strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &utc);
}
