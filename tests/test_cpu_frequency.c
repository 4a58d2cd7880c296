/* cpufreq reads around the host phase (docs/method.md §2.7), on a sysfs tree
 * built in a temporary directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provenance/cpu_frequency.h"
#include "test_support.h"

static char root[64];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* cpuN/cpufreq with the governor and frequency given. */
static void add_cpu(int cpu, const char *governor, const char *khz) {
  char path[256];
  snprintf(path, sizeof path, "%s/cpu%d", root, cpu);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/cpu%d/cpufreq", root, cpu);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/cpu%d/cpufreq/scaling_governor", root, cpu);
  write_file(path, governor);
  snprintf(path, sizeof path, "%s/cpu%d/cpufreq/scaling_cur_freq", root, cpu);
  write_file(path, khz);
}

static int make_root(void **state) {
  snprintf(root, sizeof root, "/tmp/tb-cpufreq-XXXXXX");
  assert_non_null(mkdtemp(root));
  return 0;
}

static int remove_root(void **state) {
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", root);
  return system(command) == 0 ? 0 : -1;
}

static void every_cpu_is_read_until_the_first_gap(void **state) {
  add_cpu(0, "performance\n", "3000000\n");
  add_cpu(1, "performance\n", "3100000\n");
  add_cpu(3, "performance\n", "900000\n"); /* after a gap: not read */
  struct tb_cpu_frequency f;
  tb_read_cpu_frequency(root, &f);
  assert_true(f.available);
  assert_int_equal(f.cpus, 2);
  assert_string_equal(f.governor, "performance");
  assert_int_equal(f.khz[1], 3100000);
  assert_int_equal(tb_cpu_frequency_top(&f), 3100000);
}

static void differing_governors_read_as_mixed(void **state) {
  add_cpu(0, "schedutil\n", "1200000\n");
  add_cpu(1, "performance\n", "3100000\n");
  struct tb_cpu_frequency f;
  tb_read_cpu_frequency(root, &f);
  assert_string_equal(f.governor, "mixed");
}

/* The top frequency judges a change; an idle CPU's moves do not. */
static void a_change_of_the_top_frequency_is_seen(void **state) {
  add_cpu(0, "schedutil\n", "3000000\n");
  add_cpu(1, "schedutil\n", "800000\n");
  struct tb_cpu_frequency before, after;
  tb_read_cpu_frequency(root, &before);
  add_cpu(1, "schedutil\n", "2000000\n"); /* the idle CPU woke: top unchanged */
  tb_read_cpu_frequency(root, &after);
  assert_false(tb_cpu_frequency_changed(&before, &after));
  add_cpu(0, "schedutil\n", "2500000\n"); /* the busy CPU slowed by 1/6 */
  tb_read_cpu_frequency(root, &after);
  assert_true(tb_cpu_frequency_changed(&before, &after));
}

static void without_cpufreq_it_says_why(void **state) {
  struct tb_cpu_frequency f;
  tb_read_cpu_frequency(root, &f);
  assert_false(f.available);
  assert_non_null(strstr(f.why_unavailable, "no cpufreq in"));
  add_cpu(0, "performance\n", "not a number\n");
  tb_read_cpu_frequency(root, &f);
  assert_false(f.available);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(every_cpu_is_read_until_the_first_gap, make_root,
                                      remove_root),
      cmocka_unit_test_setup_teardown(differing_governors_read_as_mixed, make_root, remove_root),
      cmocka_unit_test_setup_teardown(a_change_of_the_top_frequency_is_seen, make_root,
                                      remove_root),
      cmocka_unit_test_setup_teardown(without_cpufreq_it_says_why, make_root, remove_root),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
