#include "measure/clock_guard.h"

#include <math.h>
#include <stdio.h>

static bool off_by(unsigned a, unsigned b, double tolerance) {
  return fabs((double)a - (double)b) > tolerance * (double)b;
}

bool tb_clock_sample_throttled(unsigned reference_mhz, const struct tb_gpu_snapshot *before,
                               const struct tb_gpu_snapshot *after, char *why, size_t size) {
  why[0] = '\0';
  uint64_t reasons =
      (before->clocks_event_reasons | after->clocks_event_reasons) & TB_CLOCK_THROTTLE_MASK;
  if (!before->valid || !after->valid) {
    snprintf(why, size, "an NVML read failed: %s", before->valid ? after->reason : before->reason);
  } else if (reasons != 0) {
    snprintf(why, size, "throttle reason 0x%llx set", (unsigned long long)reasons);
  } else if (off_by(before->sm_clock_mhz, reference_mhz, TB_CLOCK_TOLERANCE) ||
             off_by(after->sm_clock_mhz, reference_mhz, TB_CLOCK_TOLERANCE)) {
    snprintf(why, size, "SM clock %u/%u MHz (before/after), reference %u MHz", before->sm_clock_mhz,
             after->sm_clock_mhz, reference_mhz);
  } else if (off_by(after->sm_clock_mhz, before->sm_clock_mhz, TB_CLOCK_TOLERANCE)) {
    snprintf(why, size, "SM clock changed from %u to %u MHz during the sample",
             before->sm_clock_mhz, after->sm_clock_mhz);
  }
  return why[0] != '\0';
}

bool tb_clock_steady(const struct tb_gpu_snapshot *previous, const struct tb_gpu_snapshot *now) {
  return previous->valid && now->valid &&
         ((previous->clocks_event_reasons | now->clocks_event_reasons) & TB_CLOCK_THROTTLE_MASK) ==
             0 &&
         !off_by(now->sm_clock_mhz, previous->sm_clock_mhz, TB_CLOCK_STEADY_TOLERANCE);
}

void tb_clock_keep(struct tb_clock_checks *c, size_t i, const struct tb_gpu_snapshot *before,
                   const struct tb_gpu_snapshot *after, bool throttled) {
  c->sm_clock_before_mhz[i] = before->sm_clock_mhz;
  c->sm_clock_after_mhz[i] = after->sm_clock_mhz;
  c->clocks_event_reasons[i] = before->clocks_event_reasons | after->clocks_event_reasons;
  c->kept_throttled[i] = throttled;
}

bool tb_clock_discard(struct tb_clock_checks *c, size_t i, const struct tb_gpu_snapshot *before,
                      const struct tb_gpu_snapshot *after, const char *why) {
  if (c->discarded_count >= c->discard_budget) {
    return false;
  }
  struct tb_discarded_sample *d = &c->discarded[c->discarded_count++];
  d->sample = i;
  snprintf(d->reason, sizeof d->reason, "%s", why);
  d->sm_clock_before_mhz = before->sm_clock_mhz;
  d->sm_clock_after_mhz = after->sm_clock_mhz;
  d->clocks_event_reasons = before->clocks_event_reasons | after->clocks_event_reasons;
  return true;
}
