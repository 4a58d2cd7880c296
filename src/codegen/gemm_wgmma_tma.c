/* The Hopper tensor-core GEMM in one launch, operands copied by TMA.
 *
 * TF32 wgmma reads shared-memory operands K-major only. A (row-major, k
 * contiguous) is; B (n contiguous) is not, and transposing it took the
 * packing launch of gemm_wgmma.c (87 us of 518 at 4096^3, Nsight Compute).
 * Here the block computes its tile transposed, C^T = B^T A^T: wgmma's first
 * operand, which it may take from registers in any layout, is B^T, read
 * from shared memory into each thread's fragment and rounded to TF32 there;
 * its second is A's tile, K-major as it lies, copied by TMA into wgmma's
 * 128-byte swizzled layout and converted to TF32 by the copy itself (the
 * tensor map's TFLOAT32 type: its errors are rounding's, not truncation's,
 * and a pass rounding the tile in shared memory instead cost 1.36x at
 * 4096^3; docs/gemm.md).
 *
 * tb_main: warpgroup 0's thread 0 starts each stage's two tensor copies
 * (they complete on the stage's `full` mbarrier) once both consumers have
 * released it (`empty`); warpgroups 1 and 2 each multiply 64 columns (n) x
 * BM rows (m) with wgmma.m64n{BM}k8. Code for sm_90a.
 *
 * Where the plan splits k (SPLITS > 1: grids under a wave), block b takes
 * tile b % (GRID_M GRID_N) over chunk b / (GRID_M GRID_N) of CHUNK_TILES k
 * tiles and writes its partial tile to the workspace; tb_combine (the
 * matrix-vector plans' second launch) adds each output's partials in chunk
 * order. */
#include <stdio.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/gemm.h"
#include "codegen/gemm_parts.h"
#include "codegen/templates.h"
#include "planner/gemv.h"

static void emit_layout(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  if (plan->k_splits > 1) {
    tb_strbuf_printf(b,
                     "#define SPLITS %llu\n#define CHUNK_TILES %lluLL\n#define OUTPUTS (M * N)\n"
                     "#define COMBINE_THREADS %u\n",
                     plan->k_splits, plan->k_chunk / plan->block_k, TB_GEMV_COMBINE_THREADS);
  }
  tb_strbuf_printf(
      b,
      "#define STAGES %u\n"
      "#define ACC (BM / 2)                 /* accumulators a thread: 64 x BM / 128 */\n"
      "#define TILES ((K + BK - 1) / BK)\n"
      "#define GRID_M ((M + BM - 1) / BM)\n"
      "#define GRID_N ((N + BN - 1) / BN)\n"
      "/* B's k rows 8 floats longer than the tile: a warp's fragment loads\n"
      " * (8 columns x 4 k rows) then fall on 32 distinct banks */\n"
      "#define B_STRIDE (BN + 8)\n"
      "#define A_BYTES (BM * BK * 4)        /* a stage: A's tile (swizzled), then B's */\n"
      "#define B_BYTES (BK * B_STRIDE * 4)\n"
      "#define STAGE_BYTES (A_BYTES + B_BYTES)\n"
      "/* a CUtensorMap: 128 opaque bytes, aligned to 64 */\n"
      "struct __align__(64) tb_tensor_map { unsigned long long bits[16]; };\n"
      "/* Round to nearest TF32, ties away from zero (cvt.rna's result) in two\n"
      " * integer operations: adding half a TF32 unit carries into the kept bits. */\n"
      "static __device__ __forceinline__ unsigned to_tf32(float f) {\n"
      "  return (__float_as_uint(f) + 0x1000u) & 0xffffe000u;\n"
      "}\n",
      plan->stages);
}

