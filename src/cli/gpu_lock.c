#include "cli/gpu_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

const char *tb_gpu_lock_dir(void) {
  const char *dir = getenv("TILEBENCH_LOCK_DIR");
  return dir != NULL && dir[0] != '\0' ? dir : "/tmp";
}

/* The pid the holder wrote into the file, or 0. */
static long holder_pid(int fd) {
  char text[32] = "";
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  return n > 0 ? strtol(text, NULL, 10) : 0;
}

enum tb_status tb_gpu_lock_acquire(const char *uuid, struct tb_error *err) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/tilebench-gpu-%s.lock", tb_gpu_lock_dir(), uuid) >=
      (int)sizeof path) {
    return tb_fail(err, TB_ERR_SYSTEM, "the GPU lock's path is too long");
  }
  /* the descriptor stays open (and the lock held) until the process exits */
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EACCES) {
    fd = open(path, O_RDONLY | O_CLOEXEC); /* another user's file: locks all the same */
  }
  if (fd < 0) {
    return tb_fail(err, TB_ERR_SYSTEM, "cannot open the GPU lock %s: %s", path, strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    long pid = errno == EWOULDBLOCK ? holder_pid(fd) : 0;
    close(fd);
    if (pid == 0) {
      return tb_fail(err, TB_ERR_USAGE,
                     "GPU %s is being timed by another tilebench campaign "
                     "(lock %s); wait for it to finish",
                     uuid, path);
    }
    return tb_fail(err, TB_ERR_USAGE,
                   "GPU %s is being timed by another tilebench campaign (pid %ld, lock %s); two "
                   "campaigns on one GPU would time each other: wait for it to finish",
                   uuid, pid, path);
  }
  /* the pid, for the message of a campaign refused; the lock holds without it */
  char text[32];
  int len = snprintf(text, sizeof text, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) == 0) {
    ssize_t written = pwrite(fd, text, (size_t)len, 0);
    (void)written;
  }
  return TB_OK;
}
