#include "cli/devices.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/merge.h"
#include "core/interrupt.h"
#include "core/numbers.h"
#include "core/strlist.h"
#include "results/results.h"

static bool is_uuid(const char *item) {
  if (strncmp(item, "GPU-", 4) != 0 && strncmp(item, "MIG-", 4) != 0) {
    return false;
  }
  if (item[4] == '\0' || strlen(item) > 96) {
    return false;
  }
  for (const char *p = item + 4; *p; ++p) {
    if (strchr("0123456789abcdefABCDEF-/", *p) == NULL) {
      return false;
    }
  }
  return true;
}

enum tb_status tb_devices_check_list(const char *text, struct tb_error *err) {
  if (strcmp(text, "all") == 0) {
    return TB_OK;
  }
  struct tb_strlist list = {0};
  if (tb_strlist_split(text, "--devices", &list, err) != TB_OK) {
    return err->status;
  }
  enum tb_status st = TB_OK;
  for (size_t i = 0; i < list.count && st == TB_OK; ++i) {
    const char *item = list.items[i];
    unsigned long long ordinal;
    struct tb_error ignored = {0};
    if (!is_uuid(item) && tb_parse_size(item, "--devices", 0, 1023, &ordinal, &ignored) != TB_OK) {
      st = tb_fail(err, TB_ERR_USAGE,
                   "--devices takes all, or GPUs by ordinal (0,1,2) or UUID (GPU-...), not '%s'",
                   item);
    }
    for (size_t k = 0; k < i && st == TB_OK; ++k) {
      if (strcmp(list.items[k], item) == 0) {
        st = tb_fail(err, TB_ERR_USAGE,
                     "--devices names '%s' twice: two campaigns never time on one GPU at once",
                     item);
      }
    }
  }
  tb_strlist_free(&list);
  return st;
}

/* The child: the shard's device alone, its output in its log, then exec. */
static void exec_shard(const struct tb_devices_plan *p, size_t index, const char *dir,
                       const char *log) {
  setpgid(0, 0);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  setenv("CUDA_VISIBLE_DEVICES", p->devices[index], 1);
  int fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0) {
    _exit(127);
  }
  char shard[48];
  snprintf(shard, sizeof shard, "%zu/%zu", index, p->device_count);
  const char **args = calloc(p->campaign_argc + 8, sizeof *args);
  if (args == NULL) {
    _exit(127);
  }
  size_t n = 0;
  args[n++] = p->executable;
  for (size_t i = 0; i < p->campaign_argc; ++i) {
    args[n++] = p->campaign_argv[i];
  }
  args[n++] = "--shard";
  args[n++] = shard;
  args[n++] = "--out";
  args[n++] = dir;
  args[n++] = "--quiet";
  execv(p->executable, (char *const *)args);
  fprintf(stderr, "tilebench: cannot run %s: %s\n", p->executable, strerror(errno));
  _exit(127);
}

/* Waits for every started shard; the first stop signal here is passed on
 * to each still running, once. */
static void wait_all(const struct tb_devices_plan *p, pid_t *pids, int *status) {
  size_t running = 0;
  for (size_t i = 0; i < p->device_count; ++i) {
    running += pids[i] > 0;
  }
  bool forwarded = false;
  while (running > 0) {
    int st = 0;
    pid_t done = waitpid(-1, &st, WNOHANG);
    if (done > 0) {
      for (size_t i = 0; i < p->device_count; ++i) {
        if (pids[i] == done) {
          status[i] = st;
          pids[i] = -pids[i]; /* finished */
          running--;
          fprintf(stderr, "tilebench: shard %zu/%zu (CUDA_VISIBLE_DEVICES=%s) %s %d\n", i,
                  p->device_count, p->devices[i],
                  WIFEXITED(st) ? "exited with" : "was killed by signal",
                  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        }
      }
      continue;
    }
    if (done < 0 && errno == ECHILD) {
      break;
    }
    if (tb_interrupted() && !forwarded) {
      forwarded = true;
      for (size_t i = 0; i < p->device_count; ++i) {
        if (pids[i] > 0) {
          kill(pids[i], tb_interrupted());
        }
      }
      fprintf(stderr, "tilebench: %s passed on to the shards still running\n",
              tb_signal_name(tb_interrupted()));
    }
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

int tb_devices_run(const struct tb_devices_plan *p) {
  struct tb_error err = {0};
  tb_interrupt_install();
  char shards[PATH_MAX];
  snprintf(shards, sizeof shards, "%s/shards", p->out);
  if (tb_claim_out_dir(p->out, &err) != TB_OK) {
    return tb_cli_fail(&err);
  }
  if (mkdir(shards, 0755) != 0) {
    tb_fail(&err, TB_ERR_SYSTEM, "cannot create %s: %s", shards, strerror(errno));
    tb_release_out_dir(p->out);
    return tb_cli_fail(&err);
  }
  size_t n = p->device_count;
  pid_t *pids = calloc(n, sizeof *pids);
  int *status = calloc(n, sizeof *status);
  char(*dirs)[PATH_MAX + 32] = calloc(n, sizeof *dirs);
  const char **dir_list = calloc(n, sizeof *dir_list);
  char **prefixes = calloc(n, sizeof *prefixes);
  if (pids == NULL || status == NULL || dirs == NULL || dir_list == NULL || prefixes == NULL) {
    free(pids);
    free(status);
    free(dirs);
    free(dir_list);
    free(prefixes);
    tb_release_out_dir(p->out);
    fprintf(stderr, "tilebench: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n; ++i) {
    snprintf(dirs[i], sizeof dirs[i], "%s/%zu", shards, i);
    dir_list[i] = dirs[i];
  }
  fflush(stdout);
  fflush(stderr);
  for (size_t i = 0; i < n && !tb_interrupted(); ++i) {
    char log[PATH_MAX + 64];
    snprintf(log, sizeof log, "%s/%zu.log", shards, i);
    size_t prefix_size = strlen(p->devices[i]) + 32;
    prefixes[i] = malloc(prefix_size);
    if (prefixes[i] != NULL) {
      snprintf(prefixes[i], prefix_size, "CUDA_VISIBLE_DEVICES=%s ", p->devices[i]);
    }
    pid_t pid = fork();
    if (pid == 0) {
      exec_shard(p, i, dirs[i], log);
    }
    if (pid < 0) {
      fprintf(stderr, "tilebench: cannot start shard %zu: %s\n", i, strerror(errno));
      continue;
    }
    pids[i] = pid;
    if (!p->quiet) {
      fprintf(stderr, "tilebench: shard %zu/%zu on CUDA_VISIBLE_DEVICES=%s (pid %ld): %s, log %s\n",
              i, n, p->devices[i], (long)pid, dirs[i], log);
    }
  }
  wait_all(p, pids, status);
  struct tb_merge_request req = {.dirs = dir_list,
                                 .dir_count = n,
                                 .out = p->out,
                                 .in_place = true,
                                 .rerun_prefix = (const char *const *)prefixes,
                                 .rerun_prefix_count = n,
                                 .argc = p->argc,
                                 .argv = p->argv,
                                 .quiet = p->quiet};
  int rc = tb_merge_shards(&req);
  tb_release_out_dir(p->out);
  for (size_t i = 0; i < n; ++i) {
    free(prefixes[i]);
  }
  free(prefixes);
  free(pids);
  free(status);
  free(dirs);
  free(dir_list);
  return rc;
}