/* The tensor copy and the fragment loads of B^T. */
static void emit_operand_helpers(struct tb_strbuf *b) {
  tb_strbuf_printf(
      b,
      "/* the box of `map` at (inner, row) into shared dst, counted on barrier */\n"
      "static __device__ __forceinline__ void tensor_copy(unsigned dst, const tb_tensor_map *map,\n"
      "                                                   int inner, int row, unsigned barrier) "
      "{\n"
      "  asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx"
      "::bytes \"\n"
      "               \"[%%0], [%%1, {%%2, %%3}], [%%4];\\n\"\n"
      "               :: \"r\"(dst), \"l\"((unsigned long long)map), \"r\"(inner), \"r\"(row),\n"
      "                  \"r\"(barrier) : \"memory\");\n"
      "}\n"
      "/* Thread 0 starts k tile t's copies into stage s: A's BM rows x BK, B's BK\n"
      " * rows x B_STRIDE (zeros past the matrices' edges). */\n"
      "static __device__ __forceinline__ void fill(unsigned stages_at, unsigned barriers_at, int "
      "s,\n"
      "    const tb_tensor_map *map_a, const tb_tensor_map *map_b, long long bm, long long bn,\n"
      "    long long t) {\n"
      "  const unsigned stage = stages_at + s * STAGE_BYTES, barrier = barriers_at + 8 * s;\n"
      "  expect_bytes(barrier, STAGE_BYTES);\n"
      "  tensor_copy(stage, map_a, (int)(t * BK), (int)(bm * BM), barrier);\n"
      "  tensor_copy(stage + A_BYTES, map_b, (int)(bn * BN), (int)(t * BK), barrier);\n"
      "}\n"
      "/* The thread's fragments of B^T for a k tile, rounded: per k8 step, column\n"
      " * n (and n + 8) of the tile at k rows t and t + 4 (wgmma's first operand:\n"
      " * its rows are B's columns) */\n"
      "static __device__ __forceinline__ void load_fragments(unsigned *f, const float *bs, int n,\n"
      "                                                      int t) {\n"
      "  _Pragma(\"unroll\") for (int kk = 0; kk < BK / 8; ++kk) {\n"
      "    const float *const p = bs + (8 * kk + t) * B_STRIDE + n;\n"
      "    f[4 * kk] = to_tf32(p[0]);\n"
      "    f[4 * kk + 1] = to_tf32(p[8]);\n"
      "    f[4 * kk + 2] = to_tf32(p[4 * B_STRIDE]);\n"
      "    f[4 * kk + 3] = to_tf32(p[4 * B_STRIDE + 8]);\n"
      "  }\n"
      "}\n");
}

/* The producer: thread 0 starts tile u's copies once the consumers have
 * released its stage (tile u - STAGES); with a split k, tiles counted from
 * the chunk's first. */
static void emit_producer(struct tb_strbuf *b, bool split) {
  tb_strbuf_printf(
      b,
      "static __device__ __forceinline__ void produce(int tiles,%s unsigned stages_at,\n"
      "    unsigned full_at, unsigned empty_at, const tb_tensor_map *map_a,\n"
      "    const tb_tensor_map *map_b, long long bm, long long bn) {\n"
      "  for (int u = 0; u < tiles; ++u) {\n"
      "    const int s = u %% STAGES;\n"
      "    if (u >= STAGES) wait_phase(empty_at + 8 * s, ((u / STAGES) & 1) ^ 1);\n"
      "    fill(stages_at, full_at, s, map_a, map_b, bm, bn, %s);\n"
      "  }\n"
      "}\n",
      split ? " int first," : "", split ? "first + u" : "u");
}

/* A consumer warpgroup: per k tile, once it has landed, its fragments of B^T,
 * four wgmmas, and a wait for them before the fragment registers are
 * written again (ptxas serialises every wgmma otherwise); then one thread
 * releases the stage. The two consumers run unsynchronised, so one loads
 * fragments while the other's wgmmas keep the tensor cores busy. */
