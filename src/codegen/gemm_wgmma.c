/* The Hopper tensor-core GEMM, in two launches.
 *
 * TF32 wgmma reads both operands from shared memory K-major, in the layout
 * its descriptors name, and would drop (not round) the 13 low mantissa bits.
 * A (row-major, k contiguous) is K-major; B (k x n, n contiguous) is not.
 * Staging every tile through registers to round and transpose it saturated
 * the SM's load/store pipe (Nsight Compute: 94 % of L1 wavefronts, 139
 * TFLOP/s at 4096^3), so the work is split:
 *
 * tb_pack: rounds A and B to nearest TF32 into the workspace, cut into the
 *   chunks one pipeline stage holds, each already in its shared-memory
 *   layout: A's block rows (BM x 32 k) and B's block columns transposed (BN
 *   x 32 k), one 128-byte row per m or n with its 16-byte chunks permuted by
 *   row mod 8 (the 128-byte swizzle), zeros past the matrix edges.
 * tb_main: two warpgroups, each 64 rows x BN columns of wgmma.m64nNk8 per k8
 *   step; one thread moves each stage's two chunks with bulk asynchronous
 *   copies (no load/store pipe) that complete on the stage's mbarrier. Code
 *   for sm_90a (compute capability exactly 9.0). */
#include <stdio.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/gemm.h"
#include "codegen/gemm_parts.h"

/* mma_k8, the k8 step of one warpgroup: d (n / 2 floats a thread) += 64
 * rows of the first operand times the n columns of B at descriptor db. The
 * first operand is read at descriptor da, or with a_in_registers from a[4],
 * the thread's TF32 fragment (PTX ISA: warp q of the warpgroup holds rows
 * 16q + lane/4 and + 8, k columns lane % 4 and + 4). The operand list is
 * spelled out because wgmma names every accumulator. */
void tb_emit_wgmma_step(struct tb_strbuf *b, unsigned n, bool a_in_registers) {
  unsigned count = n / 2;
  unsigned a_slots = a_in_registers ? 4 : 1; /* operands after the accumulators */
  tb_strbuf_printf(b,
                   "static __device__ __forceinline__ void mma_k8(float *d, %s, "
                   "unsigned long long db) {\n"
                   "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%u, 0;\\n\"\n"
                   "               \"wgmma.mma_async.sync.aligned.m64n%uk8.f32.tf32.tf32 {",
                   a_in_registers ? "const unsigned *a" : "unsigned long long da",
                   count + a_slots + 1, n);
  for (unsigned i = 0; i < count; ++i) {
    tb_strbuf_printf(b, i == 0 ? "%%%u" : ", %%%u", i);
  }
  if (a_in_registers) {
    tb_strbuf_printf(b, "}, {%%%u, %%%u, %%%u, %%%u}, %%%u, p, 1, 1;\\n}\\n\"\n               : ",
                     count, count + 1, count + 2, count + 3, count + 4);
  } else {
    tb_strbuf_printf(b, "}, %%%u, %%%u, p, 1, 1;\\n}\\n\"\n               : ", count, count + 1);
  }
  for (unsigned i = 0; i < count; ++i) {
    tb_strbuf_printf(b, "%s\"+f\"(d[%u])",
                     i == 0       ? ""
                     : i % 8 == 0 ? ",\n                 "
                                  : ", ",
                     i);
  }
  tb_strbuf_printf(b, a_in_registers ? "\n               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), "
                                       "\"r\"(a[3]), \"l\"(db), \"r\"(1));\n}\n"
                                     : "\n               : \"l\"(da), \"l\"(db), \"r\"(1));\n}\n");
}

/* Packed layout, shared by the two kernels: chunk (block row bm, k tile t)
 * of A at A_CHUNK (BM x BK floats), chunk (block column bn, t) of B^T after
 * all of A's; floats (row, k) of a chunk at row 32 + ((k / 4) ^ (row % 8)) 4
 * + k % 4. */
