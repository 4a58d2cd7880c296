/* Validation and the defences of docs/method.md §8, after the timings: the
 * output validated on several calls with poison before each, the inputs
 * compared with their hashes from before any call, one more call on inputs
 * of another seed, and the guard zones around the provider's buffers. */
#ifndef TB_MEASURE_DEFENCES_H
#define TB_MEASURE_DEFENCES_H

#include "measure/host_phase.h"
#include "provenance/hash.h"
#include "results/case_result.h"

/* Validation calls, the output poisoned before each: a kernel that computes
 * on only some calls (every other, every third, the first) fails one. */
#define TB_VALIDATION_CALLS 3

/* SHA-256 of every input's whole storage before the provider sees it. */
struct tb_input_hashes {
  size_t count;
  char sha256[TB_MAX_INPUTS][TB_SHA256_HEX_LEN];
};

void tb_hash_inputs(const struct tb_case_data *data, struct tb_input_hashes *out);

/* The case's tolerance (docs/tolerances.md) times `scale` (0 means 1). */
struct tb_tolerance tb_case_tolerance(const struct tb_case *c, double scale);

/* The second inputs of fresh_inputs: the same case from seed `seed xor 1`,
 * and their oracle; `made` false (with `why`) where they do not fit in
 * memory. The case runner makes them before the timings, where their oracle
 * is the decoy written over the outputs before each timed batch; `attempted`
 * once make ran, so the providers of one case share a single attempt. */
struct tb_fresh_inputs {
  bool attempted;
  bool made;
  unsigned long long seed; /* the run's seed xor 1 */
  struct tb_case_data data;
  double *reference;
  char why[400];
};

/* Fails only when memory ran out for the system (err says so). */
enum tb_status tb_fresh_inputs_make(const struct tb_case_data *data, unsigned long long seed,
                                    struct tb_fresh_inputs *f, struct tb_error *err);
void tb_fresh_inputs_free(struct tb_fresh_inputs *f);

/* Runs the validation calls and every defence on the prepared case; fills
 * r->validation, r->validated, r->defences and r->defences_ran. `fresh`:
 * the fresh inputs made before the timings, or NULL to make them here.
 * Returns a failure only when a primitive failed (err says which); a kernel
 * caught by a defence is an outcome, not an error. */
enum tb_status tb_validate_and_defend(struct tb_provider *p, const struct tb_case *c,
                                      const struct tb_case_data *data, const double *reference,
                                      const struct tb_input_hashes *before,
                                      const struct tb_fresh_inputs *fresh,
                                      const struct tb_measure_options *opt,
                                      struct tb_case_result *r, struct tb_error *err);

/* The defence launches_on_stream from the device phase's probe samples
 * (r->device): failed when a probe sample saw no kernel or a kernel on a
 * stream other than the provider's, not run without a device clock or probe
 * samples (the reason recorded). Run by tb_validate_and_defend. */
void tb_defend_launches_on_stream(struct tb_provider *p, struct tb_case_result *r);

/* The reason the case is invalid, the first failed defence in the order that
 * explains the others (a changed input or a write outside the output makes
 * later outputs wrong), written to buf; false when none failed. */
bool tb_defence_failure(const struct tb_case_result *r, char *buf, size_t size);

#endif
