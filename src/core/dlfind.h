/* dlopen by soname, falling back to the CUDA toolkit's usual directories
 * ($CUDA_HOME/lib64, /usr/local/cuda/lib64, ...), so a CUDA library that the
 * loader path lacks is still found. Reports the file that was loaded. */
#ifndef TB_CORE_DLFIND_H
#define TB_CORE_DLFIND_H

#include <stddef.h>

/* Returns the handle or NULL; path (if given) receives the loaded file. */
void *tb_dlopen_cuda_library(const char *soname, char *path, size_t path_size);

#endif
