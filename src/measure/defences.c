#include "measure/defences.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/guard.h"
#include "inputs/poison.h"
#include "measure/plausible.h"
#include "oracle/oracle.h"

void tb_hash_inputs(const struct tb_case_data *data, struct tb_input_hashes *out) {
  memset(out, 0, sizeof *out);
  out->count = data->input_count;
  for (size_t i = 0; i < data->input_count; ++i) {
    tb_sha256_buffer(data->inputs[i].storage, data->inputs[i].storage_elems * sizeof(float),
                     out->sha256[i]);
  }
}

struct tb_tolerance tb_case_tolerance(const struct tb_case *c, double scale) {
  size_t length = c->op->is_matmul ? c->shape.k : c->shape.n;
  return tb_tolerance_scaled(c->op->op, length,
                             c->op->is_matmul && tb_realization_is_tf32(c->realization),
                             scale > 0.0 ? scale : 1.0);
}

enum tb_status tb_fresh_inputs_make(const struct tb_case_data *data, unsigned long long seed,
                                    struct tb_fresh_inputs *f, struct tb_error *err) {
  memset(f, 0, sizeof *f);
  f->attempted = true;
  f->seed = seed ^ 1ULL;
  struct tb_error gen = {0};
  if (tb_case_data_create(&data->c, f->seed, &f->data, &gen) != TB_OK ||
      tb_oracle_compute(&f->data, &f->reference, &gen) != TB_OK) {
    tb_fresh_inputs_free(f);
    if (gen.status == TB_ERR_SYSTEM) {
      return tb_fail(err, TB_ERR_SYSTEM, "%s", gen.message);
    }
    snprintf(f->why, sizeof f->why, "%.399s", gen.message); /* a second set does not fit */
    return TB_OK;
  }
  f->made = true;
  return TB_OK;
}

void tb_fresh_inputs_free(struct tb_fresh_inputs *f) {
  tb_case_data_free(&f->data); /* zeroed by make, or never made: safe */
  free(f->reference);
  f->reference = NULL;
  f->made = false;
}

/* Poison (unless `over_previous`), one call, the whole output back, compared
 * with `reference`; the host copy is poisoned too, so a read_output that
 * copies nothing fails. */
static enum tb_status validate_call(struct tb_provider *p, struct tb_tolerance tol, float *out,
                                    size_t count, const double *reference, bool over_previous,
                                    struct tb_validation *v, struct tb_error *err) {
  tb_poison(out, count);
  if ((over_previous || p->ops->poison_output(p, err) == TB_OK) &&
      p->ops->launch(p, 1, err) == TB_OK && p->ops->synchronize(p, err) == TB_OK &&
      p->ops->read_output(p, out, count, err) == TB_OK) {
    tb_validate(out, reference, count, tol, v);
  }
  return err->status;
}

static void set_outcome(struct tb_defence_record *d, bool passed, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_outcome(struct tb_defence_record *d, bool passed, const char *fmt, ...) {
  d->outcome = passed ? TB_DEFENCE_PASSED : TB_DEFENCE_FAILED;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->detail, sizeof d->detail, fmt, ap);
  va_end(ap);
}

static void not_run(struct tb_defence_record *d, const char *why) {
  d->outcome = TB_DEFENCE_NOT_RUN;
  snprintf(d->detail, sizeof d->detail, "%.399s", why);
}

static void describe_failure(const struct tb_validation *v, char *buf, size_t size) {
  snprintf(buf, size,
           "%zu of %zu elements outside tolerance (%zu unwritten); first at %zu: got %.9g, "
           "expected %.9g",
           v->failed, v->checked, v->unwritten, v->first_failure, v->first_failure_got,
           v->first_failure_expected);
}

/* TB_VALIDATION_CALLS calls, each after poisoning; r->validation keeps the
 * first that failed, or the last. */
