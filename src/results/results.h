/* The results file (docs/results-schema.md): one JSON document per run. */
#ifndef TB_RESULTS_RESULTS_H
#define TB_RESULTS_RESULTS_H

#include <jansson.h>

#include "core/error.h"
#include "measure/case_result.h"

#define TB_RESULTS_SCHEMA "tilebench.results"
#define TB_RESULTS_SCHEMA_VERSION 1
#define TB_RESULTS_FILE "results.json"

/* JSON number, or null for NaN and infinities (JSON has neither). */
json_t *tb_json_number(double value);

json_t *tb_case_result_to_json(const struct tb_case_result *r);

/* --out must name a new or empty directory: existing results are never
 * overwritten or mixed with new ones. Creates it (parents too) if absent. */
enum tb_status tb_prepare_out_dir(const char *dir, struct tb_error *err);

/* Writes doc to dir/name through a temporary file in the same directory,
 * flushed and renamed into place only when complete. Refuses to replace an
 * existing file. */
enum tb_status tb_write_json_atomic(const char *dir, const char *name, const json_t *doc,
                                    struct tb_error *err);

/* Writes dir/sources/<sha256>.cu once (a source already archived under its
 * hash is the same bytes, so it is left as it is). */
enum tb_status tb_archive_source(const char *dir, const char *sha256, const char *source,
                                 struct tb_error *err);

/* Same contract for text (reports). */
enum tb_status tb_write_text_atomic(const char *dir, const char *name, const char *text,
                                    struct tb_error *err);

#endif