static void emit_layout(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  tb_strbuf_printf(
      b,
      "#define STAGES %u\n"
      "#define ACC (BN / 2)                     /* accumulators a thread: 64 x BN / 128 */\n"
      "#define TILES ((K + BK - 1) / BK)\n"
      "#define GRID_M ((M + BM - 1) / BM)\n"
      "#define GRID_N ((N + BN - 1) / BN)\n"
      "#define A_BYTES (BM * BK * 4)            /* a stage: A's chunk, then B^T's */\n"
      "#define STAGE_BYTES ((BM + BN) * BK * 4)\n"
      "#define A_CHUNK(bm, t) ((bm) * TILES * BM * BK + (t) * BM * BK)\n"
      "#define B_CHUNK(bn, t) (GRID_M * TILES * BM * BK + ((bn) * TILES + (t)) * BN * BK)\n"
      "#define SWIZZLED(row, k) ((row) * 32 + ((((k) / 4) ^ ((row) %% 8)) * 4) + (k) %% 4)\n"
      "/* Round to nearest TF32, ties away from zero (cvt.rna's result) in two\n"
      " * integer operations: adding half a TF32 unit carries into the kept bits. */\n"
      "static __device__ __forceinline__ float to_tf32(float f) {\n"
      "  return __uint_as_float((__float_as_uint(f) + 0x1000u) & 0xffffe000u);\n"
      "}\n",
      plan->stages);
}

/* tb_pack: blocks [0, GRID_M TILES) pack A's chunks, one each, straight
 * (float4 in, float4 out, whole 128-byte rows both ways); the rest pack B's
 * through shared memory (rows of n in, rows of k out; the padded stride BN +
 * 1 keeps the column reads on distinct banks). */
static void emit_pack_kernel(struct tb_strbuf *b) {
  tb_emit_signature(b, "tb_pack", 256, 0);
  tb_strbuf_printf(
      b,
      "  __shared__ float tile[BK][BN + 1];\n"
      "  const int tid = threadIdx.x;\n"
      "  if (blockIdx.x < GRID_M * TILES) {\n"
      "    const long long bm = blockIdx.x / TILES, t = blockIdx.x %% TILES;\n"
      "    float *const chunk = workspace + A_CHUNK(bm, t);\n"
      "    _Pragma(\"unroll\") for (int c = tid; c < BM * BK / 4; c += 256) {\n"
      "      const int r = c / 8, k = (c %% 8) * 4;\n"
      "      const long long row = bm * BM + r, col = t * BK + k;\n"
      "      const float *const p = x + row * SA + col;\n"
      "      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);\n"
      "#if VW_A == 4\n"
      "      if (row < M && col < K) v = *reinterpret_cast<const float4 *>(p);\n"
      "#else\n"
      "      if (row < M) {\n"
      "        if (col < K) v.x = p[0];\n"
      "        if (col + 1 < K) v.y = p[1];\n"
      "        if (col + 2 < K) v.z = p[2];\n"
      "        if (col + 3 < K) v.w = p[3];\n"
      "      }\n"
      "#endif\n"
      "      *reinterpret_cast<float4 *>(chunk + SWIZZLED(r, k)) =\n"
      "          make_float4(to_tf32(v.x), to_tf32(v.y), to_tf32(v.z), to_tf32(v.w));\n"
      "    }\n"
      "    return;\n"
      "  }\n"
      "  const long long index = blockIdx.x - GRID_M * TILES;\n"
      "  const long long bn = index / TILES, t = index %% TILES;\n"
      "  for (int c = tid; c < BK * BN; c += 256) {\n"
      "    const int k = c / BN, n = c %% BN;\n"
      "    const long long row = t * BK + k, col = bn * BN + n;\n"
      "    tile[k][n] = row < K && col < N ? y[row * SB + col] : 0.f;\n"
      "  }\n"
      "  __syncthreads();\n"
      "  float *const chunk = workspace + B_CHUNK(bn, t);\n"
      "  _Pragma(\"unroll\") for (int c = tid; c < BN * BK / 4; c += 256) {\n"
      "    const int n = c / 8, k = (c %% 8) * 4;\n"
      "    *reinterpret_cast<float4 *>(chunk + SWIZZLED(n, k)) =\n"
      "        make_float4(to_tf32(tile[k][n]), to_tf32(tile[k + 1][n]), to_tf32(tile[k + 2][n]),\n"
      "                    to_tf32(tile[k + 3][n]));\n"
      "  }\n"
      "}\n");
}

/* What both wgmma kernels synchronise with: the mbarrier a stage's copies
 * complete on (expect_bytes, wait_phase), the operand descriptors, hold. */
