#include "results/case_result.h"

#include <stdlib.h>
#include <string.h>

static void free_samples(struct tb_phase_samples *s) {
  free(s->elapsed_ns);
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