static void emit_consumer(struct tb_strbuf *b) {
  tb_strbuf_printf(
      b,
      "static __device__ __forceinline__ void consume(float *acc, int tid, int n, int tiles,\n"
      "    unsigned char *stages, unsigned stages_at, unsigned full_at, unsigned empty_at) {\n"
      "  unsigned f[BK / 2]; /* 4 registers a k8 step */\n"
      "  for (int t = 0; t < tiles; ++t) {\n"
      "    const int s = t %% STAGES;\n"
      "    wait_phase(full_at + 8 * s, (t / STAGES) & 1);\n"
      "    load_fragments(f, reinterpret_cast<const float *>(stages + s * STAGE_BYTES + A_BYTES), "
      "n,\n"
      "                   tid %% 4);\n"
      "    const unsigned long long db = descriptor(stages_at + s * STAGE_BYTES);\n"
      "    /* the fragments are final before the fence */\n"
      "    _Pragma(\"unroll\") for (int i = 0; i < BK / 2; ++i) asm volatile(\"\" : \"+r\"(f[i]) "
      ":: "
      "\"memory\");\n"
      "    hold(acc);\n"
      "    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
      "    /* a k8 step is 32 bytes further along each 128-byte row of A */\n"
      "    _Pragma(\"unroll\") for (int kk = 0; kk < BK / 8; ++kk) mma_k8(acc, f + 4 * kk, db + 2 "
      "* kk);\n"
      "    asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n"
      "    asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");\n"
      "    hold(acc);\n"
      "    if (tid %% 128 == 0)\n"
      "      asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%%0];\\n\" :: \"r\"(empty_at + 8 * "
      "s) : \"memory\");\n"
      "  }\n"
      "}\n");
}

/* Warpgroup 0 produces, 1 and 2 multiply. Per stage two mbarriers: full
 * (the copies' bytes) and empty (both consumers are done with it). */
static void emit_main_kernel(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  const bool split = plan->k_splits > 1;
  tb_emit_signature_with_maps(b, "tb_main", plan->threads, plan->blocks_per_multiprocessor);
  tb_strbuf_printf(b,
                   "  extern __shared__ __align__(1024) unsigned char smem[];\n"
                   "  /* the swizzle permutes by address bits 7-9: stages start on 1024 bytes */\n"
                   "  const unsigned raw = (unsigned)__cvta_generic_to_shared(smem);\n"
                   "  const unsigned stages_at = (raw + 1023u) & ~1023u;\n"
                   "  unsigned char *const stages = smem + (stages_at - raw);\n"
                   "  const unsigned full_at = stages_at + STAGES * STAGE_BYTES;\n"
                   "  const unsigned empty_at = full_at + 8 * STAGES;\n"
                   "  const int tid = threadIdx.x, warpgroup = tid / 128, lane = tid %% 32;\n"
                   "%s",
                   split
                       ? "  /* the block's tile and its chunk of k tiles */\n"
                         "  const long long tile = blockIdx.x % (GRID_M * GRID_N);\n"
                         "  const long long chunk = blockIdx.x / (GRID_M * GRID_N);\n"
                         "  const long long bm = tile / GRID_N, bn = tile % GRID_N;\n"
                         "  const int first = (int)(chunk * CHUNK_TILES);\n"
                         "  const int tiles = (int)(TILES - first < CHUNK_TILES ? TILES - first : "
                         "CHUNK_TILES);\n"
                       : "  const long long bm = blockIdx.x / GRID_N, bn = blockIdx.x % GRID_N;\n"
                         "  const int tiles = (int)TILES;\n");
  tb_strbuf_printf(
      b,
      "  if (tid == 0) {\n"
      "    _Pragma(\"unroll\") for (int s = 0; s < STAGES; ++s) {\n"
      "      asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], 1;\\n\" :: \"r\"(full_at + 8 * "
      "s) : "
      "\"memory\");\n"
      "      asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], 2;\\n\" :: \"r\"(empty_at + 8 "
      "* s) : "
      "\"memory\");\n"
      "    }\n"
      "    asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");\n"
      "  }\n"
      "  __syncthreads();\n"
      "  /* registers moved from the producer to the consumers' accumulators:\n"
      "   * 128 x 40 + 256 x 232 of the SM's 65536 */\n"
      "  if (warpgroup == 0) {\n"
      "    asm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\\n\" ::: \"memory\");\n"
      "    if (tid == 0) produce(tiles,%s stages_at, full_at, empty_at, &map_a, &map_b, bm, "
      "bn);\n"
      "    return;\n"
      "  }\n"
      "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\\n\" ::: \"memory\");\n"
      "  /* the thread's first column of B^T's fragments (rows of wgmma's first operand) */\n"
      "  const int n = (warpgroup - 1) * 64 + ((tid / 32) %% 4) * 16 + lane / 4;\n"
      "  float acc[ACC];\n"
      "  _Pragma(\"unroll\") for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;\n"
      "  consume(acc, tid, n, tiles, stages, stages_at, full_at, empty_at);\n",
      split ? " first," : "");
}

