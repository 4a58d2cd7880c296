#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/clock.h"
#include "provenance/hash.h"
#include "provenance/provenance.h"

json_t *tb_capture_artifacts(void) {
  json_t *list = json_array();
  json_t *seen = json_object();
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[PATH_MAX + 128];
  int first = 1;
  while (first || (maps && fgets(line, sizeof line, maps))) {
    const char *path = NULL, *role = "shared_library";
    if (first) {
      first = 0;
      if (len <= 0) {
        continue;
      }
      exe[len] = '\0';
      path = exe;
      role = "executable";
    } else {
      char *slash = strchr(line, '/');
      if (slash == NULL || strstr(line, " r-xp ") == NULL) {
        continue; /* only mapped code: one entry per library */
      }
      slash[strcspn(slash, "\n")] = '\0';
      path = slash;
    }
    if (json_object_get(seen, path) != NULL) {
      continue;
    }
    json_object_set_new(seen, path, json_true());
    char hex[TB_SHA256_HEX_LEN];
    struct tb_error err = {0};
    json_t *entry = json_object();
    json_object_set_new(entry, "path", json_string(path));
    json_object_set_new(entry, "role", json_string(role));
    json_object_set_new(entry, "sha256",
                        tb_sha256_file(path, hex, &err) == TB_OK ? json_string(hex) : json_null());
    json_array_append_new(list, entry);
  }
  if (maps) {
    fclose(maps);
  }
  json_decref(seen);
  return list;
}

/* Value of `key` in a "key: value" or KEY="value" text file, or NULL. */
static json_t *file_field(const char *path, const char *key, char sep) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    return json_null();
  }
  char line[1024];
  size_t klen = strlen(key);
  json_t *value = json_null();
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) != 0) {
      continue;
    }
    char *v = strchr(line + klen, sep);
    if (v == NULL) {
      continue;
    }
    v++;
    v += strspn(v, " \t\"");
    v[strcspn(v, "\"\n")] = '\0';
    value = json_string(v);
    break;
  }
  fclose(f);
  return value;
}

json_t *tb_capture_host(void) {
  json_t *host = json_object();
  struct utsname u;
  if (uname(&u) == 0) {
    json_object_set_new(host, "hostname", json_string(u.nodename));
    json_object_set_new(host, "kernel", json_string(u.release));
    json_object_set_new(host, "machine", json_string(u.machine));
  }
  json_object_set_new(host, "os", file_field("/etc/os-release", "PRETTY_NAME", '='));
  json_object_set_new(host, "cpu_model", file_field("/proc/cpuinfo", "model name", ':'));
  json_object_set_new(host, "logical_cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    json_object_set_new(host, "affinity_cpus", json_integer(CPU_COUNT(&set)));
  }
  return host;
}

json_t *tb_capture_thread_env(void) {
  static const char *names[] = {
      "OMP_NUM_THREADS",      "MKL_NUM_THREADS",     "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE",
      "OPENBLAS_L2_SIZE",     "NUMEXPR_NUM_THREADS", "GOMP_CPU_AFFINITY",    "KMP_AFFINITY",
      "OMP_PROC_BIND",        "OMP_PLACES",          "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
      "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING", "TORCH_NUM_THREADS",
  };
  json_t *env = json_object();
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char *v = getenv(names[i]);
    json_object_set_new(env, names[i], v ? json_string(v) : json_null());
  }
  return env;
}

/* CPU ticks (utime + stime) of every process, keyed by pid, with names. */
static json_t *process_ticks(void) {
  json_t *ticks = json_object();
  DIR *proc = opendir("/proc");
  struct dirent *e;
  while (proc && (e = readdir(proc)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') {
      continue;
    }
    char path[300], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
      continue;
    }
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    unsigned long long utime = 0, stime = 0;
    if (open == NULL || close == NULL ||
        sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
               &stime) != 2) {
      continue;
    }
    *close = '\0';
    json_t *entry = json_pack("{s:s, s:I}", "name", open + 1, "ticks", (json_int_t)(utime + stime));
    json_object_set_new(ticks, e->d_name, entry);
  }
  if (proc) {
    closedir(proc);
  }
  return ticks;
}

/* Processes above this share of one CPU count as background load. */
#define TB_BUSY_THRESHOLD_PERCENT 5.0
#define TB_BUSY_WINDOW_MS 200

json_t *tb_capture_busy_processes(void) {
  json_t *before = process_ticks();
  int64_t t0 = tb_monotonic_ns();
  usleep(TB_BUSY_WINDOW_MS * 1000);
  json_t *after = process_ticks();
  double seconds = (double)(tb_monotonic_ns() - t0) / 1e9;
  double hz = (double)sysconf(_SC_CLK_TCK);
  json_t *busy = json_array();
  const char *pid;
  json_t *entry;
  json_object_foreach(after, pid, entry) {
    json_t *old = json_object_get(before, pid);
    if (old == NULL) {
      continue;
    }
    double delta = (double)(json_integer_value(json_object_get(entry, "ticks")) -
                            json_integer_value(json_object_get(old, "ticks")));
    double percent = 100.0 * delta / hz / seconds;
    if (percent >= TB_BUSY_THRESHOLD_PERCENT && atoi(pid) != getpid()) {
      json_array_append_new(busy,
                            json_pack("{s:i, s:O, s:f}", "pid", atoi(pid), "name",
                                      json_object_get(entry, "name"), "cpu_percent", percent));
    }
  }
  json_decref(before);
  json_decref(after);
  double load[3] = {0};
  json_t *snapshot = json_object();
  json_object_set_new(snapshot, "window_ms", json_integer(TB_BUSY_WINDOW_MS));
  json_object_set_new(snapshot, "threshold_cpu_percent", json_real(TB_BUSY_THRESHOLD_PERCENT));
  json_object_set_new(snapshot, "processes", busy);
  if (getloadavg(load, 3) == 3) {
    json_object_set_new(snapshot, "loadavg", json_pack("[f,f,f]", load[0], load[1], load[2]));
  }
  return snapshot;
}
