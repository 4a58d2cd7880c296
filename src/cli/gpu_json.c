#include "cli/gpu_json.h"

#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/driver.h"

static json_t *gpu_json(const struct tb_gpu_facts *g) {
  if (!g->ok) {
    return json_pack("{s:i, s:s}", "ordinal", g->ordinal, "error", "cuDeviceGet failed");
  }
  char capability[16];
  snprintf(capability, sizeof capability, "%d.%d", g->cc_major, g->cc_minor);
  return json_pack("{s:i, s:s, s:o, s:s, s:i, s:i, s:I, s:i}", "ordinal", g->ordinal, "name",
                   g->name, "uuid", g->uuid[0] != '\0' ? json_string(g->uuid) : json_null(),
                   "compute_capability", capability, "multiprocessors", g->multiprocessors,
                   "l2_bytes", g->l2_bytes, "memory_bytes", (json_int_t)g->memory_bytes,
                   "max_sm_clock_khz", g->max_sm_clock_khz);
}

json_t *tb_cuda_describe(void) {
  struct tb_gpu_inventory *inventory = malloc(sizeof *inventory); /* 16 KiB: off the stack */
  if (inventory == NULL) {
    return json_pack("{s:b, s:s}", "available", 0, "reason", "out of memory describing the GPU");
  }
  tb_cuda_inventory_read(inventory);
  json_t *j;
  if (!inventory->available) {
    j = json_pack("{s:b, s:s}", "available", 0, "reason", inventory->reason);
  } else {
    json_t *devices = json_array();
    for (int i = 0; i < inventory->count; ++i) {
      json_array_append_new(devices, gpu_json(&inventory->devices[i]));
    }
    j = json_pack("{s:b, s:s, s:o}", "available", 1, "driver_cuda_version",
                  inventory->driver_cuda_version, "devices", devices);
  }
  free(inventory);
  return j;
}
