#include "core/sysmem.h"

#include <stdio.h>
#include <unistd.h>

double tb_available_memory_bytes(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (f != NULL) {
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f)) {
      if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        fclose(f);
        return (double)kib * 1024.0;
      }
    }
    fclose(f);
  }
  return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}
