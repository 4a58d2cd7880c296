/* The tensor-core GEMM: mma.sync m16n8k8 with TF32 operands, fp32
 * accumulators. Tiles of A and B stream through shared memory in a 3-stage
 * cp.async pipeline (zero-filled past the matrix edges, so no branch guards
 * the copies). Realization `tensor` rounds each operand to TF32 (10-bit
 * mantissa, round to nearest); `tensor-3xtf32` splits each into a TF32 part
 * and a TF32 remainder and adds the three significant products, which keeps
 * fp32 accuracy at three times the tensor work. */
#include <stdio.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/gemm.h"
#include "codegen/gemm_parts.h"

static void emit_helpers(struct tb_strbuf *b) {
  tb_emit_gemm_stage_loader(b);
  tb_strbuf_printf(
      b,
      "/* A's four fragment registers of one m16 x k8 tile in one instruction: the\n"
      " * 8x8 b16 matrices are 8 rows x 4 floats (rows 0-7, 8-15 at k 0-3, then 4-7). */\n"
      "static __device__ __forceinline__ void load_a_fragment(unsigned *a, const float *p) {\n"
      "  const unsigned s = (unsigned)__cvta_generic_to_shared(p);\n"
      "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%%0,%%1,%%2,%%3}, [%%4];\\n\"\n"
      "               : \"=r\"(a[0]), \"=r\"(a[1]), \"=r\"(a[2]), \"=r\"(a[3]) : \"r\"(s));\n"
      "}\n"
      "/* Round to nearest TF32, ties away from zero (cvt.rna's result) in two\n"
      " * integer operations: cvt.rna.tf32.f32 kept the ALU pipe the busiest (ncu).\n"
      " * Adding half a TF32 unit to the magnitude carries into the kept bits;\n"
      " * infinities stay infinite, finite values past the largest TF32 round to\n"
      " * infinity as cvt.rna does (a NaN whose payload lies only in the 13 dropped\n"
      " * bits would become infinity; the generated inputs are finite). */\n"
      "static __device__ __forceinline__ unsigned to_tf32(float f) {\n"
      "  return (__float_as_uint(f) + 0x1000u) & 0xffffe000u;\n"
      "}\n"
      "static __device__ __forceinline__ void mma_tf32(float *c, const unsigned *a, "
      "const unsigned *b) {\n"
      "  asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \"\n"
      "               \"{%%0,%%1,%%2,%%3}, {%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%0,%%1,%%2,%%3};\\n\"\n"
      "               : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\n"
      "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), "
      "\"r\"(b[1]));\n"
      "}\n");
}

/* Fragments of one k8 step (PTX ISA, m16n8k8 .tf32): thread (g = lane/4,
 * t = lane%4) holds A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4] (ldmatrix) and
 * B[t][g], B[t+4][g]; with the padded strides these are conflict-free. */
static void emit_k_step(struct tb_strbuf *b, bool split) {
  tb_strbuf_printf(
      b,
      "      unsigned a[MI][4], bf[NI][2];\n"
      "%s"
      "      _Pragma(\"unroll\") for (int mi = 0; mi < MI; ++mi) {\n"
      "        load_a_fragment(a[mi], as + (mi * 16 + lane %% 8 + (lane / 8 %% 2) * 8) * AS_STRIDE "
      "+\n"
      "                                   kk + (lane / 16) * 4);\n"
      "        _Pragma(\"unroll\") for (int e = 0; e < 4; ++e) {\n"
      "          const float v = __uint_as_float(a[mi][e]);\n"
      "          a[mi][e] = to_tf32(v);\n"
      "%s"
      "        }\n"
      "      }\n"
      "      _Pragma(\"unroll\") for (int ni = 0; ni < NI; ++ni) {\n"
      "        const float *p = bs + (kk + t) * BS_STRIDE + ni * 8 + g;\n"
      "        const float v[2] = {p[0], p[4 * BS_STRIDE]};\n"
      "        _Pragma(\"unroll\") for (int e = 0; e < 2; ++e) {\n"
      "          bf[ni][e] = to_tf32(v[e]);\n"
      "%s"
      "        }\n"
      "      }\n"
      "      _Pragma(\"unroll\") for (int mi = 0; mi < MI; ++mi)\n"
      "        _Pragma(\"unroll\") for (int ni = 0; ni < NI; ++ni) {\n"
      "%s"
      "        }\n",
      split ? "      unsigned a_lo[MI][4], b_lo[NI][2]; /* the TF32 remainders */\n" : "",
      split ? "          a_lo[mi][e] = to_tf32(v - __uint_as_float(a[mi][e]));\n" : "",
      split ? "          b_lo[ni][e] = to_tf32(v[e] - __uint_as_float(bf[ni][e]));\n" : "",
      split ? "          /* small terms first, then the main product */\n"
              "          mma_tf32(part[mi][ni], a_lo[mi], bf[ni]);\n"
              "          mma_tf32(part[mi][ni], a[mi], b_lo[ni]);\n"
              "          mma_tf32(part[mi][ni], a[mi], bf[ni]);\n"
            : "          mma_tf32(acc[mi][ni], a[mi], bf[ni]);\n");
}

