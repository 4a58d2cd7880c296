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
