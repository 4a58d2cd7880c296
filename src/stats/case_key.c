#include "stats/case_key.h"

#include <stdio.h>
#include <string.h>

char *tb_case_base_key(const char *id, char *key, size_t size) {
  snprintf(key, size, "%s", id);
  char *slash = strrchr(key, '/');
  if (slash != NULL) {
    *slash = '\0';
  }
  return key;
}

char *tb_case_unit_key(const char *id, char *key, size_t size) {
  snprintf(key, size, "%s", id);
  char *p = key;
  for (int slashes = 0; *p; ++p) {
    if (*p == '/' && ++slashes == 3) {
      *p = '\0';
      break;
    }
  }
  return key;
}
