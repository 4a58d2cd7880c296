/* The pieces every GEMM generator emits (gemm.c, gemm_tensor.c,
 * gemm_wgmma.c): the constants, the cp.async stage loader and pipeline,
 * the paired store, and the plan's kernel record. */
#include <stdio.h>

#include "codegen/emit.h"
#include "codegen/gemm_parts.h"
#include "planner/gemv.h"

struct tb_gemm_strides tb_emit_gemm_case(struct tb_strbuf *b, const struct tb_case *c,
                                         const char *plan) {
  struct tb_gemm_strides s = {tb_view_for(c->view.kind, c->shape.k).row_stride,
                              tb_view_for(c->view.kind, c->shape.n).row_stride};
  char what[240];
  snprintf(what, sizeof what, "gemm %zux%zux%zu (leading dimensions %zu, %zu), %s", c->shape.m,
           c->shape.n, c->shape.k, s.a, s.b, plan);
  tb_emit_prelude(b, what, c->op->op);
  tb_strbuf_printf(b,
                   "#define M %zuLL\n#define N %zuLL\n#define K %zuLL\n#define SA %zuLL\n"
                   "#define SB %zuLL\n",
                   c->shape.m, c->shape.n, c->shape.k, s.a, s.b);
  return s;
}

struct tb_gemm_strides tb_emit_gemm_constants(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                                              const struct tb_case *c) {
  char tile[120];
  snprintf(tile, sizeof tile, "%s %ux%ux%u, %u-float loads of A, %u of B",
           tb_realization_name(plan->realization), plan->block_m, plan->block_n, plan->block_k,
           plan->a_vector_width, plan->vector_width);
  struct tb_gemm_strides s = tb_emit_gemm_case(b, c, tile);
  tb_strbuf_printf(b,
                   "#define BM %u\n#define BN %u\n#define BK %u\n"
                   "#define THREADS %u\n#define VW %u\n#define VW_A %u\n",
                   plan->block_m, plan->block_n, plan->block_k, plan->threads, plan->vector_width,
                   plan->a_vector_width);
  bool wide = (unsigned long long)plan->block_m * s.a >= (1ULL << 31) ||
              (unsigned long long)plan->block_k * s.b >= (1ULL << 31);
  tb_strbuf_printf(b, "#define TILE_OFFSET %s\n", wide ? "long long" : "int");
  return s;
}

void tb_emit_gemm_stage_loader(struct tb_strbuf *b) {
  tb_strbuf_printf(
      b,
      "/* W floats (4 or 1) from global to shared memory; A and B each at their own width */\n"
      "template <int W>\n"
      "static __device__ __forceinline__ void copy_async(float *dst, const float *src, "
      "bool valid) {\n"
      "  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);\n"
      "  const int bytes = valid ? W * 4 : 0; /* 0: the destination is zero-filled */\n"
      "  if (W == 4)\n"
      "    asm volatile(\"cp.async.cg.shared.global [%%0], [%%1], 16, %%2;\\n\" :: \"r\"(d), "
      "\"l\"(src), \"r\"(bytes));\n"
      "  else\n"
      "    asm volatile(\"cp.async.ca.shared.global [%%0], [%%1], 4, %%2;\\n\" :: \"r\"(d), "
      "\"l\"(src), \"r\"(bytes));\n"
      "}\n"
      "/* One stage: the block's A tile (BM x BK) and B tile (BK x BN); rows or\n"
      " * columns past the matrix are zero-filled, the source clamped to x or y.\n"
      " * Offsets from the tile's corner (TILE_OFFSET: int unless a tile spans 2^31\n"
      " * floats) and the rows and columns left are 32-bit: 64-bit addresses per\n"
      " * copy cost registers (the 128x128 tiles spilled). */\n"
      "static __device__ __forceinline__ void load_stage(float *as, float *bs,\n"
      "    const float *__restrict__ x, const float *__restrict__ y, long long bm, long long bn,\n"
      "    long long k0, int tid) {\n"
      "  const float *const xa = x + bm * BM * SA + k0, *const yb = y + k0 * SB + bn * BN;\n"
      "  const int rows_a = (int)(M - bm * BM < BM ? M - bm * BM : BM);\n"
      "  const int ks = (int)(K - k0 < BK ? K - k0 : BK);\n"
      "  const int cols_b = (int)(N - bn * BN < BN ? N - bn * BN : BN);\n"
      "  _Pragma(\"unroll\") for (int c = tid; c < BM * BK / VW_A; c += THREADS) {\n"
      "    const int r = c / (BK / VW_A), col = (c %% (BK / VW_A)) * VW_A;\n"
      "    const bool ok = r < rows_a && col < ks;\n"
      "    copy_async<VW_A>(as + r * AS_STRIDE + col, ok ? xa + (TILE_OFFSET)r * SA + col : x, "
      "ok);\n"
      "  }\n"
      "  _Pragma(\"unroll\") for (int c = tid; c < BK * BN / VW; c += THREADS) {\n"
      "    const int r = c / (BN / VW), col = (c %% (BN / VW)) * VW;\n"
      "    const bool ok = r < ks && col < cols_b;\n"
      "    copy_async<VW>(bs + r * BS_STRIDE + col, ok ? yb + (TILE_OFFSET)r * SB + col : y, ok);\n"
      "  }\n"
      "  asm volatile(\"cp.async.commit_group;\\n\" ::);\n"
      "}\n");
}

