#include "backends/user_source.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provenance/hash.h"

bool tb_user_source_is_cu(const char *path) {
  size_t len = strlen(path);
  return len > 3 && strcmp(path + len - 3, ".cu") == 0;
}

/* The whole file, NUL-terminated, or NULL with the reason in err. */
static char *read_text(const char *path, size_t *size, struct tb_error *err) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    tb_fail(err, TB_ERR_USAGE, "--kernel %s: cannot read it: %s", path, strerror(errno));
    return NULL;
  }
  char *text = malloc(TB_USER_SOURCE_MAX_BYTES + 1);
  size_t got = text != NULL ? fread(text, 1, TB_USER_SOURCE_MAX_BYTES + 1, f) : 0;
  fclose(f);
  if (text == NULL) {
    tb_fail(err, TB_ERR_SYSTEM, "out of memory reading %s", path);
  } else if (got > TB_USER_SOURCE_MAX_BYTES) {
    tb_fail(err, TB_ERR_USAGE, "--kernel %s: larger than %u bytes; a kernel source is not", path,
            TB_USER_SOURCE_MAX_BYTES);
  } else if (got == 0 || memchr(text, '\0', got) != NULL) {
    tb_fail(err, TB_ERR_USAGE, "--kernel %s: %s, not CUDA source text", path,
            got == 0 ? "empty" : "binary");
  } else {
    text[got] = '\0';
    *size = got;
    return text;
  }
  free(text);
  return NULL;
}

enum tb_status tb_user_source_open(const char *path, const char *launch, struct tb_user_source *src,
                                   struct tb_error *err) {
  memset(src, 0, sizeof *src);
  char resolved[PATH_MAX];
  if (realpath(path, resolved) == NULL) {
    return tb_fail(err, TB_ERR_USAGE, "--kernel %s: no such file (give the path of a .cu)", path);
  }
  snprintf(src->path, sizeof src->path, "%s", resolved);
  const char *slash = strrchr(resolved, '/');
  snprintf(src->file_name, sizeof src->file_name, "%.255s", slash != NULL ? slash + 1 : resolved);
  src->text = read_text(resolved, &src->size, err);
  if (src->text == NULL) {
    return err->status;
  }
  /* the digest of the bytes in memory: those are compiled and archived */
  tb_sha256_buffer(src->text, src->size, src->sha256);
  char text[TB_LAUNCH_TEXT_MAX];
  if (tb_launch_text_resolve(launch, text, sizeof text, err) != TB_OK ||
      tb_launch_spec_parse(text, &src->launch, err) != TB_OK) {
    tb_user_source_close(src);
    return err->status;
  }
  return TB_OK;
}

/* Whether `name` occurs in `text` as a whole identifier. */
static bool has_identifier(const char *text, const char *name) {
  size_t len = strlen(name);
  for (const char *p = strstr(text, name); p != NULL; p = strstr(p + 1, name)) {
    char before = p > text ? p[-1] : ' ', after = p[len];
    bool edge_before = !(before == '_' || (before >= '0' && before <= '9') ||
                         (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z'));
    bool edge_after = !(after == '_' || (after >= '0' && after <= '9') ||
                        (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z'));
    if (edge_before && edge_after) {
      return true;
    }
  }
  return false;
}

enum tb_status tb_user_source_check_ops(const struct tb_user_source *src,
                                        const struct tb_op_info *const *ops, size_t count,
                                        struct tb_error *err) {
  for (size_t i = 0; i < count; ++i) {
    if (ops[i]->is_matmul) {
      return tb_fail(err, TB_ERR_USAGE,
                     "--kernel: gemm is not in the user kernel contract; leave it out of --ops "
                     "(for example --ops softmax)");
    }
    char name[64];
    snprintf(name, sizeof name, "tb_user_%s", ops[i]->name);
    if (!has_identifier(src->text, name)) {
      return tb_fail(err, TB_ERR_USAGE,
                     "--kernel %s has no entry point %s: leave %s out of --ops, or add "
                     "extern \"C\" __global__ void %s(...) (docs/user-kernels.md)",
                     src->file_name, name, ops[i]->name, name);
    }
  }
  return TB_OK;
}

enum tb_status tb_user_source_check_shapes(const struct tb_user_source *src,
                                           const struct tb_shape *shapes, size_t count,
                                           struct tb_error *err) {
  for (size_t i = 0; i < count; ++i) {
    struct tb_launch_dims dims;
    if (tb_launch_spec_eval(&src->launch, (int64_t)shapes[i].m, (int64_t)shapes[i].n, &dims, err) !=
        TB_OK) {
      return err->status;
    }
  }
  return TB_OK;
}

void tb_user_source_close(struct tb_user_source *src) {
  free(src->text);
  memset(src, 0, sizeof *src);
}
