#include <math.h>
#include <stdio.h>
#include <string.h>

#include "results/plan_json.h"
#include "results/provider_json.h"

#include "results/device_json.h"
#include "results/results.h"

static json_t *summary_json(const struct tb_summary *s) {
  return json_pack("{s:o, s:o, s:o}", "p50", tb_json_number(s->p50), "min", tb_json_number(s->min),
                   "max", tb_json_number(s->max));
}

static json_t *samples_json(const struct tb_phase_samples *s) {
  json_t *elapsed = json_array(), *per_call = json_array();
  for (size_t i = 0; i < s->count; ++i) {
    json_array_append_new(elapsed, json_integer(s->elapsed_ns[i]));
    json_array_append_new(per_call, tb_json_number(s->per_call_ns[i]));
  }
  json_t *j = json_pack("{s:I, s:o, s:o, s:o}", "calls_per_sample", (json_int_t)s->calls_per_sample,
                        "elapsed_ns", elapsed, "per_call_ns", per_call, "per_call_summary_ns",
                        summary_json(&s->summary));
  if (s->harness_ns != NULL) { /* v7: a worker's samples, the harness's clock around each */
    json_t *harness = json_array();
    for (size_t i = 0; i < s->count; ++i) {
      json_array_append_new(harness, json_integer(s->harness_ns[i]));
    }
    json_object_set_new(j, "harness_elapsed_ns", harness);
  }
  return j;
}

static json_t *khz_list(const struct tb_cpu_frequency *f) {
  json_t *a = json_array();
  for (size_t i = 0; i < f->cpus; ++i) {
    json_array_append_new(a, json_integer((json_int_t)f->khz[i]));
  }
  return a;
}

/* host.cpu_frequency (schema 7): the reads around the host phase. */
static json_t *cpu_frequency_json(const struct tb_cpu_frequency *before,
                                  const struct tb_cpu_frequency *after) {
  if (!before->available || !after->available) {
    return json_pack("{s:b, s:s}", "available", 0, "why_unavailable",
                     before->available ? after->why_unavailable : before->why_unavailable);
  }
  json_t *flags = json_array();
  if (tb_cpu_frequency_changed(before, after)) {
    char text[200];
    snprintf(text, sizeof text,
             "cpu frequency change: the top CPU frequency moved from %lu to %lu kHz during the "
             "host phase",
             tb_cpu_frequency_top(before), tb_cpu_frequency_top(after));
    json_array_append_new(flags, json_string(text));
  }
  return json_pack("{s:b, s:s, s:s, s:I, s:I, s:o, s:o, s:o}", "available", 1, "governor",
                   before->governor, "governor_after", after->governor, "top_khz_before",
                   (json_int_t)tb_cpu_frequency_top(before), "top_khz_after",
                   (json_int_t)tb_cpu_frequency_top(after), "khz_before", khz_list(before),
                   "khz_after", khz_list(after), "flags", flags);
}

static json_t *host_json(const struct tb_case_result *r) {
  if (!r->host_measured) {
    return json_null();
  }
  json_t *j = json_pack(
      "{s:s, s:I, s:o, s:o, s:o, s:o}", "clock", "CLOCK_MONOTONIC", "warmup_calls",
      (json_int_t)r->host.warmup_calls, "warmup_ns", tb_json_number(r->host.warmup_ns),
      "throughput", samples_json(&r->host.throughput), "latency", samples_json(&r->host.latency),
      "stopping", tb_stopping_json(&r->host.rule, &r->host.stopping));
  json_object_set_new(j, "cpu_frequency",
                      cpu_frequency_json(&r->host.cpu_before, &r->host.cpu_after));
  return j;
}

