#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "measure/plausible.h"

#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "stats/stats.h"

bool tb_case_on_gpu(const struct tb_case_result *r) {
  return r->backend != NULL &&
         (strcmp(r->backend, "cuda") == 0 || strcmp(r->backend, "torch-cuda") == 0);
}

/* ---- the host copy: the CPU backend's ceiling ---------------------------- */

static unsigned usable_cpus(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
    return (unsigned)CPU_COUNT(&set);
  }
  return 1;
}

/* `calls` copies; the empty asm keeps each one (the same bytes to the same
 * place, which a compiler could otherwise fold into one). */
static int64_t copy_batch(float *dst, const float *src, size_t bytes, unsigned long calls) {
  int64_t start = tb_monotonic_ns();
  for (unsigned long i = 0; i < calls; ++i) {
    memcpy(dst, src, bytes);
    __asm__ volatile("" : : "r"(dst) : "memory");
  }
  return tb_monotonic_ns() - start;
}

/* One thread copying footprint/2 bytes, warm, as the case's calls are:
 * calibrated to about TB_HOST_COPY_SAMPLE_NS a sample, its rate the best
 * sample's (read plus written bytes). False when out of memory. */
static bool time_copy(double footprint, struct tb_host_copy *c) {
  memset(c, 0, sizeof *c);
  c->footprint_bytes = footprint;
  c->bytes = (size_t)(footprint / 2.0);
  c->bytes = c->bytes < sizeof(float) ? sizeof(float) : c->bytes;
  c->gbps = NAN;
  /* both on 64 bytes: glibc's memcpy (rep movsb) runs some 20 times slower on
   * AMD Zen when source and destination sit differently within a cache line,
   * as two plain mallocs may, and the ceiling would be that slow copy's */
  size_t allocated = (c->bytes + 63) / 64 * 64;
  float *src = aligned_alloc(64, allocated), *dst = aligned_alloc(64, allocated);
  if (src == NULL || dst == NULL) {
    free(src);
    free(dst);
    return false;
  }
  memset(src, 0x3F, c->bytes);
  memset(dst, 0, c->bytes);
  unsigned long calls = 1;
  int64_t t = copy_batch(dst, src, c->bytes, calls); /* warm-up: first touch */
  for (;;) {
    t = copy_batch(dst, src, c->bytes, calls);
    if ((double)t >= TB_HOST_COPY_SAMPLE_NS / 4 || calls >= (1UL << 30)) {
      break;
    }
    calls *= 2;
  }
  double scaled = (double)calls * TB_HOST_COPY_SAMPLE_NS / (double)(t > 0 ? t : 1);
  c->calls = scaled < 1.0 ? 1 : scaled > (double)(1UL << 30) ? (1UL << 30) : (unsigned long)scaled;
  int64_t best = 0;
  for (size_t i = 0; i < TB_HOST_COPY_SAMPLES; ++i) {
    c->elapsed_ns[i] = copy_batch(dst, src, c->bytes, c->calls);
    best = i == 0 || c->elapsed_ns[i] < best ? c->elapsed_ns[i] : best;
  }
  c->samples = TB_HOST_COPY_SAMPLES;
  c->gbps = 2.0 * (double)c->bytes * (double)c->calls / (double)(best > 0 ? best : 1);
  free(src);
  free(dst);
  return true;
}

void tb_measure_host_copies(double footprint_bytes, struct tb_plausible_facts *f) {
  f->cpus = usable_cpus();
  f->copy_count = 0;
  if (time_copy(footprint_bytes, &f->copies[0])) {
    f->copy_count = 1;
    if (f->cpus > 1 && time_copy(footprint_bytes / f->cpus, &f->copies[1])) {
      f->copy_count = 2;
    }
  }
}

/* ---- gemm's peak ------------------------------------------------------------ */

