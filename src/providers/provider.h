/* A provider runs one implementation of the operations (our native kernels,
 * later PyTorch or cuBLAS) and offers primitives only. The measurement
 * procedure (warm-up, calibration, sample counts, alternation) lives once, in
 * measure/, and drives every provider the same way. */
#ifndef TB_PROVIDERS_PROVIDER_H
#define TB_PROVIDERS_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilebench/timing.h"

#include "cases/case_params.h" /* enum tb_batch_mode */
#include "core/error.h"
#include "inputs/tensor.h"
#include "planner/exec_plan.h"
#include "providers/provider_details.h"

struct tb_provider;

/* What check_guards found: how many buffers it checked and, when a zone
 * lost its pattern, which buffer and where. */
struct tb_guard_report {
  unsigned buffers;
  bool intact;
  char damaged[160]; /* "after out, element +0 past its end" */
};

struct tb_provider_ops {
  /* The plan step: plans case `c` for this provider's device (the planner's
   * rule, planner/exec_plan.h) before anything is prepared; TB_PLAN_NONE
   * where the provider does not plan (a library call, a framework). The one
   * place a provider plans: prepare executes what this returned, and the
   * results record it. */
  enum tb_status (*plan)(const struct tb_provider *p, const struct tb_case *c,
                         struct tb_exec_plan *plan, struct tb_error *err);
  /* Copies the case's inputs to where the provider computes (device-resident
   * buffers on a GPU) and does all one-time setup (code generation from
   * `plan`, compilation, handles). `c` is data->c with this provider's name
   * and variant; `plan` is what the plan step returned for it. */
  enum tb_status (*prepare)(struct tb_provider *p, const struct tb_case *c,
                            const struct tb_case_data *data, const struct tb_exec_plan *plan,
                            struct tb_error *err);
  /* Issues `calls` back-to-back calls of the operation; may return before
   * they finish (asynchronous backends). */
  enum tb_status (*launch)(struct tb_provider *p, unsigned long calls, struct tb_error *err);
  /* Waits until every issued call has finished. */
  enum tb_status (*synchronize)(struct tb_provider *p, struct tb_error *err);
  /* Writes the poison pattern over the whole output. */
  enum tb_status (*poison_output)(struct tb_provider *p, struct tb_error *err);
  /* Copies the whole output (count elements, packed) to dst. */
  enum tb_status (*read_output)(struct tb_provider *p, float *dst, size_t count,
                                struct tb_error *err);
  /* The stream GPU work is issued on (a CUstream), or NULL: the device
   * phase times this stream when the provider takes no samples itself. */
  void *(*device_stream)(const struct tb_provider *p);
  /* Whether the provider has a GPU clock, so the device phase runs. */
  bool (*has_device)(const struct tb_provider *p);
  /* Optional (NULL: measure/ times launch + synchronize itself). One host
   * sample taken by the provider with CLOCK_MONOTONIC: an out-of-process
   * worker times its own calls so the pipe is never inside a timing. It
   * also gives the harness's own CLOCK_MONOTONIC around the whole request
   * (`harness_ns`), which must bound the worker's figure from above (the
   * defence plausible checks it, method.md §8). */
  enum tb_status (*host_sample)(struct tb_provider *p, unsigned long calls, int64_t *elapsed_ns,
                                int64_t *harness_ns, struct tb_error *err);
  /* Optional (NULL: measure/ runs the timing library on device_stream). One
   * device sample in batch mode `mode`, control or probe, taken by the
   * provider through the same library (a worker captures and replays its own
   * graph, or holds its own stream); returns the timing library's code, with
   * `error` on failure (a mode the provider cannot take: TB_TIMING_E_CUDA
   * and the reason). */
  int (*device_sample)(struct tb_provider *p, enum tb_batch_mode mode, bool probe, unsigned calls,
                       unsigned capacity, struct tb_timing_result *result, char *error,
                       size_t error_size);
  /* Optional (NULL: no graph mode; the reason is recorded). Captures batches
   * of `calls` calls, rotating over the buffer sets exactly as launch does,
   * into CUDA graphs on device_stream (as many as one pass over the rotation
   * takes, so replays find the sets as cold as eager batches do),
   * instantiated and each launched once untimed (a graph's first launch
   * uploads it), maybe still running; capturing again replaces them. A call that
   * cannot be captured fails with the reason and leaves no capture open. */
  enum tb_status (*capture_graph)(struct tb_provider *p, unsigned long calls, struct tb_error *err);
  /* Launches the next captured graph on device_stream (asynchronous). */
  enum tb_status (*replay_graph)(struct tb_provider *p, struct tb_error *err);
  /* Destroys the captured graph, if any. */
  void (*release_graph)(struct tb_provider *p);
  /* The defences' primitives (docs/method.md §8); each optional (NULL: that
   * defence is recorded as not run for the provider, with the reason).
   * read_input copies input `index` (data->inputs' order) as the calls left
   * it, its whole storage with the padding, count elements, to dst. */
  enum tb_status (*read_input)(struct tb_provider *p, size_t index, float *dst, size_t count,
                               struct tb_error *err);
  /* Checks the guard zones around every buffer the provider allocated. */
  enum tb_status (*check_guards)(struct tb_provider *p, struct tb_guard_report *report,
                                 struct tb_error *err);
  /* Replaces the prepared inputs by those of `data`: the same case (shape,
   * view, layout) with values from another seed; `data` outlives the
   * prepared case. The case's providers share one `data` (case_runner.h):
   * a provider whose calls could write into it copies it (the CUDA base,
   * the torch worker and the CPU user provider do; the native CPU provider
   * borrows it, its kernels take their inputs const). */
  enum tb_status (*load_inputs)(struct tb_provider *p, const struct tb_case_data *data,
                                struct tb_error *err);
  /* timed_outputs (method.md §8); each optional (NULL: not run, the reason
   * recorded). The buffer sets the calls rotate over (1 where there is one
   * output), and set `set`'s output as the last call on it left it, count
   * elements packed, with whether any call since prepare reached the set
   * (graph captures aside: a set only a capture reached is not counted);
   * `dst` is left as it was for a set no call reached. */
  unsigned (*output_sets)(const struct tb_provider *p);
  enum tb_status (*read_set_output)(struct tb_provider *p, unsigned set, float *dst, size_t count,
                                    bool *reached, struct tb_error *err);
  /* Writes `values` (count elements: a finite, wrong answer) over every
   * set's output; measure/ does so before every timed batch of the host
   * phase, outside its timing, so that the output a batch leaves is that
   * batch's work (NULL: the outputs are not overwritten between batches). */
  enum tb_status (*decoy_output)(struct tb_provider *p, const float *values, size_t count,
                                 struct tb_error *err);
  /* Kernel launches one call makes (a split-row plan makes 2). */
  unsigned (*launches_per_call)(const struct tb_provider *p);
  /* Provider facts of the prepared case for the results (compilation,
   * kernels, buffers): fills *out, kind TB_DETAILS_NONE when there are none;
   * the caller frees it (tb_provider_details_free). */
  void (*details)(const struct tb_provider *p, struct tb_provider_details *out);
  /* The generated source of the prepared case and its SHA-256, or NULL. */
  const char *(*source)(const struct tb_provider *p, const char **sha256);
  /* Frees what prepare made; the provider can prepare another case. */
  void (*release)(struct tb_provider *p);
  void (*destroy)(struct tb_provider *p);
};

struct tb_provider {
  const struct tb_provider_ops *ops;
  const char *name;              /* "native" */
  const char *backend;           /* "cpu", "cuda" */
  const char *output_allocation; /* "preallocated_out" or "framework_return_value" */
  bool plans_reductions;         /* runs each planner variant of a row reduction */
  void *state;
};

#endif
