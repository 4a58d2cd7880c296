/* The Hopper tensor-core GEMM: wgmma.mma_async m64nNk8 with TF32 operands
 * from shared memory, fp32 accumulators in registers. Two warpgroups split
 * the block's 128 rows; each multiplies its 64 rows by the whole block_n
 * columns of B. Code for sm_90a (compute capability exactly 9.0).
 *
 * TF32 wgmma reads both operands K-major. A (row-major, k contiguous) is
 * already; B (k x n, n contiguous) is not, and the tensor core would also
 * drop, not round, the 13 low mantissa bits. So each k tile passes through
 * registers: every thread loads its share of the next tile with 16-byte
 * loads while the tensor cores work on the current one, rounds each value to
 * nearest TF32, and stores A as it is and B transposed, both in the 128-byte
 * swizzled layout the descriptors name (one 128-byte row per m or n, holding
 * the tile's 32 k values, its 16-byte chunks permuted by row mod 8). */
#include <stdio.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/gemm.h"

/* The k8 step of one warpgroup: d (block_n / 2 floats a thread) += the 64
 * rows of A at descriptor da times the block_n columns of B at db. The
 * operand list is spelled out because wgmma names every accumulator. */
static void emit_mma_step(struct tb_strbuf *b, unsigned block_n) {
  unsigned count = block_n / 2;
  tb_strbuf_printf(b,
                   "static __device__ __forceinline__ void mma_k8(float *d, unsigned long long da, "
                   "unsigned long long db) {\n"
                   "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%u, 0;\\n\"\n"
                   "               \"wgmma.mma_async.sync.aligned.m64n%uk8.f32.tf32.tf32 {",
                   count + 2, block_n);
  for (unsigned i = 0; i < count; ++i) {
    tb_strbuf_printf(b, i == 0 ? "%%%u" : ", %%%u", i);
  }
  tb_strbuf_printf(b, "}, %%%u, %%%u, p, 1, 1;\\n}\\n\"\n               : ", count, count + 1);
  for (unsigned i = 0; i < count; ++i) {
    tb_strbuf_printf(b, "%s\"+f\"(d[%u])", i == 0 ? "" : i % 8 == 0 ? ",\n                 " : ", ",
                     i);
  }
  tb_strbuf_printf(b, "\n               : \"l\"(da), \"l\"(db), \"r\"(1));\n}\n");
}