static enum tb_status every_call(struct tb_provider *p, struct tb_tolerance tol, float *out,
                                 size_t count, const double *reference, struct tb_case_result *r,
                                 struct tb_error *err) {
  for (unsigned call = 1; call <= TB_VALIDATION_CALLS; ++call) {
    if (validate_call(p, tol, out, count, reference, false, &r->validation, err) != TB_OK) {
      return err->status;
    }
    r->validated = true;
    if (!r->validation.passed) {
      char why[300];
      describe_failure(&r->validation, why, sizeof why);
      set_outcome(&r->defences[TB_DEFENCE_EVERY_CALL], false,
                  "call %u of %u (output poisoned before each): %s", call, TB_VALIDATION_CALLS,
                  why);
      return TB_OK;
    }
  }
  set_outcome(&r->defences[TB_DEFENCE_EVERY_CALL], true,
              "%u calls validated in full, the output poisoned before each", TB_VALIDATION_CALLS);
  return TB_OK;
}

/* Each input read back and hashed against its hash from before any call. */
static enum tb_status inputs_unchanged(struct tb_provider *p, const struct tb_case_data *data,
                                       const struct tb_input_hashes *before,
                                       struct tb_case_result *r, struct tb_error *err) {
  struct tb_defence_record *d = &r->defences[TB_DEFENCE_INPUTS_UNCHANGED];
  if (p->ops->read_input == NULL) {
    not_run(d, "the provider cannot read its inputs back");
    return TB_OK;
  }
  for (size_t i = 0; i < data->input_count; ++i) {
    size_t count = data->inputs[i].storage_elems;
    float *copy = malloc(count * sizeof *copy);
    if (copy == NULL) {
      return tb_fail(err, TB_ERR_SYSTEM, "out of memory reading an input back");
    }
    char after[TB_SHA256_HEX_LEN];
    enum tb_status st = p->ops->read_input(p, i, copy, count, err);
    if (st == TB_OK) {
      tb_sha256_buffer(copy, count * sizeof *copy, after);
    }
    free(copy);
    if (st != TB_OK) {
      return st;
    }
    if (strcmp(after, before->sha256[i]) != 0) {
      set_outcome(d, false, "input %s changed during the calls: sha256 %.16s… before, %.16s… after",
                  data->inputs[i].role, before->sha256[i], after);
      return TB_OK;
    }
  }
  set_outcome(d, true, "%zu input(s), padding included, hash as before the first call",
              data->input_count);
  return TB_OK;
}

/* One more validated call on inputs of another seed, over the output the
 * last call left (not poisoned, on purpose: it is a finite, plausible and
 * wrong answer for these inputs). A kernel that returns a result it stored
 * on an earlier call, or leaves an output that looks computed as it is,
 * fails it. */
static enum tb_status fresh_inputs(struct tb_provider *p, struct tb_tolerance tol, float *out,
                                   size_t count, const struct tb_case_data *data,
                                   const struct tb_fresh_inputs *fresh, struct tb_case_result *r,
                                   struct tb_error *err) {
  struct tb_defence_record *d = &r->defences[TB_DEFENCE_FRESH_INPUTS];
  if (p->ops->load_inputs == NULL) {
    not_run(d, "the provider cannot load other inputs into a prepared case");
    return TB_OK;
  }
  if (!fresh->made) {
    not_run(d, fresh->why);
    return TB_OK;
  }
  struct tb_validation v;
  if (p->ops->load_inputs(p, &fresh->data, err) == TB_OK &&
      validate_call(p, tol, out, count, fresh->reference, true, &v, err) == TB_OK) {
    char why[300];
    describe_failure(&v, why, sizeof why);
    set_outcome(d, v.passed,
                "one call on inputs of seed %llu (the run's seed xor 1), over the last output: %s",
                fresh->seed, v.passed ? "the whole output within tolerance" : why);
  }
  /* the provider must not keep pointers into `fresh`: give it the case's own back */
  if (err->status == TB_OK) {
    p->ops->load_inputs(p, data, err);
  }
  return err->status;
}

/* Every buffer set's output as the timed calls left it, before anything
 * else writes it (every_call poisons them), compared in full with the
 * oracle: every set holds the case's own input bytes (the CUDA base copies
 * the same host tensors into each, the torch worker clones them), so one
 * reference serves them all. Where a decoy went over the outputs before
 * every timed batch (the CPU providers), the output is what the last batch
 * or a timed call after it computed, so a kernel that skips the calls of a
 * batch leaves the decoy; where the sets rotate (a GPU), a set the calls
 * reached but a kernel never wrote keeps the poison it was allocated with. */
