/* The typed model of a loaded results file: what `report`, `compare`, the
 * replay summary and a frozen replay read, filled once from a document the
 * loader checked (results/load.h), so no reader walks JSON key paths. The
 * model keeps a reference to its document and its strings point into it:
 * they live as long as the model.
 *
 * Every version of docs/results-schema.md loads; a field an older record
 * (or a foreign file) lacks is typed as absent: a NULL string, a NaN number,
 * a false `has_`/`present` flag. Where the report always printed a missing
 * number as 0 (json_number_value of nothing), the model holds 0 and says so. */
#ifndef TB_RESULTS_MODEL_H
#define TB_RESULTS_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

/* One timed scope of one metric: host E2E or GPU control, throughput or latency. */
struct tb_model_scope {
  double p50_ns;       /* per_call_summary_ns.p50, NaN when absent */
  double *per_call_ns; /* the numbers of per_call_ns, in order (others skipped) */
  size_t count;
};

/* The probe's diagnostics of device.throughput. */
struct tb_model_probe {
  bool present;                              /* device.throughput exists */
  double kernel_p50_ns;                      /* probe.kernel_per_call_summary_ns.p50, or NaN */
  double ratio_median, ratio_min, ratio_max; /* probe_over_control_summary, 0 when absent */
  long long first_sample_kernels;            /* probe.kernels[0], 0 when absent */
};

/* host.stopping or device.throughput.stopping (schema 6, docs/method.md
 * §2.6); rule NULL in older records and where the phase did not run. */
struct tb_model_stopping {
  const char *rule;   /* "fixed" or "noise" */
  const char *reason; /* "fixed_count", "converged", "max_samples", "timeout" */
  long long taken;
  double noise, max_noise; /* NaN when absent (max_noise: the fixed rule) */
  const char *flag;        /* its flag (it has at most one: not_converged), or NULL */
};

struct tb_model_case {
  const char *id, *op, *provider; /* checked by the loader */
  bool valid;                     /* checked */
  long long m, n, k;              /* checked whole numbers; k only when has_k */
  bool has_k;
  const char *backend;     /* NULL when absent; "none": the provider never started */
  const char *variant;     /* planned native row reductions, else NULL */
  bool has_realization;    /* gemm records carry the key */
  const char *realization; /* its text, NULL when not a string */
  const char *precision;
  const char *view_kind; /* input_view.kind */
  bool has_round;        /* replays: round (checked), position */
  long long round;
  double minimal_bytes; /* 0 when absent */
  struct tb_model_scope host_throughput, host_latency;
  struct tb_model_stopping host_stopping;
  struct tb_model_stopping device_stopping; /* device.throughput.stopping */
  bool control_complete;                    /* device.control_complete is true */
  struct tb_model_scope control_throughput, control_latency;
  /* The host-gap-free GPU control of the throughput batch (schema 3:
   * device.throughput.gap_free): its mode ("graph", "held", "eager") and
   * samples; mode NULL and p50 NaN when the record has none. */
  const char *gap_free_mode;
  struct tb_model_scope gap_free_throughput;
  struct tb_model_probe probe;
  const char **flags; /* device.flags, then host.cpu_frequency.flags; NULL for an entry that is not
                         a string */
  size_t flag_count;
  bool has_validation; /* the key is present (null included: output not checked) */
  double max_abs_error, max_rel_error, atol; /* NaN when not a number */
  const char *buffer_state;                  /* provider_details.buffers.state */
  /* a user kernel library's provider_details.file_name and sha256, else NULL */
  const char *user_library, *user_sha256;
  const char *source_sha256;
  double selected_kernel_score; /* execution_plans[0].selected.kernel_score, or NaN */
  const char *device_unavailable_reason;
  const char *error; /* NULL unless something failed */
  /* The torch worker's version (provider_details.worker.torch), NULL for
   * other providers; what compare holds two runs' frameworks to. */
  const char *torch_version;
  /* The execution_plans array as recorded (borrowed from the document), so
   * compare pairs only records that ran the same plan; NULL when absent. */
  const json_t *plans;
};

struct tb_model_process {
  const char *name;
  long long pid;
  double cpu_percent;
};

/* provenance.busy_processes_start / _end */
struct tb_model_background {
  double threshold_cpu_percent; /* 0 when absent */
  struct tb_model_process *processes;
  size_t count;
};

/* provenance.gpu.devices[] */
struct tb_model_gpu {
  const char *name, *compute_capability;
  const char *uuid; /* NULL: not recorded (before schema 4, or the driver gave none) */
};

