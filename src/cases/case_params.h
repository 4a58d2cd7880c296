/* The choices a case carries beyond operation, shape and view: which planner
 * variant runs (planned row reductions), how a gemm computes its products
 * (the realization) and a user's gemm block. The planner reads them; they
 * live with the case so that cases/ depends on no layer above it. */
#ifndef TB_CASES_CASE_PARAMS_H
#define TB_CASES_CASE_PARAMS_H

#include <stdbool.h>

#include "core/error.h"

/* A planner variant: the three named ones, or a fixed register-rows
 * candidate sSpP (S warps a row, P rows a block; docs/planner.md), encoded
 * as TB_VARIANT_FIXED_FIRST + (S-1)*TB_VARIANT_FIXED_MAX + (P-1). The named
 * fixed variants keep their names: reference is s1p8 and candidate s2p4, so
 * `s1p8` and `s2p4` parse to them (synonyms; one name, one case id). */
#define TB_VARIANT_FIXED_MAX 32 /* S and P are 1..32: at most 32 warps, 1024 threads a block */
enum tb_variant {
  TB_VARIANT_REFERENCE, /* s1p8 */
  TB_VARIANT_CANDIDATE, /* s2p4 */
  TB_VARIANT_AUTOMATIC,
  TB_VARIANT_COUNT, /* the named variants */
  TB_VARIANT_FIXED_FIRST = 256,
  TB_VARIANT_FIXED_END = TB_VARIANT_FIXED_FIRST + TB_VARIANT_FIXED_MAX * TB_VARIANT_FIXED_MAX
};

/* "reference", "candidate", "automatic" or "sSpP"; static storage. */
const char *tb_variant_name(enum tb_variant v);
/* A named variant or sSpP (S, P 1..32, no leading zeros); TB_ERR_USAGE
 * saying what is accepted otherwise. */
enum tb_status tb_variant_parse(const char *text, enum tb_variant *out, struct tb_error *err);
/* The fixed (s, p) of reference, candidate or sSpP: false for automatic. */
bool tb_variant_fixed_shape(enum tb_variant v, unsigned *s, unsigned *p);
/* The variant that fixes (s, p), both 1..TB_VARIANT_FIXED_MAX: reference for
 * (1, 8), candidate for (2, 4), else sSpP. */
enum tb_variant tb_variant_fixed(unsigned s, unsigned p);

/* How the products are computed, and so at which precision. */
enum tb_realization {
  TB_REALIZATION_SIMT,          /* fp32 FMA on the CUDA cores */
  TB_REALIZATION_TENSOR,        /* TF32 tensor cores: inputs rounded to 10-bit mantissas */
  TB_REALIZATION_TENSOR_3XTF32, /* TF32 tensor cores, error-compensated split: fp32 accuracy */
  TB_REALIZATION_COUNT
};

const char *tb_realization_name(enum tb_realization r);
/* "fp32", "tf32", "fp32 (3xTF32)": what every report labels the numbers with. */
const char *tb_realization_precision(enum tb_realization r);
enum tb_status tb_realization_parse(const char *text, enum tb_realization *out,
                                    struct tb_error *err);
/* Whether the realization rounds inputs to TF32 (its own tolerance). */
bool tb_realization_is_tf32(enum tb_realization r);

/* How a device sample's calls reach the GPU (docs/method.md §2.3). */
enum tb_batch_mode {
  TB_BATCH_EAGER, /* the calls launched one by one inside the timing */
  TB_BATCH_GRAPH, /* the calls captured once into a CUDA graph; one replay timed */
  TB_BATCH_HELD,  /* the calls queued behind a blocking kernel, released at the end */
  TB_BATCH_MODE_COUNT
};

/* "eager", "graph", "held". */
const char *tb_batch_mode_name(enum tb_batch_mode mode);
enum tb_status tb_batch_mode_parse(const char *text, enum tb_batch_mode *out, struct tb_error *err);

/* A block shape from --gemm-block M,N,K; zeros when not given. */
struct tb_gemm_block {
  unsigned m, n, k;
};

enum tb_status tb_gemm_block_parse(const char *text, struct tb_gemm_block *out,
                                   struct tb_error *err);

#endif