/* Dense FLOP per cycle per SM (an FMA is 2): the CUDA cores' FP32 lanes
 * times 2, and TF32 on the tensor cores, the highest rate any chip of the
 * architecture has (GA102's and AD102's data-centre parts: 512). */
static double flop_per_cycle(int major, int minor, bool tensor) {
  int cc = major * 10 + minor;
  if (tensor) {
    switch (cc) {
    case 80: return 1024.0;
    case 86:
    case 89: return 512.0;
    case 90: return 2048.0;
    default: return NAN;
    }
  }
  switch (cc) {
  case 70:
  case 72:
  case 75:
  case 80: return 128.0;
  case 86:
  case 87:
  case 89:
  case 90: return 256.0;
  default: return NAN;
  }
}

double tb_gemm_peak_gflops(int cc_major, int cc_minor, int sms, int clock_khz, bool tensor,
                           char *basis, size_t size) {
  double per_cycle = flop_per_cycle(cc_major, cc_minor, tensor);
  if (sms <= 0 || clock_khz <= 0) {
    snprintf(basis, size, "no device facts (SMs, clock) to compute a peak from");
    return NAN;
  }
  if (isnan(per_cycle)) {
    snprintf(basis, size, "no %s rate known for compute capability %d.%d",
             tensor ? "TF32 tensor-core" : "FP32", cc_major, cc_minor);
    return NAN;
  }
  double peak = (double)sms * per_cycle * (double)clock_khz / 1e6;
  snprintf(basis, size, "%d SMs x %.0f %s FLOP/cycle x %d MHz (compute capability %d.%d)", sms,
           per_cycle, tensor ? "TF32 tensor-core" : "FP32", clock_khz / 1000, cc_major, cc_minor);
  return peak;
}

/* ---- the defence ------------------------------------------------------------- */

static void add_figure(struct tb_plausible_facts *f, const struct tb_case_result *r,
                       const char *scope, const double *per_call, size_t count) {
  if (count == 0 || f->figure_count == TB_PLAUSIBLE_MAX_FIGURES) {
    return;
  }
  double p50 = tb_median(per_call, count);
  if (!(p50 > 0.0)) {
    return;
  }
  struct tb_plausible_figure *g = &f->figures[f->figure_count++];
  g->scope = scope;
  g->per_call_p50_ns = p50;
  g->gbps = r->minimal_bytes / p50; /* bytes per ns = GB/s */
  const struct tb_shape s = r->c.shape;
  g->gflops = r->c.op->is_matmul ? 2.0 * (double)s.m * (double)s.n * (double)s.k / p50 : NAN;
}

static void collect_figures(struct tb_plausible_facts *f, const struct tb_case_result *r) {
  if (r->host_measured) {
    add_figure(f, r, "host", r->host.throughput.per_call_ns, r->host.throughput.count);
  }
  for (int mode = 0; r->device != NULL && mode < TB_BATCH_MODE_COUNT; ++mode) {
    const struct tb_scope_samples *s = &r->device->throughput.modes[mode].control;
    add_figure(f, r, tb_batch_mode_name((enum tb_batch_mode)mode), s->per_call_ns, s->taken);
  }
}

static void say(struct tb_defence_record *d, enum tb_defence_outcome outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(struct tb_defence_record *d, enum tb_defence_outcome outcome, const char *fmt,
                ...) {
  d->outcome = outcome;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->detail, sizeof d->detail, fmt, ap);
  va_end(ap);
}

static double median_of(const int64_t *values, size_t count) {
  double *copy = malloc((count ? count : 1) * sizeof *copy);
  if (copy == NULL) {
    return NAN;
  }
  for (size_t i = 0; i < count; ++i) {
    copy[i] = (double)values[i];
  }
  double m = tb_median(copy, count);
  free(copy);
  return m;
}

/* A worker's host samples the harness's own clock cannot reproduce: one
 * above the harness's time of its request (the worker's interval lies
 * inside it), or a throughput median far below the harness's (a clock the
 * worker's code slowed). True, with `why`, when found. */