struct tb_model_artifact {
  const char *path, *role, *sha256; /* checked strings */
};

/* One metric of a replay case: its figures or why they are withheld. */
struct tb_model_replay_metric {
  const char *withheld;    /* NULL when the figures are given */
  double median, min, max; /* 0 when absent */
  const char *verdict;     /* NULL when absent */
  /* schema 4: the interval of the median ratio, its coverage, the band and
   * the decision (SAME, FASTER, SLOWER, INCONCLUSIVE); decision NULL and
   * the numbers NaN in older records */
  double lo, hi, coverage, band;
  const char *decision;
};

/* native_over_framework[provider][variant].gpu_throughput */
struct tb_model_versus {
  const char *provider, *variant;
  struct tb_model_replay_metric gpu_throughput;
  /* schema 4: per call in the best scope both sides measured ("graph",
   * "held", "eager", "host"; NULL when withheld) */
  bool has_per_call;
  struct tb_model_replay_metric per_call;
  const char *per_call_scope;
};

#define TB_MODEL_REPLAY_METRICS 4 /* gpu_throughput, gpu_latency, host_throughput, host_latency */

struct tb_model_replay_case {
  const char *name;   /* "case" */
  int model_predicts; /* 1 yes, 0 no, -1 null (not two register plans) */
  struct tb_model_replay_metric metrics[TB_MODEL_REPLAY_METRICS];
  struct tb_model_versus *versus; /* in the document's order */
  size_t versus_count;
};

/* The replay summary's counts of one metric. */
struct tb_model_replay_counts {
  long long cases, withheld, positive_median, all_pairs_positive, all_pairs_negative;
};

struct tb_model_replay {
  bool present;
  const char *reference, *candidate; /* NULL when absent */
  long long rounds;
  struct tb_model_replay_case *cases;
  size_t case_count;
  struct tb_model_replay_counts counts[TB_MODEL_REPLAY_METRICS];
  long long model_predicts_candidate_better;
  bool has_versus_counts; /* native_over_framework_counts is not empty */
};

struct tb_results_model {
  json_t *doc; /* owned reference: the strings point into it */
  long long schema_version;
  const char *tool_version;
  /* run */
  const char *command, *started_at, *finished_at, *backend, *error;
  long long seed, valid_cases;
  /* run.measure.stopping as one line: "fixed" (also every run before schema
   * 6), or the noise rule with its parameters */
  char stopping_rule[160];
  bool incomplete;          /* run.complete is false */
  double copy_ceiling_gbps; /* NaN without a ceiling */
  /* a shard (run.shard): its index (-1: not a shard) and count; a merged
   * run (run.merge): its shards (0: not a merge); the campaign's digest */
  long long shard_index, shard_count, merged_shards;
  const char *campaign_sha256;
  double tolerance_scale; /* run.tolerance_scale: 1 unless widened (and before schema 7) */
  /* provenance */
  const char *git_commit;
  bool git_dirty;
  bool git_dirty_known;            /* provenance.git.dirty is a boolean (not null) */
  const char *git_diff_sha256;     /* NULL outside a checkout */
  bool gpu_available;              /* provenance.gpu.available */
  const char *driver_cuda_version; /* NULL without a GPU */
  struct tb_model_gpu *gpus;       /* provenance.gpu.devices, in order */
  size_t gpu_count;
  const char *host_os, *host_cpu_model;
  long long host_logical_cpus;
  struct tb_model_background background[2]; /* busy_processes_start, busy_processes_end */
  struct tb_model_artifact *artifacts;
  size_t artifact_count;
  struct tb_model_case *cases;
  size_t case_count;
  struct tb_model_replay replay;
};

/* Fills the model from a checked document (tb_results_parse or a document
 * the run assembled); TB_ERR_SYSTEM only when memory runs out. */
enum tb_status tb_results_model_fill(const json_t *doc, struct tb_results_model *model,
                                     struct tb_error *err);

void tb_results_model_free(struct tb_results_model *model);

/* DIR/results.json or results.json.gz, checked (results/load.h), as a model. */
enum tb_status tb_results_model_load_dir(const char *dir, struct tb_results_model *model,
                                         struct tb_error *err);

/* One file by path; `sha256_hex` as for tb_results_load. */
enum tb_status tb_results_model_load(const char *path, struct tb_results_model *model,
                                     char *sha256_hex, struct tb_error *err);

#endif
