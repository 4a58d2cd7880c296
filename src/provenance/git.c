#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provenance/hash.h"
#include "provenance/provenance.h"

#ifndef TB_SOURCE_DIR
#define TB_SOURCE_DIR "."
#endif

/* Runs a git command in the source tree; returns its whole stdout (caller
 * frees) or NULL when git failed. */
static char *git_output(const char *args, size_t *size) {
  char command[1024];
  snprintf(command, sizeof command, "git -C '%s' %s 2>/dev/null", TB_SOURCE_DIR, args);
  FILE *pipe = popen(command, "r");
  if (pipe == NULL) {
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, pipe)) > 0) {
    len += got;
    if (cap - len < 2) {
      char *bigger = realloc(buf, cap * 2);
      if (bigger == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
  }
  int status = pclose(pipe);
  if (buf == NULL || status != 0) {
    free(buf);
    return NULL;
  }
  buf[len] = '\0';
  *size = len;
  return buf;
}

json_t *tb_capture_git(void) {
  json_t *git = json_object();
  json_object_set_new(git, "source_dir", json_string(TB_SOURCE_DIR));
  size_t size = 0;
  char *head = git_output("rev-parse HEAD", &size);
  if (head == NULL) {
    json_object_set_new(git, "commit", json_null());
    json_object_set_new(git, "dirty", json_null());
    json_object_set_new(git, "diff_sha256", json_null());
    json_object_set_new(git, "unavailable_reason",
                        json_string("the source tree is not a git checkout or git is missing"));
    return git;
  }
  head[strcspn(head, "\n")] = '\0';
  json_object_set_new(git, "commit", json_string(head));
  free(head);
  char *status = git_output("status --porcelain", &size);
  json_object_set_new(git, "dirty", status ? json_boolean(size > 0) : json_null());
  free(status);
  /* The diff of tracked files; untracked files are listed by status only. */
  char *diff = git_output("diff HEAD", &size);
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
