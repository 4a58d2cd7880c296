#include "core/parallel.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

struct part_job {
  void (*part)(void *ctx, size_t k, size_t lo, size_t hi);
  void *ctx;
  size_t k, lo, hi;
};

static void *run_part(void *arg) {
  const struct part_job *j = arg;
  j->part(j->ctx, j->k, j->lo, j->hi);
  return NULL;
}

static size_t part_count(size_t n, double work) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  size_t parts = cores < 1 ? 1 : (size_t)cores;
  if (parts > TB_PARALLEL_MAX_PARTS) {
    parts = TB_PARALLEL_MAX_PARTS;
  }
  if (parts > n) {
    parts = n > 0 ? n : 1;
  }
  return work < 1e7 ? 1 : parts;
}

size_t tb_parallel_ranges(size_t n, double work,
                          void (*part)(void *ctx, size_t k, size_t lo, size_t hi), void *ctx) {
  size_t parts = part_count(n, work);
  pthread_t ids[TB_PARALLEL_MAX_PARTS];
  struct part_job jobs[TB_PARALLEL_MAX_PARTS];
  bool running[TB_PARALLEL_MAX_PARTS] = {false};
  for (size_t k = 0; k < parts; ++k) {
    jobs[k] = (struct part_job){part, ctx, k, n / parts * k + (k < n % parts ? k : n % parts), 0};
    jobs[k].hi = jobs[k].lo + n / parts + (k < n % parts ? 1 : 0);
    running[k] = k > 0 && pthread_create(&ids[k], NULL, run_part, &jobs[k]) == 0;
  }
  for (size_t k = 0; k < parts; ++k) {
    if (!running[k]) { /* part 0, or a thread that could not start: here */
      run_part(&jobs[k]);
    }
  }
  for (size_t k = 1; k < parts; ++k) {
    if (running[k]) {
      pthread_join(ids[k], NULL);
    }
  }
  return parts;
}
