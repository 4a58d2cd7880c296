#include "results/case_result.h"

#include <stdlib.h>
#include <string.h>

static void free_samples(struct tb_phase_samples *s) {
  free(s->elapsed_ns);
  free(s->harness_ns);
  free(s->per_call_ns);
  memset(s, 0, sizeof *s);
}

void tb_host_phase_free(struct tb_host_phase *phase) {
  free_samples(&phase->throughput);
  free_samples(&phase->latency);
}

void tb_case_result_free(struct tb_case_result *r) {
  tb_host_phase_free(&r->host);
  tb_device_result_free(r->device);
  free(r->device);
  tb_provider_details_free(&r->provider_details);
  free(r->source);
  r->device = NULL;
  r->source = NULL;
}

const char *tb_defence_name(enum tb_defence d) {
  switch (d) {
  case TB_DEFENCE_INPUTS_UNCHANGED: return "inputs_unchanged";
  case TB_DEFENCE_GUARD_ZONES: return "guard_zones";
  case TB_DEFENCE_EVERY_CALL: return "every_call";
  case TB_DEFENCE_FRESH_INPUTS: return "fresh_inputs";
  case TB_DEFENCE_ON_STREAM: return "launches_on_stream";
  case TB_DEFENCE_TIMED_OUTPUTS: return "timed_outputs";
  case TB_DEFENCE_PLAUSIBLE: return "plausible";
  case TB_DEFENCE_COUNT: break;
  }
  return "unknown";
}

const char *tb_defence_outcome_name(enum tb_defence_outcome o) {
  switch (o) {
  case TB_DEFENCE_PASSED: return "passed";
  case TB_DEFENCE_FAILED: return "failed";
  case TB_DEFENCE_NOT_RUN: break;
  }
  return "not_run";
}