void tb_emit_wgmma_sync_helpers(struct tb_strbuf *b) {
  tb_strbuf_printf(
      b,
      "static __device__ __forceinline__ void expect_bytes(unsigned barrier, unsigned bytes) {\n"
      "  asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\\n\"\n"
      "               :: \"r\"(barrier), \"r\"(bytes) : \"memory\");\n"
      "}\n"
      "static __device__ __forceinline__ void wait_phase(unsigned barrier, unsigned parity) {\n"
      "  unsigned done = 0;\n"
      "  while (!done)\n"
      "    asm volatile(\"{\\n.reg .pred p;\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%%1], "
      "%%2;\\n\"\n"
      "                 \"selp.u32 %%0, 1, 0, p;\\n}\\n\" : \"=r\"(done) : \"r\"(barrier), "
      "\"r\"(parity) : \"memory\");\n"
      "}\n"
      "/* Descriptor of a K-major operand at shared address `at`: start address,\n"
      " * leading offset 1 (unused when the k extent lies in one swizzle row),\n"
      " * stride 1024 bytes between groups of 8 rows, 128-byte swizzle (mode 1);\n"
      " * addresses and offsets in 16-byte units. */\n"
      "static __device__ __forceinline__ unsigned long long descriptor(unsigned at) {\n"
      "  return (unsigned long long)((at & 0x3ffffu) >> 4) | (1ull << 16) | (64ull << 32) |\n"
      "         (1ull << 62);\n"
      "}\n"
      "/* Pins the accumulators at this point of the program: reads and writes of\n"
      " * them may not move across a wgmma fence or wait. */\n"
      "static __device__ __forceinline__ void hold(float *d) {\n"
      "  _Pragma(\"unroll\") for (int i = 0; i < ACC; ++i) asm volatile(\"\" : \"+f\"(d[i]) :: "
      "\"memory\");\n"
      "}\n");
}

/* The packed kernel's copies: a bulk copy of contiguous bytes, and thread
 * 0's start of a stage's two. */
static void emit_bulk_copies(struct tb_strbuf *b) {
  tb_strbuf_printf(
      b,
      "/* bytes (a multiple of 16) from global src to shared dst, counted on barrier */\n"
      "static __device__ __forceinline__ void bulk_copy(unsigned dst, const float *src, unsigned "
      "bytes,\n"
      "                                                 unsigned barrier) {\n"
      "  asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes \"\n"
      "               \"[%%0], [%%1], %%2, [%%3];\\n\"\n"
      "               :: \"r\"(dst), \"l\"(src), \"r\"(bytes), \"r\"(barrier) : \"memory\");\n"
      "}\n"
      "/* Thread 0 starts k tile t's copies into stage s. */\n"
      "static __device__ __forceinline__ void fill(unsigned stages_at, unsigned barriers_at, int "
      "s,\n"
      "                                            const float *workspace, long long bm, long long "
      "bn,\n"
      "                                            long long t) {\n"
      "  const unsigned stage = stages_at + s * STAGE_BYTES, barrier = barriers_at + 8 * s;\n"
      "  expect_bytes(barrier, STAGE_BYTES);\n"
      "  bulk_copy(stage, workspace + A_CHUNK(bm, t), A_BYTES, barrier);\n"
      "  bulk_copy(stage + A_BYTES, workspace + B_CHUNK(bn, t), STAGE_BYTES - A_BYTES, barrier);\n"
      "}\n");
}

/* The k loop: tile t multiplies from stage t % STAGES once its copies have
 * landed; after the wait that retires tile t - 1's wgmmas and a barrier (both
 * warpgroups past it), thread 0 refills that stage with tile t - 1 + STAGES.
 * The wait leaves tile t's wgmmas running across the barrier. */