static void emit_helpers(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  tb_strbuf_printf(
      b,
      "#define STAGES %u\n"
      "#define ACC (BN / 2)                        /* accumulators a thread: 64 x BN / 128 */\n"
      "#define A_BYTES (BM * 128)                  /* a stage's A: BM rows of 32 k values */\n"
      "#define STAGE_BYTES ((BM + BN) * 128)       /* ... then B^T: BN rows of 32 k values */\n"
      "#define A_LOADS (BM * BK / 4 / THREADS)     /* float4s a thread stages per k tile */\n"
      "#define B_LOADS (BK * BN / 4 / THREADS)\n"
      "/* Round to nearest TF32, ties away from zero (cvt.rna's result) in two\n"
      " * integer operations: adding half a TF32 unit carries into the kept bits. */\n"
      "static __device__ __forceinline__ unsigned to_tf32(float f) {\n"
      "  return (__float_as_uint(f) + 0x1000u) & 0xffffe000u;\n"
      "}\n"
      "/* Descriptor of a K-major operand at shared address `at`: start address,\n"
      " * leading offset 1 (unused when the k extent lies in one swizzle row),\n"
      " * stride 1024 bytes between groups of 8 rows, 128-byte swizzle (mode 1);\n"
      " * addresses and offsets in 16-byte units. */\n"
      "static __device__ __forceinline__ unsigned long long descriptor(unsigned at) {\n"
      "  return (unsigned long long)((at & 0x3ffffu) >> 4) | (1ull << 16) | (64ull << 32) |\n"
      "         (1ull << 62);\n"
      "}\n"
      "/* Four floats from p, the first `valid` of them (zeros past the matrix). */\n"
      "static __device__ __forceinline__ float4 load4(const float *p, int valid) {\n"
      "#if VW == 4\n"
      "  /* k, n and every row start are multiples of 4: all four or none */\n"
      "  return valid > 0 ? *reinterpret_cast<const float4 *>(p) : make_float4(0.f, 0.f, 0.f, "
      "0.f);\n"
      "#else\n"
      "  return make_float4(valid > 0 ? p[0] : 0.f, valid > 1 ? p[1] : 0.f, valid > 2 ? p[2] : "
      "0.f,\n"
      "                     valid > 3 ? p[3] : 0.f);\n"
      "#endif\n"
      "}\n"
      "/* Thread tid's share of k tile k0 (THREADS = 256): A float4 i is row\n"
      " * tid / 8 + 32 i at k 4 (tid %% 8), so a warp reads 4 whole 128-byte rows; B\n"
      " * float4 i is k row tid %% 16 + 16 ((tid / 32) %% 2) at columns nb + 32 i, nb =\n"
      " * 4 (2 (tid / 64) + (tid %% 32) / 16), so that the transposed 4-byte stores\n"
      " * below hit 32 distinct banks. Successive i differ by constants only: one\n"
      " * address a thread, immediate offsets (ptxas hoisted one per load and\n"
      " * spilled). */\n"
      "static __device__ __forceinline__ void load_tile(float4 *sa, float4 *sb,\n"
      "    const float *__restrict__ x, const float *__restrict__ y, long long bm, long long bn,\n"
      "    long long k0, int tid) {\n"
      "  const float *const xa = x + bm * BM * SA + k0, *const yb = y + k0 * SB + bn * BN;\n"
      "  const int rows_a = (int)(M - bm * BM < BM ? M - bm * BM : BM);\n"
      "  const int ks = (int)(K - k0 < BK ? K - k0 : BK);\n"
      "  const int cols_b = (int)(N - bn * BN < BN ? N - bn * BN : BN);\n"
      "  const int ra = tid / 8, ka = (tid %% 8) * 4;\n"
      "  const float *const pa = xa + (TILE_OFFSET)ra * SA + ka;\n"
      "  _Pragma(\"unroll\") for (int i = 0; i < A_LOADS; ++i)\n"
      "    sa[i] = load4(pa + (TILE_OFFSET)(32 * i) * SA, ra + 32 * i < rows_a ? ks - ka : 0);\n"
      "  const int kb = tid %% 16 + 16 * ((tid / 32) %% 2), nb = 4 * (2 * (tid / 64) + (tid %% 32) / "
      "16);\n"
      "  const float *const pb = yb + (TILE_OFFSET)kb * SB + nb;\n"
      "  _Pragma(\"unroll\") for (int i = 0; i < B_LOADS; ++i)\n"
      "    sb[i] = load4(pb + 32 * i, kb < ks ? cols_b - nb - 32 * i : 0);\n"
      "}\n"
      "/* The staged tile, rounded to TF32, into a stage: byte (row, k) of an operand\n"
      " * is row 128 + ((k / 4) ^ (row %% 8)) 16 + (k %% 4) 4, the 128-byte swizzle.\n"
      " * Rows 32 apart share the permutation: float4 i lands 4096 i bytes on. */\n"
      "static __device__ __forceinline__ void store_tile(unsigned char *stage, const float4 *sa,\n"
      "                                                  const float4 *sb, int tid) {\n"
      "  const int ra = tid / 8, qa = tid %% 8;\n"
      "  unsigned char *const pa = stage + ra * 128 + ((qa ^ (ra %% 8)) << 4);\n"
      "  _Pragma(\"unroll\") for (int i = 0; i < A_LOADS; ++i)\n"
      "    *reinterpret_cast<uint4 *>(pa + 4096 * i) =\n"
      "        make_uint4(to_tf32(sa[i].x), to_tf32(sa[i].y), to_tf32(sa[i].z), "
      "to_tf32(sa[i].w));\n"
      "  const int kb = tid %% 16 + 16 * ((tid / 32) %% 2), nb = 4 * (2 * (tid / 64) + (tid %% 32) / "
      "16);\n"
      "  unsigned char *const pb = stage + A_BYTES + nb * 128 + (kb %% 4) * 4;\n"
      "  _Pragma(\"unroll\") for (int j = 0; j < 4; ++j) {\n"
      "    unsigned char *const column = pb + j * 128 + (((kb / 4) ^ ((nb + j) %% 8)) << 4);\n"
      "    _Pragma(\"unroll\") for (int i = 0; i < B_LOADS; ++i) {\n"
      "      const float v = j == 0 ? sb[i].x : j == 1 ? sb[i].y : j == 2 ? sb[i].z : sb[i].w;\n"
      "      *reinterpret_cast<unsigned *>(column + 4096 * i) = to_tf32(v);\n"
      "    }\n"
      "  }\n"
      "}\n"
      "static __device__ __forceinline__ void async_proxy_fence() {\n"
      "  /* this thread's shared-memory stores, visible to the tensor core's reads */\n"
      "  asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n"
      "}\n"
      "/* Pins the accumulators at this point of the program: reads and writes of\n"
      " * them may not move across a wgmma fence or wait. */\n"
      "static __device__ __forceinline__ void hold(float *d) {\n"
      "  _Pragma(\"unroll\") for (int i = 0; i < ACC; ++i) asm volatile(\"\" : \"+f\"(d[i]) :: "
      "\"memory\");\n"
      "}\n",
      plan->stages);
  emit_mma_step(b, plan->block_n);
}

/* The k loop: tile t multiplies from stage t %% 3 while tile t + 1, staged in
 * registers during tile t - 1, is stored into stage (t + 1) %% 3 (last read by
 * tile t - 2's wgmmas, done before the previous barrier) and tile t + 2 is
 * loaded. The wait leaves this tile's wgmmas running across the barrier. */