static json_t *one_validation_json(const struct tb_validation *v) {
  json_t *j =
      json_pack("{s:b, s:o, s:o, s:o, s:o, s:I, s:I, s:I}", "passed", v->passed, "atol",
                tb_json_number(v->atol), "rtol", tb_json_number(v->rtol), "max_abs_error",
                tb_json_number(v->max_abs_error), "max_rel_error", tb_json_number(v->max_rel_error),
                "checked_elements", (json_int_t)v->checked, "failed_elements",
                (json_int_t)v->failed, "unwritten_elements", (json_int_t)v->unwritten);
  json_object_set_new(j, "non_finite_errors", json_boolean(!isfinite(v->max_abs_error)));
  json_object_set_new(j, "max_abs_reference", tb_json_number(v->max_abs_reference));
  json_object_set_new(j, "tolerance_scale", tb_json_number(v->tolerance_scale));
  if (v->failed > 0) {
    json_object_set_new(j, "first_failure",
                        json_pack("{s:I, s:o, s:o}", "index", (json_int_t)v->first_failure, "got",
                                  tb_json_number(v->first_failure_got), "expected",
                                  tb_json_number(v->first_failure_expected)));
  }
  return j;
}

static json_t *validation_json(const struct tb_case_result *r) {
  return r->validated ? one_validation_json(&r->validation) : json_null();
}

/* timed_outputs' facts: the sets, those compared, and the comparison of
 * the first that failed (else the last), when any was compared. */
static void timed_outputs_json(json_t *rec, const struct tb_timed_outputs_facts *f) {
  json_object_set_new(rec, "sets", json_integer(f->sets));
  json_object_set_new(rec, "sets_checked", json_integer(f->checked));
  json_object_set_new(rec, "decoy_before_batches", json_boolean(f->decoy));
  json_object_set_new(rec, "failed_set", f->failed ? json_integer(f->failed_set) : json_null());
  json_object_set_new(rec, "validation",
                      f->checked > 0 ? one_validation_json(&f->validation) : json_null());
}

static json_t *host_copy_json(const struct tb_host_copy *c) {
  json_t *elapsed = json_array();
  for (size_t i = 0; i < c->samples; ++i) {
    json_array_append_new(elapsed, json_integer(c->elapsed_ns[i]));
  }
  return json_pack("{s:o, s:I, s:I, s:o, s:o}", "footprint_bytes",
                   tb_json_number(c->footprint_bytes), "bytes_copied", (json_int_t)c->bytes,
                   "calls_per_sample", (json_int_t)c->calls, "elapsed_ns", elapsed, "gbps",
                   tb_json_number(c->gbps));
}

/* plausible's facts: every figure judged, the ceiling and where it came
 * from (the host copies themselves on the CPU), the margins, gemm's peak. */
static void plausible_json(json_t *rec, const struct tb_plausible_facts *f) {
  json_t *figures = json_array();
  for (size_t i = 0; i < f->figure_count; ++i) {
    const struct tb_plausible_figure *g = &f->figures[i];
    json_array_append_new(figures,
                          json_pack("{s:s, s:o, s:o, s:o}", "scope", g->scope, "per_call_p50_ns",
                                    tb_json_number(g->per_call_p50_ns), "gbps",
                                    tb_json_number(g->gbps), "gflops", tb_json_number(g->gflops)));
  }
  json_object_set_new(rec, "bytes_model",
                      json_string("minimal: each input read once, the output "
                                  "written once"));
  json_object_set_new(rec, "figures", figures);
  json_object_set_new(rec, "margin", tb_json_number(f->margin));
  if (f->margin_basis != NULL) {
    json_object_set_new(rec, "margin_basis", json_string(f->margin_basis));
  }
  json_object_set_new(rec, "ceiling_source",
                      f->ceiling_source ? json_string(f->ceiling_source) : json_null());
  json_object_set_new(rec, "ceiling_gbps",
                      tb_json_number(f->ceiling_source ? f->ceiling_gbps : NAN));
  if (f->copy_count > 0) {
    json_t *copies = json_array();
    for (size_t i = 0; i < f->copy_count; ++i) {
      json_array_append_new(copies, host_copy_json(&f->copies[i]));
    }
    json_object_set_new(rec, "host_copies", copies);
    json_object_set_new(rec, "cpus", json_integer(f->cpus));
  }
  json_object_set_new(rec, "flop_margin", tb_json_number(f->flop_margin));
  json_object_set_new(rec, "worker_clock", json_boolean(f->worker_clock));
  json_object_set_new(rec, "peak_gflops", tb_json_number(f->peak_gflops));
  json_object_set_new(rec, "peak_basis",
                      f->peak_basis[0] ? json_string(f->peak_basis) : json_null());
}

