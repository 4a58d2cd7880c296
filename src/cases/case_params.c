#include "cases/case_params.h"

#include "core/numbers.h"

#include <string.h>

static const char *const variant_names[TB_VARIANT_COUNT] = {"reference", "candidate", "automatic"};

/* "s1p1" .. "s32p32", in the encoding's order: constant, so names outlive every caller. */
#define TB_FIXED_ROW(S)                                                                            \
  "s" #S "p1", "s" #S "p2", "s" #S "p3", "s" #S "p4", "s" #S "p5", "s" #S "p6", "s" #S "p7",       \
      "s" #S "p8", "s" #S "p9", "s" #S "p10", "s" #S "p11", "s" #S "p12", "s" #S "p13",            \
      "s" #S "p14", "s" #S "p15", "s" #S "p16", "s" #S "p17", "s" #S "p18", "s" #S "p19",          \
      "s" #S "p20", "s" #S "p21", "s" #S "p22", "s" #S "p23", "s" #S "p24", "s" #S "p25",          \
      "s" #S "p26", "s" #S "p27", "s" #S "p28", "s" #S "p29", "s" #S "p30", "s" #S "p31",          \
      "s" #S "p32",
static const char *const fixed_names[TB_VARIANT_FIXED_MAX * TB_VARIANT_FIXED_MAX] = {
    TB_FIXED_ROW(1) TB_FIXED_ROW(2) TB_FIXED_ROW(3) TB_FIXED_ROW(4) TB_FIXED_ROW(5) TB_FIXED_ROW(6)
        TB_FIXED_ROW(7) TB_FIXED_ROW(8) TB_FIXED_ROW(9) TB_FIXED_ROW(10) TB_FIXED_ROW(11)
            TB_FIXED_ROW(12) TB_FIXED_ROW(13) TB_FIXED_ROW(14) TB_FIXED_ROW(15) TB_FIXED_ROW(16)
                TB_FIXED_ROW(17) TB_FIXED_ROW(18) TB_FIXED_ROW(19) TB_FIXED_ROW(20) TB_FIXED_ROW(21)
                    TB_FIXED_ROW(22) TB_FIXED_ROW(23) TB_FIXED_ROW(24) TB_FIXED_ROW(25)
                        TB_FIXED_ROW(26) TB_FIXED_ROW(27) TB_FIXED_ROW(28) TB_FIXED_ROW(29)
                            TB_FIXED_ROW(30) TB_FIXED_ROW(31) TB_FIXED_ROW(32)};
#undef TB_FIXED_ROW

const char *tb_variant_name(enum tb_variant v) {
  if (v >= TB_VARIANT_FIXED_FIRST && v < TB_VARIANT_FIXED_END) {
    return fixed_names[v - TB_VARIANT_FIXED_FIRST];
  }
  return variant_names[v];
}

bool tb_variant_fixed_shape(enum tb_variant v, unsigned *s, unsigned *p) {
  switch (v) {
  case TB_VARIANT_REFERENCE: *s = 1, *p = 8; return true;
  case TB_VARIANT_CANDIDATE: *s = 2, *p = 4; return true;
  case TB_VARIANT_AUTOMATIC: return false;
  default:
    *s = (unsigned)(v - TB_VARIANT_FIXED_FIRST) / TB_VARIANT_FIXED_MAX + 1;
    *p = (unsigned)(v - TB_VARIANT_FIXED_FIRST) % TB_VARIANT_FIXED_MAX + 1;
    return true;
  }
}

enum tb_variant tb_variant_fixed(unsigned s, unsigned p) {
  if (s == 1 && p == 8) {
    return TB_VARIANT_REFERENCE;
  }
  if (s == 2 && p == 4) {
    return TB_VARIANT_CANDIDATE;
  }
  return (enum tb_variant)(TB_VARIANT_FIXED_FIRST + (s - 1) * TB_VARIANT_FIXED_MAX + (p - 1));
}

/* Digits of a positive integer with no leading zero, at most 9 of them
 * (beyond that: 0, out of range); *end past them. 0 when there are none. */
static unsigned long digits(const char *text, const char **end) {
  unsigned long value = 0;
  size_t count = 0;
  while (text[count] >= '0' && text[count] <= '9') {
    if (count < 9) {
      value = value * 10 + (unsigned long)(text[count] - '0');
    }
    ++count;
  }
  *end = text + count;
  if (count == 0 || text[0] == '0' || count > 9) {
    return 0;
  }
  return value;
}

enum tb_status tb_variant_parse(const char *text, enum tb_variant *out, struct tb_error *err) {
  for (int v = 0; v < TB_VARIANT_COUNT; ++v) {
    if (strcmp(text, variant_names[v]) == 0) {
      *out = (enum tb_variant)v;
      return TB_OK;
    }
  }
  const char *p_at = NULL, *end = NULL;
  if (text[0] == 's' && text[1] >= '0' && text[1] <= '9') {
    unsigned long s = digits(text + 1, &p_at);
    if (*p_at == 'p' && p_at[1] >= '0' && p_at[1] <= '9') {
      unsigned long p = digits(p_at + 1, &end);
      if (*end == '\0') {
        if (s < 1 || s > TB_VARIANT_FIXED_MAX || p < 1 || p > TB_VARIANT_FIXED_MAX) {
          return tb_fail(err, TB_ERR_USAGE,
                         "variant '%s': S and P of sSpP are integers 1..%d without leading zeros "
                         "(S warps a row, P rows a block: at most 32 warps, 1024 threads)",
                         text, TB_VARIANT_FIXED_MAX);
        }
        *out = tb_variant_fixed((unsigned)s, (unsigned)p);
        return TB_OK;
      }
    }
  }
  return tb_fail(err, TB_ERR_USAGE,
                 "unknown variant '%s' (known: reference, candidate, automatic, or sSpP: a fixed "
                 "register-rows candidate of S warps a row and P rows a block, S and P 1..%d, "
                 "e.g. s4p2)",
                 text, TB_VARIANT_FIXED_MAX);
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
