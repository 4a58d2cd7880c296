/* The results file (docs/results-schema.md): one JSON document per run. */
#ifndef TB_RESULTS_RESULTS_H
#define TB_RESULTS_RESULTS_H

#include <jansson.h>

#include "core/error.h"
#include "results/case_result.h"
#include "results/json_number.h" /* tb_json_number */

#define TB_RESULTS_SCHEMA "tilebench.results"
#define TB_RESULTS_SCHEMA_VERSION 9 /* docs/results-schema.md: what each version holds */
#define TB_RESULTS_FILE "results.json"

json_t *tb_case_result_to_json(const struct tb_case_result *r);

/* The marker a run creates in its --out directory before it measures and
 * removes once results.json is in place ("pid N"). */
#define TB_CLAIM_FILE ".tilebench-claim"

/* Claims --out for one run before anything is measured: a new or empty
 * directory (created with its parents), checked writable by creating the
 * claim marker exclusively, so a second run into it is refused at once.
 * Existing results are never overwritten or mixed with new ones; the
 * refusal names another run's claim or a killed run's partial file. */
enum tb_status tb_claim_out_dir(const char *dir, struct tb_error *err);

/* Removes the claim marker (the results file is in place). */
void tb_release_out_dir(const char *dir);

/* Removes the claim and the directory, for a run refused before it wrote
 * anything; a directory that is not empty is left as it is. */
enum tb_status tb_abandon_out_dir(const char *dir);

/* Writes doc to dir/name through a temporary file in the same directory,
 * flushed and renamed into place only when complete. Refuses to replace an
 * existing file. */
enum tb_status tb_write_json_atomic(const char *dir, const char *name, const json_t *doc,
                                    struct tb_error *err);

/* Writes dir/sources/<sha256>.cu once (a source already archived under its
 * hash is the same bytes, so it is left as it is). */
enum tb_status tb_archive_source(const char *dir, const char *sha256, const char *source,
                                 struct tb_error *err);

/* Same contract for bytes (a shard's results file, copied as it is). */
enum tb_status tb_write_bytes_atomic(const char *dir, const char *name, const char *bytes,
                                     size_t size, struct tb_error *err);

/* Same contract for text (reports). */
enum tb_status tb_write_text_atomic(const char *dir, const char *name, const char *text,
                                    struct tb_error *err);

#endif
