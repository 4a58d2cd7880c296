#include "cases/case_params.h"

#include "core/numbers.h"

#include <string.h>

static const char *const variant_names[TB_VARIANT_COUNT] = {"reference", "candidate", "automatic"};

const char *tb_variant_name(enum tb_variant v) {
  return variant_names[v];
}

enum tb_status tb_variant_parse(const char *text, enum tb_variant *out, struct tb_error *err) {
  for (int v = 0; v < TB_VARIANT_COUNT; ++v) {
    if (strcmp(text, variant_names[v]) == 0) {
      *out = (enum tb_variant)v;
      return TB_OK;
    }
  }
  return tb_fail(err, TB_ERR_USAGE, "unknown variant '%s' (known: reference,candidate,automatic)",
                 text);
}

static const char *const names[TB_REALIZATION_COUNT] = {"simt", "tensor", "tensor-3xtf32"};
static const char *const precisions[TB_REALIZATION_COUNT] = {"fp32", "tf32", "fp32 (3xTF32 split)"};

const char *tb_realization_name(enum tb_realization r) {
  return r < TB_REALIZATION_COUNT ? names[r] : "?";
}

const char *tb_realization_precision(enum tb_realization r) {
  return r < TB_REALIZATION_COUNT ? precisions[r] : "?";
}

bool tb_realization_is_tf32(enum tb_realization r) {
  return r == TB_REALIZATION_TENSOR;
}

enum tb_status tb_realization_parse(const char *text, enum tb_realization *out,
                                    struct tb_error *err) {
  for (int r = 0; r < TB_REALIZATION_COUNT; ++r) {
    if (strcmp(text, names[r]) == 0) {
      *out = (enum tb_realization)r;
      return TB_OK;
    }
  }
  return tb_fail(err, TB_ERR_USAGE,
                 "unknown matrix realization '%s' (known: simt, tensor (TF32), tensor-3xtf32)",
                 text);
}

enum tb_status tb_gemm_block_parse(const char *text, struct tb_gemm_block *out,
                                   struct tb_error *err) {
  unsigned long long mnk[3];
  if (tb_parse_size_list(text, "--gemm-block M,N,K", 3, 1, 4096, mnk, err) != TB_OK) {
    return err->status;
  }
  out->m = (unsigned)mnk[0];
  out->n = (unsigned)mnk[1];
  out->k = (unsigned)mnk[2];
  return TB_OK;
}

static const char *const batch_mode_names[TB_BATCH_MODE_COUNT] = {"eager", "graph", "held"};

const char *tb_batch_mode_name(enum tb_batch_mode mode) {
  return mode < TB_BATCH_MODE_COUNT ? batch_mode_names[mode] : "unknown";
}

enum tb_status tb_batch_mode_parse(const char *text, enum tb_batch_mode *out,
                                   struct tb_error *err) {
  for (int m = 0; m < TB_BATCH_MODE_COUNT; ++m) {
    if (strcmp(text, batch_mode_names[m]) == 0) {
      *out = (enum tb_batch_mode)m;
      return TB_OK;
    }
  }
  return tb_fail(err, TB_ERR_USAGE, "unknown batch mode '%s' (known: eager, graph, held)", text);
}