void tb_emit_gemm_pipeline_open(struct tb_strbuf *b) {
  tb_strbuf_printf(
      b,
      "  extern __shared__ __align__(16) float smem[];\n"
      "  float *const a_tiles = smem, *const b_tiles = smem + STAGES * BM * AS_STRIDE;\n"
      "  const long long grid_n = (N + BN - 1) / BN;\n"
      "  const long long bm = blockIdx.x / grid_n, bn = blockIdx.x %% grid_n;\n"
      "  const int tiles = (int)((K + BK - 1) / BK);\n"
      "  _Pragma(\"unroll\") for (int s = 0; s < STAGES - 1; ++s) {\n"
      "    if (s < tiles) load_stage(a_tiles + s * BM * AS_STRIDE, b_tiles + s * BK * BS_STRIDE,\n"
      "                              x, y, bm, bn, (long long)s * BK, threadIdx.x);\n"
      "    else asm volatile(\"cp.async.commit_group;\\n\" ::); /* uniform group count */\n"
      "  }\n"
      "  for (int tile = 0; tile < tiles; ++tile) {\n"
      "    asm volatile(\"cp.async.wait_group %%0;\\n\" :: \"n\"(STAGES - 2));\n"
      "    /* tile is in shared memory, and every warp is done with tile - 1's stage */\n"
      "    __syncthreads();\n"
      "    const int next = tile + STAGES - 1;\n"
      "    if (next < tiles) load_stage(a_tiles + (next %% STAGES) * BM * AS_STRIDE,\n"
      "                                 b_tiles + (next %% STAGES) * BK * BS_STRIDE, x, y, bm, "
      "bn,\n"
      "                                 (long long)next * BK, threadIdx.x);\n"
      "    else asm volatile(\"cp.async.commit_group;\\n\" ::);\n"
      "    const float *const stage_a = a_tiles + (tile %% STAGES) * BM * AS_STRIDE;\n"
      "    const float *const stage_b = b_tiles + (tile %% STAGES) * BK * BS_STRIDE;\n");
}

void tb_emit_gemm_store_pair(struct tb_strbuf *b, const struct tb_gemm_plan *plan, int indent) {
  if (plan->vector_width == 4) {
    tb_strbuf_printf(b,
                     "%*s/* N %% 4 == 0: both columns are inside or outside, 8-byte aligned */\n"
                     "%*sif (col < N) *reinterpret_cast<float2 *>(out + row * N + col) = "
                     "make_float2(v0, v1);\n",
                     indent, "", indent, "");
    return;
  }
  tb_strbuf_printf(b,
                   "%*sif (col < N) out[row * N + col] = v0;\n"
                   "%*sif (col + 1 < N) out[row * N + col + 1] = v1;\n",
                   indent, "", indent, "");
}

enum tb_status tb_gemm_finish(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                              struct tb_generated *g, struct tb_error *err) {
  /* the packing launch (its spec the caller's) comes before tb_main, a split
   * k's tb_combine after it */
  struct tb_kernel_spec *main_kernel = &g->kernels[plan->pack_blocks > 0 ? 1 : 0];
  g->kernel_count = plan->launches;
  snprintf(main_kernel->name, sizeof main_kernel->name, "tb_main");
  main_kernel->threads_per_block = plan->threads;
  main_kernel->blocks = plan->blocks;
  main_kernel->dynamic_shared_bytes = plan->shared_bytes;
  if (plan->k_splits > 1) {
    struct tb_kernel_spec *combine = &g->kernels[1];
    snprintf(combine->name, sizeof combine->name, "tb_combine");
    combine->threads_per_block = TB_GEMV_COMBINE_THREADS;
    combine->blocks = plan->combine_blocks;
  }
  g->workspace_floats = plan->workspace_floats;
  enum tb_status st = tb_emit_finish(b, g, err);
  /* wgmma, bulk copies and mbarrier transaction counts: sm_90a code, exactly
   * 9.0; the others stream tiles with cp.async (and TF32 mma.sync): Ampere
   * (8.0) and newer */
  g->arch_specific = plan->warpgroups != 0;
  g->min_cc_major = g->arch_specific ? 9 : 8;
  g->min_cc_minor = 0;
  return st;
}
