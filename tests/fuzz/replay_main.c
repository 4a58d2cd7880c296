/* A main() for a fuzz target without libFuzzer: runs it once over each file
 * given, or each file in a directory given. Builds without TB_FUZZ (gcc
 * included) make ctest replay the committed corpora with it, so an input
 * that once crashed stays a test in every build, the sanitized one too. */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return 0;
  }
  size_t size = 0, capacity = 1 << 16;
  uint8_t *data = malloc(capacity);
  size_t got;
  while (data != NULL && (got = fread(data + size, 1, capacity - size, f)) > 0) {
    size += got;
    if (size == capacity) {
      uint8_t *grown = realloc(data, capacity *= 2);
      if (grown == NULL) {
        free(data);
      }
      data = grown;
    }
  }
  fclose(f);
  if (data == NULL) {
    fprintf(stderr, "%s: out of memory\n", path);
    return 0;
  }
  /* an allocation of exactly the input, as libFuzzer passes it */
  uint8_t *exact = malloc(size ? size : 1);
  if (exact != NULL) {
    memcpy(exact, data, size);
    LLVMFuzzerTestOneInput(exact, size);
  }
  free(exact);
  free(data);
  return exact != NULL;
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int inputs = 0, failed = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    DIR *dir = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? opendir(argv[i]) : NULL;
    if (dir == NULL) {
      inputs++;
      failed += !run_file(argv[i]);
      continue;
    }
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        inputs++;
        failed += !run_file(path);
      }
    }
    closedir(dir);
  }
  fprintf(stderr, "%s: %d input(s) run, %d unreadable\n", argv[0], inputs, failed);
  return inputs > 0 && failed == 0 ? 0 : 1;
}