static void emit_kernel(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  bool split = plan->realization == TB_REALIZATION_TENSOR_3XTF32;
  tb_strbuf_printf(b,
                   "#define WARPS_N %u\n#define WTM %u\n#define WTN %u\n#define MI (WTM / 16)\n"
                   "#define NI (WTN / 8)\n#define STAGES %u\n#define AS_STRIDE (BK + 4)\n"
                   "#define BS_STRIDE (BN + 8)\n",
                   plan->warps_n, plan->thread_m, plan->thread_n, plan->stages);
  emit_helpers(b);
  tb_emit_signature(b, "tb_main", plan->threads, plan->blocks_per_multiprocessor);
  tb_strbuf_printf(
      b, "  const int warp = threadIdx.x / 32, lane = threadIdx.x %% 32;\n"
         "  const int wm = warp / WARPS_N, wn = warp %% WARPS_N, g = lane / 4, t = lane %% 4;\n"
         "  float acc[MI][NI][4];\n"
         "  _Pragma(\"unroll\") for (int mi = 0; mi < MI; ++mi)\n"
         "    _Pragma(\"unroll\") for (int ni = 0; ni < NI; ++ni)\n"
         "      _Pragma(\"unroll\") for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;\n");
  tb_emit_gemm_pipeline_open(b);
  tb_strbuf_printf(
      b,
      "    const float *as = stage_a + wm * WTM * AS_STRIDE;\n"
      "    const float *bs = stage_b + wn * WTN;\n"
      "%s"
      "    _Pragma(\"unroll\") for (int kk = 0; kk < BK; kk += 8) {\n",
      split ? "    /* the split accumulates each tile from zero and adds it in fp32 with\n"
              "     * round-to-nearest: long sums inside the tensor core truncate */\n"
              "    float part[MI][NI][4];\n"
              "    _Pragma(\"unroll\") for (int mi = 0; mi < MI; ++mi)\n"
              "      _Pragma(\"unroll\") for (int ni = 0; ni < NI; ++ni)\n"
              "        _Pragma(\"unroll\") for (int e = 0; e < 4; ++e) part[mi][ni][e] = 0.0f;\n"
            : "");
  emit_k_step(b, split);
  tb_strbuf_printf(
      b,
      "    }\n"
      "%s"
      "  }\n",
      split ? "    _Pragma(\"unroll\") for (int mi = 0; mi < MI; ++mi)\n"
              "      _Pragma(\"unroll\") for (int ni = 0; ni < NI; ++ni)\n"
              "        _Pragma(\"unroll\") for (int e = 0; e < 4; ++e) acc[mi][ni][e] += "
              "part[mi][ni][e];\n"
            : "");
  tb_strbuf_printf(
      b, "  /* accumulator e of (mi, ni): row g (+8 for e >= 2), column 2t (+1 for odd e) */\n"
         "  _Pragma(\"unroll\") for (int mi = 0; mi < MI; ++mi)\n"
         "    _Pragma(\"unroll\") for (int half = 0; half < 2; ++half) {\n"
         "      const long long row = bm * BM + wm * WTM + mi * 16 + g + half * 8;\n"
         "      if (row >= M) continue;\n"
         "      _Pragma(\"unroll\") for (int ni = 0; ni < NI; ++ni) {\n"
         "        const long long col = bn * BN + wn * WTN + ni * 8 + 2 * t;\n"
         "        const float v0 = acc[mi][ni][2 * half], v1 = acc[mi][ni][2 * half + 1];\n");
  tb_emit_gemm_store_pair(b, plan, 8);
  tb_strbuf_printf(b, "      }\n"
                      "    }\n"
                      "}\n");
}

enum tb_status tb_codegen_gemm_tensor(const struct tb_gemm_plan *plan, const struct tb_case *c,
                                      struct tb_generated *g, struct tb_error *err) {
  struct tb_strbuf b = {0};
  tb_emit_gemm_constants(&b, plan, c);
  emit_kernel(&b, plan);
  return tb_gemm_finish(&b, plan, g, err);
}