static bool worker_clock_disagrees(const struct tb_host_phase *h, char *why, size_t size) {
  const struct tb_phase_samples *phases[2] = {&h->throughput, &h->latency};
  static const char *const names[2] = {"throughput", "latency"};
  for (int k = 0; k < 2; ++k) {
    const struct tb_phase_samples *s = phases[k];
    for (size_t i = 0; s->harness_ns != NULL && i < s->count; ++i) {
      if (s->elapsed_ns[i] > s->harness_ns[i]) {
        snprintf(why, size,
                 "host %s sample %zu: the worker reported %lld ns, more than the %lld ns the "
                 "harness's clock measured around the whole request",
                 names[k], i, (long long)s->elapsed_ns[i], (long long)s->harness_ns[i]);
        return true;
      }
    }
  }
  const struct tb_phase_samples *t = &h->throughput;
  if (t->harness_ns == NULL || t->count == 0) {
    return false;
  }
  double reported = median_of(t->elapsed_ns, t->count),
         harness = median_of(t->harness_ns, t->count);
  if (harness > TB_WORKER_CLOCK_FACTOR * reported + TB_WORKER_CLOCK_SLACK_NS) {
    snprintf(why, size,
             "the worker's host throughput samples (median %.4g ns) are not what the harness's "
             "clock measured around their requests (median %.4g ns, more than %g x + %g ns): the "
             "worker's clock was not the harness's",
             reported, harness, TB_WORKER_CLOCK_FACTOR, TB_WORKER_CLOCK_SLACK_NS);
    return true;
  }
  return false;
}

/* The ceiling of where the case computes, before the margin (NaN: none,
 * `why` says so), and its source and description. */
static double ceiling_of(const struct tb_measure_options *opt, struct tb_plausible_facts *f,
                         bool gpu, char *text, size_t size) {
  if (gpu) {
    if (!(opt->plausibility.copy_ceiling_gbps > 0.0)) {
      snprintf(text, size, "no device copy ceiling (%.150s)",
               opt->plausibility.copy_ceiling_missing[0] ? opt->plausibility.copy_ceiling_missing
                                                         : "not measured");
      return NAN;
    }
    f->ceiling_source = "device_copy";
    snprintf(text, size, "the run's device copy ceiling");
    return opt->plausibility.copy_ceiling_gbps;
  }
  double best = NAN;
  for (size_t i = 0; i < f->copy_count; ++i) {
    best = isnan(best) || f->copies[i].gbps > best ? f->copies[i].gbps : best;
  }
  if (isnan(best)) {
    snprintf(text, size, "no host copy ceiling (out of memory for the copy)");
    return NAN;
  }
  f->ceiling_source = "host_copy";
  snprintf(text, size, "one thread's copy of the case's footprint%s, %.1f GB/s, x %u CPU(s)",
           f->copy_count > 1 ? " or of its share per CPU" : "", best, f->cpus);
  return best * f->cpus;
}

