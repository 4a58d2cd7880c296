/* Reading results files. A results file is outside input (any tool, any
 * version, any editor may have written it), so reading is bounded and the
 * document's structure is checked before any reader trusts a field: after
 * a successful load, every case has a string id, op and provider, a boolean
 * valid and whole-number sizes, and every artifact string fields. */
#ifndef TB_RESULTS_LOAD_H
#define TB_RESULTS_LOAD_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

/* The most bytes a results file may hold, decompressed. */
#define TB_RESULTS_MAX_BYTES ((size_t)1 << 30)

/* DIR/results.json, or DIR/results.json.gz where a large run is stored
 * compressed (committed evidence). TB_ERR_INPUT (exit 2) with a message
 * naming the file and the field when anything is wrong. */
enum tb_status tb_results_load_dir(const char *dir, json_t **doc, struct tb_error *err);

/* One file by path, gzip-compressed or not; `sha256_hex` (65 bytes, or
 * NULL) receives the SHA-256 of the bytes as written, decompressed. */
enum tb_status tb_results_load(const char *path, json_t **doc, char *sha256_hex,
                               struct tb_error *err);

/* The bytes of a results file as written (decompressed when .gz), bounded
 * by TB_RESULTS_MAX_BYTES; the caller frees *bytes. */
enum tb_status tb_results_read(const char *path, char **bytes, size_t *size, struct tb_error *err);

/* DIR/results.json or DIR/results.json.gz, whichever exists, into path. */
enum tb_status tb_results_path(const char *dir, char *path, size_t size, struct tb_error *err);

/* Parses a document in memory and checks its structure; `name` labels the
 * messages. */
enum tb_status tb_results_parse(const char *bytes, size_t size, const char *name, json_t **doc,
                                struct tb_error *err);

/* The string under key, or fallback when it is absent or not a string: the
 * one way readers take a string they did not check themselves. */
const char *tb_json_str(const json_t *object, const char *key, const char *fallback);

#endif