/* Accumulator layout (PTX ISA, wgmma .m64nNk8 f32) of the transposed tile:
 * the thread's rows are columns n and n + 8 of C, d[4j..4j+3] its rows
 * 8j + 2 (lane % 4) and + 1, for the first column, then the second. */
static void emit_epilogue(struct tb_strbuf *b, bool split) {
  if (split) { /* the chunk's partial tile, to the workspace */
    tb_strbuf_printf(b, "  float *const part = workspace + chunk * OUTPUTS;\n");
  }
  tb_strbuf_printf(b,
                   "  _Pragma(\"unroll\") for (int half = 0; half < 2; ++half) {\n"
                   "    const long long col = bn * BN + n + 8 * half;\n"
                   "    if (col >= N) continue;\n"
                   "    _Pragma(\"unroll\") for (int j = 0; j < BM / 8; ++j) {\n"
                   "      const long long row = bm * BM + 8 * j + 2 * (lane %% 4);\n"
                   "      if (row < M) %s[row * N + col] = acc[4 * j + 2 * half];\n"
                   "      if (row + 1 < M) %s[(row + 1) * N + col] = acc[4 * j + 2 * half + 1];\n"
                   "    }\n"
                   "  }\n"
                   "}\n",
                   split ? "part" : "out", split ? "part" : "out");
}

/* The two tensor maps: A's view (k inner, m rows) in BK x BM boxes with the
 * 128-byte swizzle, converted to TF32 by the copy; B's (n inner, k rows) in
 * (BN + 8) x BK boxes, plain fp32 (rounded as fragments). */
static void describe_maps(const struct tb_gemm_plan *plan, struct tb_gemm_strides s,
                          struct tb_generated *g) {
  g->tensor_map_count = 2;
  g->tensor_maps[0] = (struct tb_tensor_map_spec){.of_y = false,
                                                  .inner = plan->k,
                                                  .rows = plan->m,
                                                  .row_stride = s.a,
                                                  .box_inner = plan->block_k,
                                                  .box_rows = plan->block_m,
                                                  .swizzle_128 = true,
                                                  .tf32 = true};
  g->tensor_maps[1] = (struct tb_tensor_map_spec){.of_y = true,
                                                  .inner = plan->n,
                                                  .rows = plan->k,
                                                  .row_stride = s.b,
                                                  .box_inner = plan->block_n + 8,
                                                  .box_rows = plan->block_k,
                                                  .swizzle_128 = false,
                                                  .tf32 = false};
}

enum tb_status tb_codegen_gemm_wgmma_tma(const struct tb_gemm_plan *plan, const struct tb_case *c,
                                         struct tb_generated *g, struct tb_error *err) {
  struct tb_strbuf b = {0};
  struct tb_gemm_strides s = tb_emit_gemm_constants(&b, plan, c);
  emit_layout(&b, plan);
  tb_emit_wgmma_step(&b, plan->block_m, true);
  tb_emit_wgmma_sync_helpers(&b);
  emit_operand_helpers(&b);
  emit_producer(&b, plan->k_splits > 1);
  emit_consumer(&b);
  emit_main_kernel(&b, plan);
  emit_epilogue(&b, plan->k_splits > 1);
  if (plan->k_splits > 1) {
    tb_strbuf_printf(&b, "%s", tb_kernel_gemv_combine);
  }
  describe_maps(plan, s, g);
  return tb_gemm_finish(&b, plan, g, err);
}