void tb_defend_plausible(const struct tb_measure_options *opt, struct tb_case_result *r) {
  struct tb_defence_record *d = &r->defences[TB_DEFENCE_PLAUSIBLE];
  struct tb_plausible_facts *f = &r->plausible;
  f->figure_count = 0;
  f->ceiling_source = NULL;
  f->ceiling_gbps = NAN;
  f->flop_margin = TB_PLAUSIBLE_FLOP_MARGIN;
  f->peak_gflops = NAN;
  f->peak_basis[0] = '\0';
  f->worker_clock = r->host_measured && r->host.throughput.harness_ns != NULL;
  collect_figures(f, r);
  bool gpu = tb_case_on_gpu(r);
  const struct tb_buffer_facts *sets = tb_provider_details_buffers(&r->provider_details);
  bool cold = gpu && sets != NULL && strcmp(sets->state, "cold") == 0;
  f->margin = cold ? TB_PLAUSIBLE_COLD_DEVICE_MARGIN : TB_PLAUSIBLE_MARGIN;
  f->margin_basis = cold ? "cold device buffers" : gpu ? "warm device buffers" : "host";
  char source[200];
  f->ceiling_gbps = ceiling_of(opt, f, gpu, source, sizeof source);
  if (r->c.op->is_matmul) {
    if (gpu) {
      const struct tb_plausibility_facts *dev = &opt->plausibility;
      f->peak_gflops = tb_gemm_peak_gflops(
          dev->cc_major, dev->cc_minor, dev->multiprocessors, dev->max_sm_clock_khz,
          r->c.realization != TB_REALIZATION_SIMT, f->peak_basis, sizeof f->peak_basis);
    } else {
      snprintf(f->peak_basis, sizeof f->peak_basis,
               "no FLOP peak on the CPU backend (the device facts give none): bandwidth only");
    }
  }
  char why[400];
  if (f->worker_clock && worker_clock_disagrees(&r->host, why, sizeof why)) {
    say(d, TB_DEFENCE_FAILED, "%s", why);
    return;
  }
  if (f->figure_count == 0) {
    say(d, TB_DEFENCE_NOT_RUN, "no timed figure to judge");
    return;
  }
  /* the fastest figure decides: each against the bound, the worst reported */
  const struct tb_plausible_figure *fastest = &f->figures[0];
  for (size_t i = 1; i < f->figure_count; ++i) {
    fastest = f->figures[i].per_call_p50_ns < fastest->per_call_p50_ns ? &f->figures[i] : fastest;
  }
  bool bandwidth = !isnan(f->ceiling_gbps), flops = !isnan(f->peak_gflops);
  const char *clock = f->worker_clock ? "; the worker's host samples agree with the harness's "
                                        "clock"
                                      : "";
  if (!bandwidth && !flops) {
    say(d, f->worker_clock ? TB_DEFENCE_PASSED : TB_DEFENCE_NOT_RUN, "%s%s%s%s", source,
        r->c.op->is_matmul ? "; " : "", r->c.op->is_matmul ? f->peak_basis : "", clock);
    return;
  }
  double bound = f->margin * f->ceiling_gbps;
  if (bandwidth && fastest->gbps > bound) {
    say(d, TB_DEFENCE_FAILED,
        "%s p50 %.4g ns a call is %.4g GB/s over %.0f minimal bytes (inputs read once, the "
        "output written once), above %g x %.4g GB/s, %s",
        fastest->scope, fastest->per_call_p50_ns, fastest->gbps, r->minimal_bytes, f->margin,
        f->ceiling_gbps, source);
    return;
  }
  if (flops && fastest->gflops > f->flop_margin * f->peak_gflops) {
    say(d, TB_DEFENCE_FAILED,
        "%s p50 %.4g ns a call is %.4g GFLOP/s, above %g x the peak %.4g "
        "GFLOP/s (%s)",
        fastest->scope, fastest->per_call_p50_ns, fastest->gflops, f->flop_margin, f->peak_gflops,
        f->peak_basis);
    return;
  }
  char flop_text[240] = "";
  if (flops) {
    snprintf(flop_text, sizeof flop_text, "; %.4g GFLOP/s, under %g x the peak %.4g",
             fastest->gflops, f->flop_margin, f->peak_gflops);
  } else if (r->c.op->is_matmul) {
    snprintf(flop_text, sizeof flop_text, "; FLOP rate not judged: %.150s", f->peak_basis);
  }
  if (bandwidth) {
    say(d, TB_DEFENCE_PASSED,
        "fastest figure (%s) %.4g GB/s over the minimal bytes, under %g x %.4g GB/s, %s%s%s",
        fastest->scope, fastest->gbps, f->margin, f->ceiling_gbps, source, flop_text, clock);
  } else {
    say(d, TB_DEFENCE_PASSED, "%s; fastest figure (%s)%s%s", source, fastest->scope, flop_text,
        clock);
  }
}
