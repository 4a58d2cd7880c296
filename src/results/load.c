#include "results/load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "provenance/hash.h"
#include "results/results.h"

const char *tb_json_str(const json_t *object, const char *key, const char *fallback) {
  const json_t *v = json_object_get(object, key);
  return json_is_string(v) ? json_string_value(v) : fallback;
}

/* ---- structure ------------------------------------------------------------ */

static enum tb_status need(int ok, const char *name, const char *where, const char *what,
                           struct tb_error *err) {
  return ok ? TB_OK
            : tb_fail(err, TB_ERR_INPUT, "%s is not a valid tilebench results file: %s %s", name,
                      where, what);
}

static int is_string_field(const json_t *o, const char *key) {
  return json_is_string(json_object_get(o, key));
}

static int is_size_field(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_integer(v) && json_integer_value(v) >= 0;
}

static enum tb_status check_case(const json_t *c, size_t index, const char *name,
                                 struct tb_error *err) {
  char where[64];
  snprintf(where, sizeof where, "case %zu:", index);
  const json_t *k = json_object_get(c, "k"), *round = json_object_get(c, "round");
  if (need(json_is_object(c), name, where, "is not an object", err) != TB_OK ||
      need(is_string_field(c, "id") && json_string_length(json_object_get(c, "id")) > 0, name,
           where, "'id' is missing or not a string", err) != TB_OK ||
      need(is_string_field(c, "op"), name, where, "'op' is missing or not a string", err) !=
          TB_OK ||
      need(is_string_field(c, "provider"), name, where, "'provider' is missing or not a string",
           err) != TB_OK ||
      need(json_is_boolean(json_object_get(c, "valid")), name, where,
           "'valid' is missing or not true/false", err) != TB_OK ||
      need(is_size_field(c, "m") && is_size_field(c, "n") && (k == NULL || is_size_field(c, "k")),
           name, where, "'m', 'n' or 'k' is not a whole number", err) != TB_OK ||
      need(round == NULL || is_size_field(c, "round"), name, where, "'round' is not a whole number",
           err) != TB_OK) {
    return err->status;
  }
  return TB_OK;
}

static enum tb_status check_artifacts(const json_t *artifacts, const char *name,
                                      struct tb_error *err) {
  if (artifacts == NULL) {
    return TB_OK;
  }
  if (need(json_is_array(artifacts), name, "provenance.artifacts", "is not an array", err) !=
      TB_OK) {
    return err->status;
  }
  size_t i;
  const json_t *a;
  json_array_foreach(artifacts, i, a) {
    char where[64];
    snprintf(where, sizeof where, "provenance.artifacts[%zu]:", i);
    if (need(is_string_field(a, "path") && is_string_field(a, "role") &&
                 is_string_field(a, "sha256"),
             name, where, "needs string 'path', 'role' and 'sha256'", err) != TB_OK) {
      return err->status;
    }
  }
  return TB_OK;
}

static enum tb_status check_structure(const json_t *doc, const char *name, struct tb_error *err) {
  if (!json_is_object(doc) || strcmp(tb_json_str(doc, "schema", ""), TB_RESULTS_SCHEMA) != 0) {
    return tb_fail(err, TB_ERR_INPUT, "%s is not a tilebench results file", name);
  }
  const json_t *version = json_object_get(doc, "schema_version");
  if (!json_is_integer(version) || json_integer_value(version) < 1 ||
      json_integer_value(version) > TB_RESULTS_SCHEMA_VERSION) {
    return tb_fail(
        err, TB_ERR_INPUT, "%s has schema version %s; this tilebench reads versions 1 to %d", name,
        json_is_integer(version) ? "out of range" : "missing", TB_RESULTS_SCHEMA_VERSION);
  }
  const json_t *cases = json_object_get(doc, "cases");
  const json_t *provenance = json_object_get(doc, "provenance");
  if (need(json_is_object(json_object_get(doc, "run")), name, "'run'", "is not an object", err) !=
          TB_OK ||
      need(json_is_object(provenance), name, "'provenance'", "is not an object", err) != TB_OK ||
      need(json_is_array(cases), name, "'cases'", "is not an array", err) != TB_OK ||
      check_artifacts(json_object_get(provenance, "artifacts"), name, err) != TB_OK) {
    return err->status;
  }
  size_t i;
  const json_t *c;
  json_array_foreach(cases, i, c) {
    if (check_case(c, i, name, err) != TB_OK) {
      return err->status;
    }
  }
  return TB_OK;
}