static void emit_main_kernel(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  tb_emit_signature(b, "tb_main", 256, plan->blocks_per_multiprocessor);
  tb_strbuf_printf(
      b,
      "  extern __shared__ __align__(1024) unsigned char smem[];\n"
      "  /* the swizzle permutes by address bits 7-9: stages start on 1024 bytes */\n"
      "  const unsigned raw = (unsigned)__cvta_generic_to_shared(smem);\n"
      "  const unsigned stages_at = (raw + 1023u) & ~1023u;\n"
      "  const unsigned barriers_at = stages_at + STAGES * STAGE_BYTES;\n"
      "  const int tid = threadIdx.x, warpgroup = tid / 128;\n"
      "  const long long bm = blockIdx.x / GRID_N, bn = blockIdx.x %% GRID_N;\n"
      "  const int tiles = (int)TILES;\n"
      "  if (tid == 0) {\n"
      "    _Pragma(\"unroll\") for (int s = 0; s < STAGES; ++s)\n"
      "      asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], 1;\\n\" :: \"r\"(barriers_at + 8 "
      "* "
      "s) : \"memory\");\n"
      "    asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");\n"
      "  }\n"
      "  __syncthreads();\n"
      "  if (tid == 0)\n"
      "    for (int s = 0; s < STAGES && s < tiles; ++s) fill(stages_at, barriers_at, s, "
      "workspace, "
      "bm, bn, s);\n"
      "  float acc[ACC];\n"
      "  _Pragma(\"unroll\") for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;\n"
      "  for (int t = 0; t < tiles; ++t) {\n"
      "    const int s = t %% STAGES;\n"
      "    const unsigned stage = stages_at + s * STAGE_BYTES;\n"
      "    wait_phase(barriers_at + 8 * s, (t / STAGES) & 1);\n"
      "    const unsigned long long da = descriptor(stage + warpgroup * 64 * 128);\n"
      "    const unsigned long long db = descriptor(stage + A_BYTES);\n"
      "    hold(acc);\n"
      "    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
      "    /* a k8 step is 32 bytes further along each 128-byte row */\n"
      "    _Pragma(\"unroll\") for (int kk = 0; kk < BK / 8; ++kk) mma_k8(acc, da + 2 * kk, db + 2 "
      "* kk);\n"
      "    asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n"
      "    asm volatile(\"wgmma.wait_group.sync.aligned 1;\\n\" ::: \"memory\");\n"
      "    __syncthreads();\n"
      "    const int next = t - 1 + STAGES;\n"
      "    if (tid == 0 && t > 0 && next < tiles)\n"
      "      fill(stages_at, barriers_at, (t - 1) %% STAGES, workspace, bm, bn, next);\n"
      "  }\n"
      "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");\n"
      "  hold(acc);\n");
}

/* accumulator layout (PTX ISA, wgmma .m64nNk8 f32): warp q of the warpgroup
 * owns rows 16q + lane/4 and + 8; d[4j..4j+3] are columns 8j + 2 (lane % 4)
 * and + 1 of the first row, then of the second */
static void emit_epilogue(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  tb_strbuf_printf(
      b, "  const int lane = tid %% 32, quarter = (tid / 32) %% 4;\n"
         "  const long long row0 = bm * BM + warpgroup * 64 + quarter * 16 + lane / 4;\n"
         "  _Pragma(\"unroll\") for (int half = 0; half < 2; ++half) {\n"
         "    const long long row = row0 + 8 * half;\n"
         "    if (row >= M) continue;\n"
         "    _Pragma(\"unroll\") for (int j = 0; j < BN / 8; ++j) {\n"
         "      const long long col = bn * BN + 8 * j + 2 * (lane %% 4);\n"
         "      const float v0 = acc[4 * j + 2 * half], v1 = acc[4 * j + 2 * half + 1];\n");
  tb_emit_gemm_store_pair(b, plan, 6);
  tb_strbuf_printf(b, "    }\n"
                      "  }\n"
                      "}\n");
}

enum tb_status tb_codegen_gemm_wgmma(const struct tb_gemm_plan *plan, const struct tb_case *c,
                                     struct tb_generated *g, struct tb_error *err) {
  struct tb_strbuf b = {0};
  tb_emit_gemm_constants(&b, plan, c);
  emit_layout(&b, plan);
  emit_pack_kernel(&b);
  tb_emit_wgmma_step(&b, plan->block_n, false);
  tb_emit_wgmma_sync_helpers(&b);
  emit_bulk_copies(&b);
  emit_main_kernel(&b, plan);
  emit_epilogue(&b, plan);
  snprintf(g->kernels[0].name, sizeof g->kernels[0].name, "tb_pack");
  g->kernels[0].threads_per_block = 256;
  g->kernels[0].blocks = plan->pack_blocks;
  g->kernels[0].static_shared_bytes = 4 * plan->block_k * (plan->block_n + 1); /* tile[BK][BN+1] */
  return tb_gemm_finish(&b, plan, g, err);
}
