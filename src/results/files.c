#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/results.h"

static enum tb_status make_dirs(const char *dir, struct tb_error *err) {
  char path[PATH_MAX];
  if (dir[0] == '\0') {
    return tb_fail(err, TB_ERR_USAGE, "--out needs a directory name");
  }
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
    return tb_fail(err, TB_ERR_USAGE, "output path is too long: %s", dir);
  }
  for (char *p = path + 1; *p; ++p) {
    if (*p == '/') {
      *p = '\0';
      if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        return tb_fail(err, TB_ERR_INPUT, "cannot create directory %s: %s", path, strerror(errno));
      }
      *p = '/';
    }
  }
  if (mkdir(path, 0755) != 0 && errno != EEXIST) {
    return tb_fail(err, TB_ERR_INPUT, "cannot create directory %s: %s", path, strerror(errno));
  }
  struct stat st; /* EEXIST also answers a dangling symbolic link */
  if (stat(path, &st) != 0) {
    return tb_fail(err, TB_ERR_INPUT, "--out %s is not a usable directory: %s", dir,
                   strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return tb_fail(err, TB_ERR_USAGE, "--out %s exists and is not a directory", dir);
  }
  return TB_OK;
}

/* The pid in a claim: "pid N" inside the claim file, or the N of the
 * ".tilebench-claim.N" a run writes just before linking it into place. */
static long claim_pid(const char *dir, const char *name) {
  static const char prefix[] = TB_CLAIM_FILE ".";
  if (strncmp(name, prefix, sizeof prefix - 1) == 0) {
    return strtol(name + sizeof prefix - 1, NULL, 10);
  }
  char path[PATH_MAX + 300], line[64] = "";
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  long pid = 0;
  if (f != NULL) {
    if (fgets(line, sizeof line, f) != NULL) {
      sscanf(line, "pid %ld", &pid);
    }
    fclose(f);
  }
  return pid;
}

/* What a directory holds that explains why it is not empty: the claim of
 * another run and a partial results file left by a killed one. */
static void describe_leftovers(const char *dir, char *out, size_t size) {
  static const char partial[] = "." TB_RESULTS_FILE ".partial-"; /* see write_atomic */
  out[0] = '\0';
  long pid = 0;
  char partial_name[256] = "";
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, TB_CLAIM_FILE, sizeof TB_CLAIM_FILE - 1) == 0 && pid == 0) {
      pid = claim_pid(dir, e->d_name);
    } else if (strncmp(e->d_name, partial, sizeof partial - 1) == 0) {
      snprintf(partial_name, sizeof partial_name, "%s", e->d_name);
    }
  }
  if (d != NULL) {
    closedir(d);
  }
  size_t used = 0;
  if (pid > 0) {
    int running = pid <= INT_MAX && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
    used = (size_t)snprintf(
        out, size,
        running ? "; it is claimed by a tilebench run in progress (pid %ld)"
                : "; it was claimed by tilebench pid %ld, which is no longer running and never "
                  "finished its results (killed, or its final write failed)",
        pid);
  }
  if (partial_name[0] != '\0' && used < size) {
    snprintf(out + used, size - used,
             "; %s/%s is the results file of a run killed while writing it (never linked "
             "into place, so unchecked): inspect it by hand or remove the directory",
             dir, partial_name);
  }
}

static enum tb_status require_empty(const char *dir, struct tb_error *err) {
  DIR *d = opendir(dir);
  if (d == NULL) {
    return tb_fail(err, TB_ERR_INPUT, "cannot read --out directory %s: %s", dir, strerror(errno));
  }
  struct dirent *e;
  int empty = 1;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      empty = 0;
      break;
    }
  }
  closedir(d);
  if (!empty) {
    char why[PATH_MAX + 400];
    describe_leftovers(dir, why, sizeof why);
    return tb_fail(err, TB_ERR_USAGE,
                   "--out %s is not empty%s; results are never overwritten, so give a new "
                   "directory",
                   dir, why);
  }
  return TB_OK;
}

enum tb_status tb_claim_out_dir(const char *dir, struct tb_error *err) {
  if (make_dirs(dir, err) != TB_OK || require_empty(dir, err) != TB_OK) {
    return err->status;
  }
  /* The claim appears whole: written under a name of this process, then
   * linked into place; link() fails for the second of two runs. */
  char claim[PATH_MAX + 32], mine[PATH_MAX + 64];
  snprintf(claim, sizeof claim, "%s/%s", dir, TB_CLAIM_FILE);
  snprintf(mine, sizeof mine, "%s/%s.%ld", dir, TB_CLAIM_FILE, (long)getpid());
  int fd = open(mine, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    return tb_fail(err, TB_ERR_INPUT, "cannot write to --out %s: %s", dir, strerror(errno));
  }
  char text[64];
  int len = snprintf(text, sizeof text, "pid %ld\n", (long)getpid());
  int ok = write(fd, text, (size_t)len) == len && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  int saved = errno;
  int linked = ok && link(mine, claim) == 0;
  if (ok && !linked) {
    saved = errno;
  }
  unlink(mine);
  if (!ok || (!linked && saved != EEXIST)) {
    return tb_fail(err, TB_ERR_INPUT, "cannot write to --out %s: %s", dir, strerror(saved));
  }
  if (!linked) { /* the other run's claim is whole: name it */
    return require_empty(dir, err) != TB_OK
               ? err->status
               : tb_fail(err, TB_ERR_USAGE, "--out %s was claimed by another run a moment ago",
                         dir);
  }
  return TB_OK;
}