static enum tb_status timed_outputs(struct tb_provider *p, struct tb_tolerance tol, float *out,
                                    size_t count, const double *reference, struct tb_case_result *r,
                                    struct tb_error *err) {
  struct tb_defence_record *d = &r->defences[TB_DEFENCE_TIMED_OUTPUTS];
  struct tb_timed_outputs_facts *f = &r->timed_outputs;
  memset(f, 0, sizeof *f);
  if (p->ops->output_sets == NULL || p->ops->read_set_output == NULL) {
    not_run(d, "the provider cannot read a buffer set's output back");
    return TB_OK;
  }
  if (!r->host_measured) {
    not_run(d, "no timed calls: the host phase did not run");
    return TB_OK;
  }
  f->sets = p->ops->output_sets(p);
  f->decoy = r->host.decoy_before_batches;
  for (unsigned set = 0; set < f->sets; ++set) {
    bool reached = false;
    tb_poison(out, count);
    if (p->ops->read_set_output(p, set, out, count, &reached, err) != TB_OK) {
      return err->status;
    }
    if (!reached) {
      continue;
    }
    f->checked++;
    tb_validate(out, reference, count, tol, &f->validation);
    if (!f->validation.passed) {
      f->failed = true;
      f->failed_set = set;
      break;
    }
  }
  const char *over = f->decoy ? ", a decoy written over it before every timed batch" : "";
  if (f->checked == 0) {
    not_run(d, "no timed call reached a buffer set");
  } else if (f->failed) {
    char why[300];
    describe_failure(&f->validation, why, sizeof why);
    set_outcome(d, false, "buffer set %u of %u as the timed calls left it%s: %s", f->failed_set,
                f->sets, over, why);
  } else {
    set_outcome(d, true,
                "%u of %u buffer set(s) as the timed calls left them%s: each within "
                "tolerance",
                f->checked, f->sets, over);
  }
  return TB_OK;
}

static enum tb_status guard_zones(struct tb_provider *p, struct tb_case_result *r,
                                  struct tb_error *err) {
  struct tb_defence_record *d = &r->defences[TB_DEFENCE_GUARD_ZONES];
  if (p->ops->check_guards == NULL) {
    not_run(d, "the provider has no guard zones around its buffers");
    return TB_OK;
  }
  struct tb_guard_report report;
  if (p->ops->check_guards(p, &report, err) != TB_OK) {
    return err->status;
  }
  if (report.intact) {
    set_outcome(d, true, "%u guard zone pair(s) of %u elements intact after every call",
                report.buffers, TB_GUARD_ELEMS);
  } else {
    set_outcome(d, false, "a call wrote outside its buffers: the zone %s lost its pattern",
                report.damaged);
  }
  return TB_OK;
}

/* Kernels and side-stream kernels over every probe sample of the case. */
struct probe_counts {
  size_t samples;
  uint64_t kernels, side;
};

static void count_scope(const struct tb_scope_samples *s, struct probe_counts *c) {
  for (size_t i = 0; i < s->taken; ++i) {
    c->samples++;
    c->kernels += s->kernels[i];
    c->side += s->side_stream_kernels[i];
  }
}

static struct probe_counts probe_counts(const struct tb_device_result *d) {
  struct probe_counts c = {0};
  for (int mode = 0; mode < TB_BATCH_MODE_COUNT; ++mode) {
    count_scope(&d->throughput.modes[mode].probe, &c);
    count_scope(&d->latency.modes[mode].probe, &c);
  }
  return c;
}

/* The control's events time the provider's stream only: a kernel on another
 * stream escapes them (the figure is then of whatever else the stream held),
 * and a call that launches no kernel (work by copies, or on the host) has no
 * GPU time to report. The probe's kernel records tell both apart from an
 * honest kernel. */
