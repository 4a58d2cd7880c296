/* The CPU frequency governor and every online CPU's current frequency, as
 * cpufreq exposes them in sysfs (docs/method.md §2.7): read around the host
 * phase, so a frequency that moved while the host timed is seen. Read-only. */
#ifndef TB_PROVENANCE_CPU_FREQUENCY_H
#define TB_PROVENANCE_CPU_FREQUENCY_H

#include <stdbool.h>
#include <stddef.h>

#define TB_CPU_FREQUENCY_ROOT "/sys/devices/system/cpu"
#define TB_CPU_FREQUENCY_MAX_CPUS 512
/* A CPU whose frequency moved by more than this fraction between two reads. */
#define TB_CPU_FREQUENCY_CHANGE 0.10

struct tb_cpu_frequency {
  bool available; /* false: why_unavailable says why (no cpufreq in a container) */
  char why_unavailable[160];
  char governor[32]; /* cpu0's, or "mixed" when the CPUs differ */
  size_t cpus;       /* CPUs read: cpu0 .. cpu(cpus-1) with a cpufreq directory */
  unsigned long khz[TB_CPU_FREQUENCY_MAX_CPUS];
};

/* Reads `root` (TB_CPU_FREQUENCY_ROOT, or a test's tree). */
void tb_read_cpu_frequency(const char *root, struct tb_cpu_frequency *out);

/* The highest frequency of the CPUs read (kHz; 0 when none). */
unsigned long tb_cpu_frequency_top(const struct tb_cpu_frequency *f);

/* Whether the top frequency moved beyond TB_CPU_FREQUENCY_CHANGE between two
 * reads (both available). The top, since the CPU the host phase keeps busy
 * runs at it, while idle CPUs' frequencies move all the time under an
 * on-demand governor and say nothing of the timed thread. */
bool tb_cpu_frequency_changed(const struct tb_cpu_frequency *before,
                              const struct tb_cpu_frequency *after);

#endif
