#define _GNU_SOURCE /* dlinfo, RTLD_DI_LINKMAP */
#include "core/dlfind.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

static void loaded_path(void *handle, char *path, size_t size) {
  struct link_map *map = NULL;
  if (path != NULL && size > 0) {
    path[0] = '\0';
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != NULL && map->l_name != NULL) {
      snprintf(path, size, "%s", map->l_name);
    }
  }
}

void *tb_dlopen_cuda_library(const char *soname, char *path, size_t path_size) {
  void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    const char *subdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib", "extras/CUPTI/lib64"};
    for (size_t h = 0; h < 3 && handle == NULL; ++h) {
      for (size_t d = 0; homes[h] != NULL && d < 4 && handle == NULL; ++d) {
        char candidate[1024];
        snprintf(candidate, sizeof candidate, "%s/%s/%s", homes[h], subdirs[d], soname);
        handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
      }
    }
  }
  if (handle != NULL) {
    loaded_path(handle, path, path_size);
  }
  return handle;
}