void tb_release_out_dir(const char *dir) {
  char claim[PATH_MAX + 32];
  snprintf(claim, sizeof claim, "%s/%s", dir, TB_CLAIM_FILE);
  unlink(claim);
}

enum tb_status tb_abandon_out_dir(const char *dir) {
  tb_release_out_dir(dir);
  return rmdir(dir) == 0 ? TB_OK : TB_ERR_SYSTEM;
}

/* Writes through dir/.name.partial-PID, fsyncs, then links into place:
 * link() fails rather than replacing an existing file. */
static enum tb_status write_atomic(const char *dir, const char *name,
                                   int (*emit)(FILE *, const void *), const void *payload,
                                   struct tb_error *err) {
  char final_path[PATH_MAX], temp_path[PATH_MAX];
  if (snprintf(final_path, sizeof final_path, "%s/%s", dir, name) >= (int)sizeof final_path ||
      snprintf(temp_path, sizeof temp_path, "%s/.%s.partial-%ld", dir, name, (long)getpid()) >=
          (int)sizeof temp_path) {
    return tb_fail(err, TB_ERR_USAGE, "path too long: %s/%s", dir, name);
  }
  int fd = open(temp_path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    return tb_fail(err, TB_ERR_SYSTEM, "cannot create %s: %s", temp_path, strerror(errno));
  }
  FILE *f = fdopen(fd, "w");
  int ok = f != NULL && emit(f, payload) == 0 && fflush(f) == 0 && fsync(fd) == 0;
  if (f != NULL) {
    ok = (fclose(f) == 0) && ok;
  } else {
    close(fd);
  }
  if (!ok) {
    unlink(temp_path);
    return tb_fail(err, TB_ERR_SYSTEM, "cannot write %s: %s", final_path, strerror(errno));
  }
  if (link(temp_path, final_path) != 0) {
    int saved = errno;
    unlink(temp_path);
    return tb_fail(err, TB_ERR_SYSTEM, "cannot create %s: %s%s", final_path, strerror(saved),
                   saved == EEXIST ? " (existing files are never overwritten)" : "");
  }
  unlink(temp_path);
  return TB_OK;
}

static int emit_json(FILE *f, const void *doc) {
  int rc =
      json_dumpf((const json_t *)doc, f, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  return rc == 0 && fputc('\n', f) != EOF ? 0 : -1;
}

static int emit_text(FILE *f, const void *text) {
  return fputs((const char *)text, f) < 0 ? -1 : 0;
}

struct byte_span {
  const char *bytes;
  size_t size;
};

static int emit_bytes(FILE *f, const void *payload) {
  const struct byte_span *span = payload;
  return fwrite(span->bytes, 1, span->size, f) == span->size ? 0 : -1;
}

enum tb_status tb_write_bytes_atomic(const char *dir, const char *name, const char *bytes,
                                     size_t size, struct tb_error *err) {
  struct byte_span span = {bytes, size};
  return write_atomic(dir, name, emit_bytes, &span, err);
}

enum tb_status tb_write_json_atomic(const char *dir, const char *name, const json_t *doc,
                                    struct tb_error *err) {
  return write_atomic(dir, name, emit_json, doc, err);
}

enum tb_status tb_archive_source(const char *dir, const char *sha256, const char *source,
                                 struct tb_error *err) {
  char sources[PATH_MAX], name[96], path[PATH_MAX + 100];
  snprintf(sources, sizeof sources, "%s/sources", dir);
  if (mkdir(sources, 0755) != 0 && errno != EEXIST) {
    return tb_fail(err, TB_ERR_SYSTEM, "cannot create %s: %s", sources, strerror(errno));
  }
  snprintf(name, sizeof name, "%s.cu", sha256);
  snprintf(path, sizeof path, "%s/%s", sources, name);
  if (access(path, F_OK) == 0) {
    return TB_OK;
  }
  return tb_write_text_atomic(sources, name, source, err);
}

enum tb_status tb_write_text_atomic(const char *dir, const char *name, const char *text,
                                    struct tb_error *err) {
  return write_atomic(dir, name, emit_text, text, err);
}
