/* GEMM kernels: out (M x N) = a (M x K, leading dimension SA) . b (K x N,
 * leading dimension SB), fp32, from a tb_gemm_plan. The shape and the tile
 * are compile-time constants of the source, so each case's kernel is
 * specialised; every global access is guarded, so any M, N, K and leading
 * dimension work. Generators: SIMT (this file), tensor cores
 * (gemm_tensor.c, gemm_wgmma.c) and matrix-vector products (gemv.c). */
#include <string.h>

#include "codegen/emit.h"
#include "codegen/gemm.h"
#include "codegen/gemm_parts.h"

/* Thread (tx, ty) of 16 x 16 owns rows ROW(i) and columns COL(j): groups of
 * 4 spaced 64 apart, so a warp's float4 reads from shared memory hit
 * distinct banks or broadcast. A stays k-contiguous in shared memory (as
 * cp.async copies it): one float4 read gives a row's next 4 k values. */
static void emit_simt_kernel(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  tb_strbuf_printf(
      b,
      "#define TM %u\n#define TN %u\n#define STAGES %u\n#define AS_STRIDE (BK + 4)\n"
      "#define BS_STRIDE (BN + 4)\n"
      "#define ROW(i) (TM >= 4 ? ((i) / 4) * 64 + ty * 4 + (i) %% 4 : ty * TM + (i))\n"
      "#define COL(j) (TN >= 4 ? ((j) / 4) * 64 + tx * 4 + (j) %% 4 : tx * TN + (j))\n",
      plan->thread_m, plan->thread_n, plan->stages);
  tb_emit_gemm_stage_loader(b);
  tb_emit_signature(b, "tb_main", plan->threads, plan->blocks_per_multiprocessor);
  tb_strbuf_printf(b, "  const int tx = threadIdx.x %% 16, ty = threadIdx.x / 16;\n"
                      "  float acc[TM][TN];\n"
                      "  _Pragma(\"unroll\") for (int i = 0; i < TM; ++i)\n"
                      "    _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;\n");
  tb_emit_gemm_pipeline_open(b);
  tb_strbuf_printf(
      b,
      "    _Pragma(\"unroll\") for (int kq = 0; kq < BK; kq += 4) {\n"
      "      float ak[TM][4];\n"
      "      _Pragma(\"unroll\") for (int i = 0; i < TM; ++i) {\n"
      "        const float4 v = *reinterpret_cast<const float4 *>(stage_a + ROW(i) * AS_STRIDE + "
      "kq);\n"
      "        ak[i][0] = v.x; ak[i][1] = v.y; ak[i][2] = v.z; ak[i][3] = v.w;\n"
      "      }\n"
      "      _Pragma(\"unroll\") for (int kk = 0; kk < 4; ++kk) {\n"
      "        const float *const brow = stage_b + (kq + kk) * BS_STRIDE;\n"
      "        float bv[TN];\n");
  if (plan->thread_n >= 4) {
    tb_strbuf_printf(
        b, "        _Pragma(\"unroll\") for (int j = 0; j < TN; j += 4) {\n"
           "          const float4 v = *reinterpret_cast<const float4 *>(brow + COL(j));\n"
           "          bv[j] = v.x; bv[j + 1] = v.y; bv[j + 2] = v.z; bv[j + 3] = v.w;\n"
           "        }\n");
  } else {
    tb_strbuf_printf(
        b, "        _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) bv[j] = brow[COL(j)];\n");
  }
  tb_strbuf_printf(b, "        _Pragma(\"unroll\") for (int i = 0; i < TM; ++i)\n"
                      "          _Pragma(\"unroll\") for (int j = 0; j < TN; ++j)\n"
                      "            acc[i][j] = fmaf(ak[i][kk], bv[j], acc[i][j]);\n"
                      "      }\n"
                      "    }\n"
                      "  }\n"
                      "  _Pragma(\"unroll\") for (int i = 0; i < TM; ++i) {\n"
                      "    const long long row = bm * BM + ROW(i);\n"
                      "    if (row >= M) continue;\n");
  if (plan->vector_width == 4 && plan->thread_n >= 4) {
    /* N % 4 == 0: a group of 4 columns is wholly inside or outside */
    tb_strbuf_printf(
        b, "    _Pragma(\"unroll\") for (int j = 0; j < TN; j += 4) {\n"
           "      const long long col = bn * BN + COL(j);\n"
           "      if (col < N)\n"
           "        *reinterpret_cast<float4 *>(out + row * N + col) =\n"
           "            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);\n"
           "    }\n  }\n}\n");
    return;
  }
  tb_strbuf_printf(b, "    _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) {\n"
                      "      const long long col = bn * BN + COL(j);\n"
                      "      if (col < N) out[row * N + col] = acc[i][j];\n"
                      "    }\n"
                      "  }\n"
                      "}\n");
}

enum tb_status tb_codegen_gemm(const struct tb_gemm_plan *plan, const struct tb_case *c,
                               struct tb_generated *g, struct tb_error *err) {
  memset(g, 0, sizeof *g);
  if (!c->op->is_matmul || plan->m != c->shape.m || plan->n != c->shape.n ||
      plan->k != c->shape.k) {
    return tb_fail(err, TB_ERR_RUN, "gemm plan does not belong to the case");
  }
  if (plan->gemv != TB_GEMV_NONE) {
    return tb_codegen_gemv(plan, c, g, err);
  }
  if (plan->warpgroups != 0) {
    return plan->tensor_maps ? tb_codegen_gemm_wgmma_tma(plan, c, g, err)
                             : tb_codegen_gemm_wgmma(plan, c, g, err);
  }
  if (plan->realization != TB_REALIZATION_SIMT) {
    return tb_codegen_gemm_tensor(plan, c, g, err);
  }
  struct tb_strbuf b = {0};
  tb_emit_gemm_constants(&b, plan, c);
  emit_simt_kernel(&b, plan);
  return tb_gemm_finish(&b, plan, g, err);
}
