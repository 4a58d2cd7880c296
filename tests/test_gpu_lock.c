/* One campaign a GPU (cli/gpu_lock.h): a second process asking for a held
 * GPU's lock is refused with the holder's pid; another GPU's lock is free;
 * the lock goes with the process that held it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/gpu_lock.h"
#include "test_support.h"

static char dir[64];

static int make_dir(void **state) {
  snprintf(dir, sizeof dir, "/tmp/tb-gpu-lock-XXXXXX");
  assert_non_null(mkdtemp(dir));
  setenv("TILEBENCH_LOCK_DIR", dir, 1);
  return 0;
}

static int remove_dir(void **state) {
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  unsetenv("TILEBENCH_LOCK_DIR");
  return system(command) == 0 ? 0 : -1;
}

/* In a child process: 0 when it got the lock of `uuid`, 2 when refused with
 * `expect` in the message, 1 otherwise. */
static int child_tries(const char *uuid, const char *expect) {
  pid_t pid = fork();
  if (pid == 0) {
    struct tb_error err = {0};
    enum tb_status st = tb_gpu_lock_acquire(uuid, &err);
    _exit(st == TB_OK ? 0 : st == TB_ERR_USAGE && strstr(err.message, expect) ? 2 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void a_held_gpu_is_refused_to_another_campaign(void **state) {
  struct tb_error err = {0};
  assert_int_equal(tb_gpu_lock_acquire("GPU-1111", &err), TB_OK);
  char holder[32];
  snprintf(holder, sizeof holder, "pid %ld", (long)getpid());
  assert_int_equal(child_tries("GPU-1111", holder), 2);
  assert_int_equal(child_tries("GPU-2222", ""), 0); /* another GPU: free */
}

/* The child's lock went with it: the parent takes the GPU it timed. */
static void a_lock_goes_with_its_process(void **state) {
  assert_int_equal(child_tries("GPU-3333", ""), 0);
  struct tb_error err = {0};
  assert_int_equal(tb_gpu_lock_acquire("GPU-3333", &err), TB_OK);
}

static void an_unusable_lock_folder_says_why(void **state) {
  setenv("TILEBENCH_LOCK_DIR", "/nonexistent/tb-locks", 1);
  struct tb_error err = {0};
  assert_int_equal(tb_gpu_lock_acquire("GPU-4444", &err), TB_ERR_SYSTEM);
  assert_non_null(strstr(err.message, "cannot open the GPU lock"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_held_gpu_is_refused_to_another_campaign, make_dir,
                                      remove_dir),
      cmocka_unit_test_setup_teardown(a_lock_goes_with_its_process, make_dir, remove_dir),
      cmocka_unit_test_setup_teardown(an_unusable_lock_folder_says_why, make_dir, remove_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
