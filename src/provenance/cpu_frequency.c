#include "provenance/cpu_frequency.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of a small sysfs file, without its newline; false when absent. */
static bool read_line(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    return false;
  }
  bool ok = fgets(buf, (int)size, f) != NULL;
  fclose(f);
  buf[strcspn(buf, "\n")] = '\0';
  return ok;
}

/* cpuN's governor and frequency; false when cpuN has no cpufreq files. */
static bool read_cpu(const char *root, size_t cpu, char *governor, size_t size,
                     unsigned long *khz) {
  char path[512], text[64];
  snprintf(path, sizeof path, "%s/cpu%zu/cpufreq/scaling_cur_freq", root, cpu);
  if (!read_line(path, text, sizeof text)) {
    return false;
  }
  char *end = NULL;
  *khz = strtoul(text, &end, 10);
  if (end == text || *end != '\0') {
    return false;
  }
  snprintf(path, sizeof path, "%s/cpu%zu/cpufreq/scaling_governor", root, cpu);
  if (!read_line(path, governor, size)) {
    snprintf(governor, size, "unknown");
  }
  return true;
}

void tb_read_cpu_frequency(const char *root, struct tb_cpu_frequency *out) {
  memset(out, 0, sizeof *out);
  char governor[32];
  while (out->cpus < TB_CPU_FREQUENCY_MAX_CPUS &&
         read_cpu(root, out->cpus, governor, sizeof governor, &out->khz[out->cpus])) {
    if (out->cpus == 0) {
      snprintf(out->governor, sizeof out->governor, "%s", governor);
    } else if (strcmp(out->governor, governor) != 0) {
      snprintf(out->governor, sizeof out->governor, "mixed");
    }
    out->cpus++;
  }
  out->available = out->cpus > 0;
  if (!out->available) {
    snprintf(out->why_unavailable, sizeof out->why_unavailable,
             "no cpufreq in %.100s/cpu0 (a container or a VM hides it)", root);
  }
}

unsigned long tb_cpu_frequency_top(const struct tb_cpu_frequency *f) {
  unsigned long top = 0;
  for (size_t i = 0; i < f->cpus; ++i) {
    top = f->khz[i] > top ? f->khz[i] : top;
  }
  return top;
}

bool tb_cpu_frequency_changed(const struct tb_cpu_frequency *before,
                              const struct tb_cpu_frequency *after) {
  if (!before->available || !after->available) {
    return false;
  }
  double a = (double)tb_cpu_frequency_top(before), b = (double)tb_cpu_frequency_top(after);
  return fabs(b - a) > TB_CPU_FREQUENCY_CHANGE * a;
}
