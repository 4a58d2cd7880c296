/* tilebench env: what the machine, GPU and driver are now. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/gpu_json.h"
#include "provenance/provenance.h"

static const char usage[] = "usage: tilebench env [--json]\n"
                            "  --json   print the description as JSON\n";

static void print_text(const json_t *host, const json_t *gpu) {
  printf("os:   %s (kernel %s, %s)\n", json_string_value(json_object_get(host, "os")),
         json_string_value(json_object_get(host, "kernel")),
         json_string_value(json_object_get(host, "machine")));
  printf("cpu:  %s, %lld logical CPUs (%lld usable by this process)\n",
         json_string_value(json_object_get(host, "cpu_model")),
         (long long)json_integer_value(json_object_get(host, "logical_cpus")),
         (long long)json_integer_value(json_object_get(host, "affinity_cpus")));
  if (!json_is_true(json_object_get(gpu, "available"))) {
    printf("gpu:  none found: %s\n", json_string_value(json_object_get(gpu, "reason")));
    return;
  }
  printf("driver: supports CUDA %s\n",
         json_string_value(json_object_get(gpu, "driver_cuda_version")));
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(gpu, "devices"), i, d) {
    printf("gpu %zu: %s, compute capability %s, %lld SMs, L2 %.1f MB, memory %.1f GB\n", i,
           json_string_value(json_object_get(d, "name")),
           json_string_value(json_object_get(d, "compute_capability")),
           (long long)json_integer_value(json_object_get(d, "multiprocessors")),
           (double)json_integer_value(json_object_get(d, "l2_bytes")) / 1e6,
           (double)json_integer_value(json_object_get(d, "memory_bytes")) / 1e9);
  }
}

int tb_cmd_env(int argc, char **argv) {
  static const struct option options[] = {
      {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int as_json = 0, opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
    if (opt != 'j') {
      return tb_cli_help_or_misuse(opt, usage);
    }
    as_json = 1;
  }
  if (optind < argc) {
    fprintf(stderr, "tilebench env: unexpected argument '%s'\n%s", argv[optind], usage);
    return 2;
  }
  json_t *host = tb_capture_host(), *gpu = tb_cuda_describe();
  if (as_json) {
    json_t *doc = json_pack("{s:o, s:o}", "host", host, "gpu", gpu);
    json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    putchar('\n');
    json_decref(doc);
  } else {
    print_text(host, gpu);
    json_decref(host);
    json_decref(gpu);
  }
  return 0;
}