void tb_defend_launches_on_stream(struct tb_provider *p, struct tb_case_result *r) {
  struct tb_defence_record *d = &r->defences[TB_DEFENCE_ON_STREAM];
  if (!p->ops->has_device(p)) {
    not_run(d, "the provider runs on the CPU: no kernels to attribute to a stream");
    return;
  }
  if (r->device == NULL) {
    not_run(d, r->device_unavailable_reason ? r->device_unavailable_reason
                                            : "the device phase did not run");
    return;
  }
  const struct tb_device_result *dev = r->device;
  struct probe_counts c = probe_counts(dev);
  if (dev->probe_samples_without_kernels > 0) {
    set_outcome(d, false,
                "%zu probe sample(s) saw no kernel (TB_TIMING_E_EMPTY): the calls launched "
                "nothing on the GPU, so no device time is a kernel's",
                dev->probe_samples_without_kernels);
  } else if (c.samples == 0) {
    char why[400];
    snprintf(why, sizeof why, "no probe sample (probe %s%s%.300s): kernels were not counted",
             dev->probe_state ? dev->probe_state : "unavailable", dev->error_count ? ": " : "",
             dev->error_count ? dev->errors[0] : "");
    not_run(d, why);
  } else if (c.side > 0) {
    set_outcome(d, false,
                "%llu of %llu kernel(s) in %zu probe sample(s) ran on a stream other than the "
                "provider's: its events did not time them",
                (unsigned long long)c.side, (unsigned long long)c.kernels, c.samples);
  } else {
    set_outcome(d, true,
                "%llu kernel(s) in %zu probe sample(s), every one on the provider's stream",
                (unsigned long long)c.kernels, c.samples);
  }
}

enum tb_status tb_validate_and_defend(struct tb_provider *p, const struct tb_case *c,
                                      const struct tb_case_data *data, const double *reference,
                                      const struct tb_input_hashes *before,
                                      const struct tb_fresh_inputs *fresh,
                                      const struct tb_measure_options *opt,
                                      struct tb_case_result *r, struct tb_error *err) {
  size_t count = data->output.storage_elems;
  float *out = malloc(count * sizeof *out);
  if (out == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory copying the output back");
  }
  struct tb_fresh_inputs made = {0};
  if (fresh == NULL && p->ops->load_inputs != NULL &&
      tb_fresh_inputs_make(data, opt->seed, &made, err) != TB_OK) {
    free(out);
    return err->status;
  }
  struct tb_tolerance tol = tb_case_tolerance(c, opt->tolerance_scale);
  /* the checks that read what the calls left come first: what the timed
   * calls left before the validation calls poison it, the inputs before the
   * fresh-input call replaces them */
  if (timed_outputs(p, tol, out, count, reference, r, err) == TB_OK &&
      every_call(p, tol, out, count, reference, r, err) == TB_OK &&
      inputs_unchanged(p, data, before, r, err) == TB_OK &&
      fresh_inputs(p, tol, out, count, data, fresh != NULL ? fresh : &made, r, err) == TB_OK) {
    guard_zones(p, r, err);
  }
  tb_defend_launches_on_stream(p, r);
  tb_defend_plausible(opt, r);
  tb_fresh_inputs_free(&made);
  free(out);
  r->defences_ran = r->validated; /* recorded exactly when the output was validated */
  return err->status;
}

bool tb_defence_failure(const struct tb_case_result *r, char *buf, size_t size) {
  static const enum tb_defence order[] = {TB_DEFENCE_INPUTS_UNCHANGED, TB_DEFENCE_GUARD_ZONES,
                                          TB_DEFENCE_EVERY_CALL,       TB_DEFENCE_FRESH_INPUTS,
                                          TB_DEFENCE_TIMED_OUTPUTS,    TB_DEFENCE_ON_STREAM,
                                          TB_DEFENCE_PLAUSIBLE};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; ++i) {
    const struct tb_defence_record *d = &r->defences[order[i]];
    if (d->outcome == TB_DEFENCE_FAILED) {
      snprintf(buf, size, "defence %s failed: %s", tb_defence_name(order[i]), d->detail);
      return true;
    }
  }
  return false;
}
