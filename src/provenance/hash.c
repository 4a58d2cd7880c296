#include "provenance/hash.h"

#include <openssl/evp.h>
#include <stdio.h>

static void to_hex(const unsigned char *digest, unsigned len, char hex[TB_SHA256_HEX_LEN]) {
  for (unsigned i = 0; i < len && i < 32; ++i) {
    snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  }
}

void tb_sha256_buffer(const void *data, size_t size, char hex[TB_SHA256_HEX_LEN]) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_Digest(data, size, digest, &len, EVP_sha256(), NULL);
  to_hex(digest, len, hex);
}

enum tb_status tb_sha256_file(const char *path, char hex[TB_SHA256_HEX_LEN], struct tb_error *err) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "cannot open %s to hash it", path);
  }
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
  unsigned char buf[1 << 16];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
    EVP_DigestUpdate(ctx, buf, got);
  }
  int failed = ferror(f);
  fclose(f);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx, digest, &len);
  EVP_MD_CTX_free(ctx);
  if (failed) {
    return tb_fail(err, TB_ERR_SYSTEM, "read error while hashing %s", path);
  }
  to_hex(digest, len, hex);
  return TB_OK;
}
