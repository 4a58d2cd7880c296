#include "measure/case_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/poison.h"
#include "measure/defences.h"
#include "measure/device_phase.h"
#include "measure/plausible.h"

/* GPU providers: control and probe on the provider's stream. */
static void measure_device(struct tb_provider *p, const struct tb_measure_options *opt,
                           struct tb_case_result *r) {
  if (!p->ops->has_device(p)) {
    r->device_unavailable_reason = "the provider runs on the CPU: no device clock";
    return;
  }
#ifdef TB_HAVE_TIMING
  r->device = calloc(1, sizeof *r->device);
  if (r->device == NULL || !tb_measure_device_phase(p, opt, &r->host, r->device)) {
    r->device_unavailable_reason = "out of memory in the device phase";
    return;
  }
  r->device_measured = r->device->control_complete;
  if (!r->device_measured) {
    r->device_unavailable_reason = "device timing incomplete: see device.errors";
  }
#else
  r->device_unavailable_reason = "this build has no timing library (built without CUPTI headers)";
#endif
}

/* Keeps what the provider knows of the prepared case for the results. */
static void keep_provider_facts(struct tb_provider *p, struct tb_case_result *r) {
  p->ops->details(p, &r->provider_details);
  const char *sha = NULL;
  const char *source = p->ops->source(p, &sha);
  if (source != NULL && sha != NULL) {
    r->source = strdup(source);
    snprintf(r->source_sha256, sizeof r->source_sha256, "%s", sha);
  }
}

/* The decoy written over the outputs before every timed batch: the fresh
 * inputs' oracle as floats (a finite answer, plausible and wrong for the
 * case's own inputs: a kernel cannot tell it from an earlier result without
 * remembering its own), else TB_DECOY_BITS everywhere. NULL when the
 * provider writes no decoy, or out of memory. */
static float *make_decoy(const struct tb_provider *p, const struct tb_case_data *data,
                         const struct tb_fresh_inputs *fresh) {
  size_t count = data->output.storage_elems;
  float *decoy = p->ops->decoy_output != NULL ? malloc(count * sizeof *decoy) : NULL;
  if (decoy == NULL) {
    return NULL;
  }
  if (fresh->made) {
    for (size_t i = 0; i < count; ++i) {
      decoy[i] = (float)fresh->reference[i];
    }
  } else {
    tb_decoy_fill(decoy, count);
  }
  return decoy;
}

enum tb_status tb_run_case(struct tb_provider *p, const struct tb_case *c,
                           const struct tb_case_data *data, const double *reference,
                           struct tb_fresh_inputs *shared_fresh,
                           const struct tb_measure_options *opt, struct tb_case_result *r) {
  memset(r, 0, sizeof *r);
  r->c = *c;
  tb_case_id(&r->c, r->id, sizeof r->id);
  r->backend = p->backend;
  r->output_allocation = p->output_allocation;
  r->minimal_bytes = tb_op_minimal_bytes(r->c.op->op, r->c.shape);

  struct tb_error err = {0};
  struct tb_input_hashes before; /* before any call of this provider */
  tb_hash_inputs(data, &before);
  /* made before the timings: their oracle is also the decoy */
  struct tb_fresh_inputs own = {0};
  struct tb_fresh_inputs *fresh = shared_fresh != NULL ? shared_fresh : &own;
  float *decoy = NULL;
  /* the plan step, then prepare runs what it planned; the record keeps the
   * plan of a prepared case: the plan that ran */
  struct tb_exec_plan plan;
  if (p->ops->plan(p, c, &plan, &err) == TB_OK &&
      p->ops->prepare(p, c, data, &plan, &err) == TB_OK) {
    /* a worker knows its backend and output policy only once prepared */
    r->backend = p->backend;
    r->output_allocation = p->output_allocation;
    r->plan = plan;
    keep_provider_facts(p, r);
    /* only for a provider that uses them, once a case (a second oracle
     * costs as much as the first: seconds at 32768x8192) */
    bool wants_fresh = p->ops->decoy_output != NULL || p->ops->load_inputs != NULL;
    if (wants_fresh &&
        (fresh->attempted || tb_fresh_inputs_make(data, opt->seed, fresh, &err) == TB_OK)) {
      decoy = make_decoy(p, data, fresh);
    }
    if (err.status == TB_OK &&
        tb_measure_host_phase(p, opt, decoy, data->output.storage_elems, &r->host, &err) == TB_OK) {
      r->host_measured = true;
      measure_device(p, opt, r);
      if (!tb_case_on_gpu(r)) { /* the plausibility gate's ceiling, beside the case */
        tb_measure_host_copies(r->minimal_bytes, &r->plausible);
      }
    }
    if (err.status == TB_OK) {
      tb_validate_and_defend(p, c, data, reference, &before, wants_fresh ? fresh : NULL, opt, r,
                             &err);
    }
  }
  free(decoy);
  tb_fresh_inputs_free(&own);
  p->ops->release(p);
  if (err.status != TB_OK) {
    snprintf(r->error, sizeof r->error, "%s", err.message);
  } else {
    tb_defence_failure(r, r->error, sizeof r->error); /* wrong output: every_call */
  }
  /* Once the device phase ran, its control samples are required. */
  int device_required = r->device != NULL;
  if (err.status == TB_OK && device_required && !r->device_measured && r->error[0] == '\0') {
    snprintf(r->error, sizeof r->error, "%s", r->device_unavailable_reason);
  }
  bool defended = true;
  for (int d = 0; d < TB_DEFENCE_COUNT; ++d) {
    defended = defended && r->defences[d].outcome != TB_DEFENCE_FAILED;
  }
  r->valid = r->host_measured && r->validated && r->validation.passed && defended &&
             (!device_required || r->device_measured);
  return err.status == TB_ERR_SYSTEM ? TB_ERR_SYSTEM : TB_OK;
}