enum tb_status tb_results_parse(const char *bytes, size_t size, const char *name, json_t **doc,
                                struct tb_error *err) {
  json_error_t jerr;
  *doc = json_loadb(bytes, size, JSON_REJECT_DUPLICATES, &jerr);
  if (*doc == NULL) {
    return tb_fail(err, TB_ERR_INPUT, "cannot read %s: %s (line %d)", name, jerr.text, jerr.line);
  }
  if (check_structure(*doc, name, err) != TB_OK) {
    json_decref(*doc);
    *doc = NULL;
  }
  return err->status;
}

/* ---- files ------------------------------------------------------------------ */

/* Reads at most TB_RESULTS_MAX_BYTES (decompressed) of a regular file. */
static enum tb_status read_bounded(const char *path, char **bytes, size_t *size,
                                   struct tb_error *err) {
  *bytes = NULL;
  *size = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block the open */
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int saved = fd < 0 ? errno : 0;
    if (fd >= 0) {
      close(fd);
    }
    return tb_fail(err, TB_ERR_INPUT, "cannot read %s: %s", path,
                   saved ? strerror(saved) : "not a regular file");
  }
  size_t len = strlen(path);
  int compressed = len > 3 && strcmp(path + len - 3, ".gz") == 0;
  gzFile gz = gzdopen(fd, "rb"); /* reads plain files as they are, too */
  if (gz == NULL) {
    close(fd);
    return tb_fail(err, TB_ERR_SYSTEM, "cannot read %s", path);
  }
  size_t capacity = 1 << 20, used = 0;
  char *buf = malloc(capacity);
  int got = 0;
  while (buf != NULL && (got = gzread(gz, buf + used, (unsigned)(capacity - used))) > 0) {
    used += (size_t)got;
    if (used == capacity && capacity < TB_RESULTS_MAX_BYTES + 1) {
      capacity = capacity * 2 > TB_RESULTS_MAX_BYTES + 1 ? TB_RESULTS_MAX_BYTES + 1 : capacity * 2;
      char *grown = realloc(buf, capacity);
      if (grown == NULL) {
        free(buf);
      }
      buf = grown;
    } else if (used == capacity) {
      break;
    }
  }
  /* a .gz cut short ends in Z_BUF_ERROR with got == 0, not -1: ask zlib */
  int errnum = Z_OK;
  const char *why = gzerror(gz, &errnum);
  if (errnum != Z_OK && got >= 0) {
    got = -1;
  }
  char message[128];
  snprintf(message, sizeof message, "%s", why ? why : "");
  gzclose(gz);
  if (buf == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory reading %s", path);
  }
  if (used > TB_RESULTS_MAX_BYTES || got < 0) {
    free(buf);
    return used > TB_RESULTS_MAX_BYTES
               ? tb_fail(err, TB_ERR_INPUT, "%s holds more than %zu bytes%s", path,
                         TB_RESULTS_MAX_BYTES, compressed ? " decompressed" : "")
               : tb_fail(err, TB_ERR_INPUT, "cannot read %s: %s", path,
                         compressed ? "not a complete gzip file" : message);
  }
  *bytes = buf;
  *size = used;
  return TB_OK;
}

enum tb_status tb_results_read(const char *path, char **bytes, size_t *size, struct tb_error *err) {
  return read_bounded(path, bytes, size, err);
}

enum tb_status tb_results_load(const char *path, json_t **doc, char *sha256_hex,
                               struct tb_error *err) {
  char *bytes = NULL;
  size_t size = 0;
  *doc = NULL;
  if (read_bounded(path, &bytes, &size, err) != TB_OK) {
    return err->status;
  }
  if (sha256_hex != NULL) {
    tb_sha256_buffer(bytes, size, sha256_hex);
  }
  tb_results_parse(bytes, size, path, doc, err);
  free(bytes);
  return err->status;
}

enum tb_status tb_results_path(const char *dir, char *path, size_t size, struct tb_error *err) {
  if (snprintf(path, size, "%s/%s.gz", dir, TB_RESULTS_FILE) >= (int)size) {
    return tb_fail(err, TB_ERR_USAGE, "path too long: %s", dir);
  }
  path[strlen(path) - 3] = '\0';
  if (access(path, F_OK) == 0) {
    return TB_OK;
  }
  strcat(path, ".gz");
  if (access(path, F_OK) == 0) {
    return TB_OK;
  }
  return tb_fail(err, TB_ERR_INPUT, "%s has no %s (nor %s.gz)", dir, TB_RESULTS_FILE,
                 TB_RESULTS_FILE);
}

enum tb_status tb_results_load_dir(const char *dir, json_t **doc, struct tb_error *err) {
  char path[PATH_MAX];
  *doc = NULL;
  if (tb_results_path(dir, path, sizeof path, err) != TB_OK) {
    return err->status;
  }
  return tb_results_load(path, doc, NULL, err);
}
