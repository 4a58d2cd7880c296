#include "providers/provider_details.h"

#include <stdlib.h>
#include <string.h>

struct tb_text_fact tb_text_fact_of(const char *text) {
  struct tb_text_fact f = {TB_FACT_NULL, NULL};
  if (text != NULL) {
    f.text = strdup(text);
    f.state = f.text != NULL ? TB_FACT_SET : TB_FACT_NULL;
  }
  return f;
}

static void free_text(struct tb_text_fact *f) {
  free(f->text);
  f->text = NULL;
  f->state = TB_FACT_ABSENT;
}

static void free_worker(struct tb_torch_worker_facts *w) {
  free_text(&w->torch);
  free_text(&w->cuda_version);
  free_text(&w->device);
  free_text(&w->config);
  for (unsigned i = 0; i < w->env_count; ++i) {
    free(w->thread_env[i].name);
    free_text(&w->thread_env[i].value);
  }
  w->env_count = 0;
}

void tb_provider_details_free(struct tb_provider_details *d) {
  if (d->kind == TB_DETAILS_TORCH) {
    free_worker(&d->as.torch.worker);
    free_text(&d->as.torch.implementation);
  }
  memset(d, 0, sizeof *d);
  d->kind = TB_DETAILS_NONE;
}

const struct tb_buffer_facts *tb_provider_details_buffers(const struct tb_provider_details *d) {
  switch (d->kind) {
  case TB_DETAILS_CUDA_NATIVE: return &d->as.cuda.buffers;
  case TB_DETAILS_CUBLAS: return &d->as.cublas.buffers;
  case TB_DETAILS_TORCH: return d->as.torch.has_buffers ? &d->as.torch.buffers : NULL;
  case TB_DETAILS_USER: return d->as.user.has_buffers ? &d->as.user.buffers : NULL;
  default: return NULL;
  }
}
