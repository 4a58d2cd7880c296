#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/resources.h"
#include "provenance/hash.h"
#include "provenance/provenance.h"

#ifndef TB_SOURCE_DIR
#define TB_SOURCE_DIR "."
#endif

extern char **environ;

/* Reads everything from fd; the caller frees. NULL when out of memory. */
static char *read_all(int fd, size_t *size) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  ssize_t got;
  while (buf != NULL &&
         ((got = read(fd, buf + len, cap - len - 1)) > 0 || (got < 0 && errno == EINTR))) {
    if (got < 0) {
      continue;
    }
    len += (size_t)got;
    if (cap - len < 2) {
      char *bigger = realloc(buf, cap * 2);
      if (bigger == NULL) {
        free(buf);
      }
      buf = bigger;
      cap *= 2;
    }
  }
  if (buf != NULL) {
    buf[len] = '\0';
    *size = len;
  }
  return buf;
}

/* Runs `git -C <source dir> <args...>` without a shell; returns its whole
 * stdout (caller frees) or NULL when git is missing or failed. */
static char *git_output(const char *const *args, size_t *size) {
  /* --no-optional-locks: a run never takes the index lock from a user's git */
  char *argv[9] = {"git", "--no-optional-locks", "-C", TB_SOURCE_DIR};
  size_t n = 4;
  for (; *args != NULL && n < 8; ++args) {
    argv[n++] = (char *)*args;
  }
  argv[n] = NULL;
  int out[2];
  if (pipe(out) != 0) {
    return NULL;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, "git", &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  char *text = rc == 0 ? read_all(out[0], size) : NULL;
  close(out[0]);
  int status = 0;
  pid_t waited = 0;
  while (rc == 0 && (waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (rc == 0 && (waited != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
    free(text);
    text = NULL;
  }
  return text;
}

static json_t *git_unavailable(json_t *git, const char *why) {
  json_object_set_new(git, "commit", json_null());
  json_object_set_new(git, "dirty", json_null());
  json_object_set_new(git, "diff_sha256", json_null());
  json_object_set_new(git, "unavailable_reason", json_string(why));
  return git;
}

json_t *tb_capture_git(void) {
  json_t *git = json_object();
  /* An installed or copied binary has no source tree of its own: the
   * checkout at the path it was built from may hold other code by now. */
  if (!tb_running_from_build_tree()) {
    json_object_set_new(git, "source_dir", json_null());
    return git_unavailable(git, "not run from its build tree (installed or copied binary)");
  }
  json_object_set_new(git, "source_dir", json_string(TB_SOURCE_DIR));
  size_t size = 0;
  char *head = git_output((const char *[]){"rev-parse", "HEAD", NULL}, &size);
  if (head == NULL) {
    return git_unavailable(git, "the source tree is not a git checkout or git is missing");
  }
  head[strcspn(head, "\n")] = '\0';
  json_object_set_new(git, "commit", json_string(head));
  free(head);
  char *status = git_output((const char *[]){"status", "--porcelain", NULL}, &size);
  json_object_set_new(git, "dirty", status ? json_boolean(size > 0) : json_null());
  free(status);
  /* The diff of tracked files; untracked files are listed by status only. */
  char *diff = git_output((const char *[]){"diff", "HEAD", NULL}, &size);
  if (diff != NULL) {
    char hex[TB_SHA256_HEX_LEN];
    tb_sha256_buffer(diff, size, hex);
    json_object_set_new(git, "diff_sha256", json_string(hex));
    free(diff);
  } else {
    json_object_set_new(git, "diff_sha256", json_null());
  }
  return git;
}
