#include "test_support.h"

#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void assert_double_near(double a, double b, double epsilon, const char *file, int line) {
  if (!(fabs(a - b) <= epsilon)) {
    print_error("%.17g != %.17g (epsilon %.3g)\n", a, b, epsilon);
    _fail(file, line);
  }
}

static float *copy_floats(const float *src, size_t count) {
  float *dst = malloc(count * sizeof *dst);
  memcpy(dst, src, count * sizeof *dst);
  return dst;
}

static void set_tensor(struct tb_tensor *t, const char *role, const float *src, size_t rows,
                       size_t cols) {
  t->role = role;
  t->rows = rows;
  t->cols = cols;
  t->row_stride = cols;
  t->offset = 0;
  t->storage_elems = rows * cols;
  t->storage = copy_floats(src, rows * cols);
}

void hand_case_init(struct hand_case *h, enum tb_op op, size_t m, size_t n, const float *first,
                    const float *second, const float *weight, const float *bias) {
  memset(h, 0, sizeof *h);
  struct tb_case_data *d = &h->data;
  d->c.op = tb_op_info(op);
  d->c.shape.m = m;
  d->c.shape.n = n;
  d->c.view = tb_view_for(TB_VIEW_PACKED, n);
  d->c.provider = "native";
  size_t k = 0;
  set_tensor(&d->inputs[k++], second ? "a" : "x", first, m, n);
  if (second) {
    set_tensor(&d->inputs[k++], "b", second, m, n);
  }
  if (weight) {
    set_tensor(&d->inputs[k++], "weight", weight, 1, n);
  }
  if (bias) {
    set_tensor(&d->inputs[k++], "bias", bias, 1, n);
  }
  d->input_count = k;
  size_t out_cols = d->c.op->output_is_vector ? 1 : n;
  d->output.role = "out";
  d->output.rows = m;
  d->output.cols = out_cols;
  d->output.row_stride = out_cols;
  d->output.storage_elems = m * out_cols;
  d->output.storage = calloc(m * out_cols, sizeof(float));
}

void hand_case_free(struct hand_case *h) {
  tb_case_data_free(&h->data);
}

static void read_all(int fd, char *buf, size_t size) {
  size_t len = 0;
  ssize_t got;
  while (size > 1 && (got = read(fd, buf + len, size - 1 - len)) > 0) {
    len += (size_t)got;
  }
  if (size > 0) {
    buf[len] = '\0';
  }
}

int run_program(const char *const argv[], char *out, size_t out_size, char *errbuf,
                size_t err_size) {
  char out_path[] = "/tmp/tb-test-out-XXXXXX", err_path[] = "/tmp/tb-test-err-XXXXXX";
  int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid;
  extern char **environ;
  int rc = posix_spawn(&pid, argv[0], &actions, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = -1;
  if (rc == 0) {
    waitpid(pid, &status, 0);
  }
  lseek(out_fd, 0, SEEK_SET);
  lseek(err_fd, 0, SEEK_SET);
  read_all(out_fd, out, out_size);
  read_all(err_fd, errbuf, err_size);
  close(out_fd);
  close(err_fd);
  unlink(out_path);
  unlink(err_path);
  if (rc != 0 || !WIFEXITED(status)) {
    return -1;
  }
  return WEXITSTATUS(status);
}

char *make_temp_dir(void) {
  char templ[] = "/tmp/tb-test-dir-XXXXXX";
  char *dir = mkdtemp(templ);
  return dir ? strdup(dir) : NULL;
}