/* Each defence's outcome and detail, keyed by its name; null when the
 * validation calls never ran (the case failed before them). */
static json_t *defences_json(const struct tb_case_result *r) {
  if (!r->defences_ran) {
    return json_null();
  }
  json_t *j = json_object();
  for (int d = 0; d < TB_DEFENCE_COUNT; ++d) {
    const struct tb_defence_record *rec = &r->defences[d];
    json_t *record = json_pack("{s:s, s:s}", "outcome", tb_defence_outcome_name(rec->outcome),
                               "detail", rec->detail);
    if (d == TB_DEFENCE_TIMED_OUTPUTS && rec->outcome != TB_DEFENCE_NOT_RUN) {
      timed_outputs_json(record, &r->timed_outputs);
    }
    if (d == TB_DEFENCE_PLAUSIBLE && rec->outcome != TB_DEFENCE_NOT_RUN) {
      plausible_json(record, &r->plausible);
    }
    json_object_set_new(j, tb_defence_name((enum tb_defence)d), record);
  }
  return j;
}

/* The plan the provider's plan step made, if any: [] when it made none. */
static json_t *plans_json(const struct tb_case_result *r) {
  json_t *plans = json_array();
  json_t *plan = tb_exec_plan_to_json(&r->plan);
  if (plan != NULL) {
    json_array_append_new(plans, plan);
  }
  return plans;
}

/* Schema 2 repeats a native CUDA gemm's plan inside its details. */
static json_t *provider_details_json(const struct tb_case_result *r) {
  json_t *details = tb_provider_details_to_json(&r->provider_details);
  if (r->provider_details.kind == TB_DETAILS_CUDA_NATIVE && r->plan.kind == TB_PLAN_GEMM) {
    json_object_set_new(details, "gemm_plan", tb_exec_plan_to_json(&r->plan));
  }
  return details;
}

json_t *tb_case_result_to_json(const struct tb_case_result *r) {
  json_t *view =
      json_pack("{s:s, s:I, s:I}", "kind", tb_view_name(r->c.view.kind), "row_stride",
                (json_int_t)r->c.view.row_stride, "offset", (json_int_t)r->c.view.offset);
  json_t *j =
      json_pack("{s:s, s:s, s:I, s:I, s:o, s:s, s:s, s:s, s:o}", "id", r->id, "op", r->c.op->name,
                "m", (json_int_t)r->c.shape.m, "n", (json_int_t)r->c.shape.n, "input_view", view,
                "provider", r->c.provider, "backend", r->backend, "output_allocation",
                r->output_allocation, "minimal_bytes", tb_json_number(r->minimal_bytes));
  if (r->c.shape.k > 0) {
    json_object_set_new(j, "k", json_integer((json_int_t)r->c.shape.k));
  }
  if (r->c.op->is_matmul) {
    json_object_set_new(j, "realization", json_string(tb_realization_name(r->c.realization)));
    json_object_set_new(j, "precision", json_string(tb_realization_precision(r->c.realization)));
  }
  json_object_set_new(j, "variant",
                      r->c.planned ? json_string(tb_variant_name(r->c.variant)) : json_null());
  json_object_set_new(j, "execution_plans", plans_json(r));
  json_object_set_new(j, "host", host_json(r));
  json_object_set_new(j, "device", r->device ? tb_device_result_to_json(r->device) : json_null());
  json_object_set_new(j, "provider_details", provider_details_json(r));
  json_object_set_new(j, "source_sha256", r->source ? json_string(r->source_sha256) : json_null());
  json_object_set_new(j, "device_unavailable_reason",
                      r->device_unavailable_reason ? json_string(r->device_unavailable_reason)
                                                   : json_null());
  json_object_set_new(j, "validation", validation_json(r));
  json_object_set_new(j, "defences", defences_json(r));
  json_object_set_new(j, "valid", json_boolean(r->valid));
  json_object_set_new(j, "error", r->error[0] ? json_string(r->error) : json_null());
  return j;
}