static void emit_kernel(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  emit_helpers(b, plan);
  tb_emit_signature(b, "tb_main", plan->threads, 1);
  tb_strbuf_printf(
      b,
      "  extern __shared__ __align__(1024) unsigned char smem[];\n"
      "  /* the swizzle permutes by address bits 7-9: stages start on 1024 bytes */\n"
      "  const unsigned raw = (unsigned)__cvta_generic_to_shared(smem);\n"
      "  const unsigned pad = ((raw + 1023u) & ~1023u) - raw;\n"
      "  unsigned char *const stages = smem + pad;\n"
      "  const unsigned stages_at = raw + pad;\n"
      "  const int tid = threadIdx.x, warpgroup = tid / 128;\n"
      "  const long long grid_n = (N + BN - 1) / BN;\n"
      "  const long long bm = blockIdx.x / grid_n, bn = blockIdx.x %% grid_n;\n"
      "  const int tiles = (int)((K + BK - 1) / BK);\n"
      "  float acc[ACC];\n"
      "  _Pragma(\"unroll\") for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;\n"
      "  float4 sa[A_LOADS], sb[B_LOADS];\n"
      "  load_tile(sa, sb, x, y, bm, bn, 0, tid);\n"
      "  store_tile(stages, sa, sb, tid);\n"
      "  if (tiles > 1) load_tile(sa, sb, x, y, bm, bn, BK, tid);\n"
      "  async_proxy_fence();\n"
      "  __syncthreads();\n"
      "  for (int t = 0; t < tiles; ++t) {\n"
      "    const unsigned stage = stages_at + (t %% STAGES) * STAGE_BYTES;\n"
      "    const unsigned long long da = descriptor(stage + warpgroup * 64 * 128);\n"
      "    const unsigned long long db = descriptor(stage + A_BYTES);\n"
      "    hold(acc);\n"
      "    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
      "    /* a k8 step is 32 bytes further along each 128-byte row */\n"
      "    _Pragma(\"unroll\") for (int kk = 0; kk < BK / 8; ++kk) mma_k8(acc, da + 2 * kk, db + 2 "
      "* kk);\n"
      "    asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n"
      "    if (t + 1 < tiles) store_tile(stages + ((t + 1) %% STAGES) * STAGE_BYTES, sa, sb, tid);\n"
      "    if (t + 2 < tiles) load_tile(sa, sb, x, y, bm, bn, (long long)(t + 2) * BK, tid);\n"
      "    asm volatile(\"wgmma.wait_group.sync.aligned 1;\\n\" ::: \"memory\");\n"
      "    async_proxy_fence();\n"
      "    __syncthreads();\n"
      "  }\n"
      "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");\n"
      "  hold(acc);\n");
  /* accumulator layout (PTX ISA, wgmma .m64nNk8 f32): warp q of the
   * warpgroup owns rows 16q + lane/4 and + 8; d[4j..4j+3] are columns
   * 8j + 2 (lane %% 4) and + 1 of the first row, then of the second */
  tb_strbuf_printf(
      b,
      "  const int lane = tid %% 32, quarter = (tid / 32) %% 4;\n"
      "  const long long row0 = bm * BM + warpgroup * 64 + quarter * 16 + lane / 4;\n"
      "  _Pragma(\"unroll\") for (int half = 0; half < 2; ++half) {\n"
      "    const long long row = row0 + 8 * half;\n"
      "    if (row >= M) continue;\n"
      "    _Pragma(\"unroll\") for (int j = 0; j < BN / 8; ++j) {\n"
      "      const long long col = bn * BN + 8 * j + 2 * (lane %% 4);\n"
      "      const float v0 = acc[4 * j + 2 * half], v1 = acc[4 * j + 2 * half + 1];\n"
      "%s"
      "    }\n"
      "  }\n"
      "}\n",
      plan->vector_width == 4
          ? "      /* N % 4 == 0: both columns are inside or outside, 8-byte aligned */\n"
            "      if (col < N) *reinterpret_cast<float2 *>(out + row * N + col) = "
            "make_float2(v0, v1);\n"
          : "      if (col < N) out[row * N + col] = v0;\n"
            "      if (col + 1 < N) out[row * N + col + 1] = v1;\n");
}

enum tb_status tb_codegen_gemm_wgmma(const struct tb_gemm_plan *plan, const struct tb_case *c,
                                     struct tb_generated *g, struct tb_error *err) {
  struct tb_strbuf b = {0};
  tb_emit_gemm_constants(&b, plan, c);
  emit_kernel(&b, plan);
  enum tb_status st = tb_gemm_finish(&b, plan, g, err);
  /* wgmma and its fences exist in sm_90a code only: exactly 9.0 */
  g->min_cc_major = 9;
  g->min_cc_minor = 0;
  g->arch_specific = true;
  return st;
}
