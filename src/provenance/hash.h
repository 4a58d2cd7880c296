/* SHA-256 (OpenSSL's EVP interface) as lowercase hex. */
#ifndef TB_PROVENANCE_HASH_H
#define TB_PROVENANCE_HASH_H

#include <stddef.h>

#include "core/error.h"

#define TB_SHA256_HEX_LEN 65 /* 64 hex digits and the terminator */

enum tb_status tb_sha256_file(const char *path, char hex[TB_SHA256_HEX_LEN], struct tb_error *err);
void tb_sha256_buffer(const void *data, size_t size, char hex[TB_SHA256_HEX_LEN]);

#endif
