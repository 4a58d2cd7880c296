/* GEMM kernels: out (M x N) = a (M x K, leading dimension SA) . b (K x N,
 * leading dimension SB), fp32, from a tb_gemm_plan. The shape and the tile
 * are compile-time constants of the source, so each case's kernel is
 * specialised; every global access is guarded, so any M, N, K and leading
 * dimension work. Two generators: SIMT (this file) and tensor cores
 * (gemm_tensor.c). */
#include <stdio.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/gemm.h"

void tb_emit_gemm_constants(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                            const struct tb_case *c) {
  size_t sa = tb_view_for(c->view.kind, c->shape.k).row_stride;
  size_t sb = tb_view_for(c->view.kind, c->shape.n).row_stride;
  char what[200];
  snprintf(what, sizeof what,
           "gemm %zux%zux%zu (leading dimensions %zu, %zu), %s %ux%ux%u, %u-float loads",
           c->shape.m, c->shape.n, c->shape.k, sa, sb, tb_realization_name(plan->realization),
           plan->block_m, plan->block_n, plan->block_k, plan->vector_width);
  tb_emit_prelude(b, what, c->op->op);
  tb_strbuf_printf(b,
                   "#define M %zuLL\n#define N %zuLL\n#define K %zuLL\n#define SA %zuLL\n"
                   "#define SB %zuLL\n#define BM %u\n#define BN %u\n#define BK %u\n"
                   "#define THREADS %u\n#define VW %u\n",
                   c->shape.m, c->shape.n, c->shape.k, sa, sb, plan->block_m, plan->block_n,
                   plan->block_k, plan->threads, plan->vector_width);
}

/* Global -> registers (RA floats of A and RB of B per thread and step), then
 * registers -> shared, A transposed so each thread reads its rows as float4. */
static void emit_simt_tile_io(struct tb_strbuf *b) {
  tb_strbuf_printf(
      b,
      "#define RA (BM * BK / THREADS)\n#define RB (BK * BN / THREADS)\n"
      "static __device__ __forceinline__ void load_tiles(const float *__restrict__ x,\n"
      "    const float *__restrict__ y, long long bm, long long bn, long long k0, int tid,\n"
      "    float *ra, float *rb) {\n"
      "#if VW == 4\n"
      "  _Pragma(\"unroll\") for (int q = 0; q < RA / 4; ++q) {\n"
      "    const int l = tid + q * THREADS, r = l / (BK / 4), c = (l %% (BK / 4)) * 4;\n"
      "    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);\n"
      "    if (bm * BM + r < M && k0 + c < K)\n"
      "      v = *reinterpret_cast<const float4 *>(x + (bm * BM + r) * SA + k0 + c);\n"
      "    ra[4 * q] = v.x; ra[4 * q + 1] = v.y; ra[4 * q + 2] = v.z; ra[4 * q + 3] = v.w;\n"
      "  }\n"
      "  _Pragma(\"unroll\") for (int q = 0; q < RB / 4; ++q) {\n"
      "    const int l = tid + q * THREADS, r = l / (BN / 4), c = (l %% (BN / 4)) * 4;\n"
      "    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);\n"
      "    if (k0 + r < K && bn * BN + c < N)\n"
      "      v = *reinterpret_cast<const float4 *>(y + (k0 + r) * SB + bn * BN + c);\n"
      "    rb[4 * q] = v.x; rb[4 * q + 1] = v.y; rb[4 * q + 2] = v.z; rb[4 * q + 3] = v.w;\n"
      "  }\n"
      "#else\n"
      "  _Pragma(\"unroll\") for (int j = 0; j < RA; ++j) {\n"
      "    const int l = tid + j * THREADS;\n"
      "    const long long r = bm * BM + l / BK, c = k0 + l %% BK;\n"
      "    ra[j] = r < M && c < K ? x[r * SA + c] : 0.0f;\n"
      "  }\n"
      "  _Pragma(\"unroll\") for (int j = 0; j < RB; ++j) {\n"
      "    const int l = tid + j * THREADS;\n"
      "    const long long r = k0 + l / BN, c = bn * BN + l %% BN;\n"
      "    rb[j] = r < K && c < N ? y[r * SB + c] : 0.0f;\n"
      "  }\n"
      "#endif\n"
      "}\n"
      "static __device__ __forceinline__ void store_tiles(float (*as)[BM + 4], float (*bs)[BN],\n"
      "    int tid, const float *ra, const float *rb) {\n"
      "#if VW == 4\n"
      "  _Pragma(\"unroll\") for (int q = 0; q < RA / 4; ++q) {\n"
      "    const int l = tid + q * THREADS, r = l / (BK / 4), c = (l %% (BK / 4)) * 4;\n"
      "    _Pragma(\"unroll\") for (int j = 0; j < 4; ++j) as[c + j][r] = ra[4 * q + j];\n"
      "  }\n"
      "  _Pragma(\"unroll\") for (int q = 0; q < RB / 4; ++q) {\n"
      "    const int l = tid + q * THREADS, r = l / (BN / 4), c = (l %% (BN / 4)) * 4;\n"
      "    *reinterpret_cast<float4 *>(&bs[r][c]) =\n"
      "        make_float4(rb[4 * q], rb[4 * q + 1], rb[4 * q + 2], rb[4 * q + 3]);\n"
      "  }\n"
      "#else\n"
      "  _Pragma(\"unroll\") for (int j = 0; j < RA; ++j) {\n"
      "    const int l = tid + j * THREADS;\n"
      "    as[l %% BK][l / BK] = ra[j];\n"
      "  }\n"
      "  _Pragma(\"unroll\") for (int j = 0; j < RB; ++j) {\n"
      "    const int l = tid + j * THREADS;\n"
      "    bs[l / BN][l %% BN] = rb[j];\n"
      "  }\n"
      "#endif\n"
      "}\n");
}

/* Reads `count` values of one k row of a shared tile into registers: float4
 * groups when the thread owns groups of 4. */
static void emit_shared_reads(struct tb_strbuf *b, const char *reg, const char *tile,
                              const char *index, const char *count, unsigned n) {
  if (n >= 4) {
    tb_strbuf_printf(
        b,
        "      _Pragma(\"unroll\") for (int i = 0; i < %s; i += 4) {\n"
        "        const float4 v = *reinterpret_cast<const float4 *>(&%s[cur][kk][%s(i)]);\n"
        "        %s[i] = v.x; %s[i + 1] = v.y; %s[i + 2] = v.z; %s[i + 3] = v.w;\n"
        "      }\n",
        count, tile, index, reg, reg, reg, reg);
  } else {
    tb_strbuf_printf(
        b, "      _Pragma(\"unroll\") for (int i = 0; i < %s; ++i) %s[i] = %s[cur][kk][%s(i)];\n",
        count, reg, tile, index);
  }
}

/* Thread (tx, ty) of 16 x 16 owns rows ROW(i) and columns COL(j): groups of
 * 4 spaced 64 apart, so a warp's float4 reads from shared memory hit
 * distinct banks or broadcast. */
static void emit_simt_kernel(struct tb_strbuf *b, const struct tb_gemm_plan *plan) {
  tb_strbuf_printf(
      b,
      "#define TM %u\n#define TN %u\n"
      "#define ROW(i) (TM >= 4 ? ((i) / 4) * 64 + ty * 4 + (i) %% 4 : ty * TM + (i))\n"
      "#define COL(j) (TN >= 4 ? ((j) / 4) * 64 + tx * 4 + (j) %% 4 : tx * TN + (j))\n",
      plan->thread_m, plan->thread_n);
  emit_simt_tile_io(b);
  /* 64 accumulators, or 32 with the scalar loads' extra addresses, need more
   * than the 128 registers two blocks per SM leave (ptxas spills): then one
   * block per SM, else two */
  unsigned outputs = plan->thread_m * plan->thread_n;
  bool roomy = outputs >= 64 || (plan->vector_width == 1 && outputs >= 32);
  tb_emit_signature(b, "tb_main", plan->threads, roomy ? 1 : 2);
  tb_strbuf_printf(
      b, "  __shared__ __align__(16) float as[2][BK][BM + 4];\n"
         "  __shared__ __align__(16) float bs[2][BK][BN];\n"
         "  const long long grid_n = (N + BN - 1) / BN;\n"
         "  const long long bm = blockIdx.x / grid_n, bn = blockIdx.x %% grid_n;\n"
         "  const int tid = threadIdx.x, tx = tid %% 16, ty = tid / 16;\n"
         "  float acc[TM][TN], ra[RA], rb[RB];\n"
         "  _Pragma(\"unroll\") for (int i = 0; i < TM; ++i)\n"
         "    _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;\n"
         "  const int tiles = (int)((K + BK - 1) / BK);\n"
         "  load_tiles(x, y, bm, bn, 0, tid, ra, rb);\n"
         "  store_tiles(as[0], bs[0], tid, ra, rb);\n"
         "  __syncthreads();\n"
         "  for (int t = 0; t < tiles; ++t) {\n"
         "    const int cur = t & 1;\n"
         "    /* the next tile travels to registers while this one is multiplied */\n"
         "    if (t + 1 < tiles) load_tiles(x, y, bm, bn, (long long)(t + 1) * BK, tid, ra, rb);\n"
         "    _Pragma(\"unroll\") for (int kk = 0; kk < BK; ++kk) {\n"
         "      float av[TM], bv[TN];\n");
  emit_shared_reads(b, "av", "as", "ROW", "TM", plan->thread_m);
  emit_shared_reads(b, "bv", "bs", "COL", "TN", plan->thread_n);
  tb_strbuf_printf(
      b, "      _Pragma(\"unroll\") for (int i = 0; i < TM; ++i)\n"
         "        _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], "
         "acc[i][j]);\n"
         "    }\n"
         "    /* the other buffer: nobody reads it until after the barrier */\n"
         "    if (t + 1 < tiles) store_tiles(as[cur ^ 1], bs[cur ^ 1], tid, ra, rb);\n"
         "    __syncthreads();\n"
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
  if (plan->realization != TB_REALIZATION_SIMT) {
    return tb_codegen_gemm_tensor(plan, c, g, err);
  }
  struct tb_strbuf b = {0};
  tb_emit_gemm_constants(&b, plan, c);
  emit_simt_kernel(&b, plan);
  return tb_gemm_finish(&b, plan, false, g, err);
}

enum tb_status tb_gemm_finish(struct tb_strbuf *b, const struct tb_gemm_plan *plan,
                              bool dynamic_shared, struct tb_generated *g, struct tb_error *err) {
  g->kernel_count = 1;
  snprintf(g->kernels[0].name, sizeof g->kernels[0].name, "tb_main");
  g->kernels[0].threads_per_block = plan->threads;
  g->kernels[0].blocks = plan->blocks;
  if (dynamic_shared) {
    g->kernels[0].dynamic_shared_bytes = plan->shared_bytes;
  } else {
    g->kernels[0].static_shared_bytes = plan->shared_bytes;
  }
  return tb_emit_finish(b, g, err);
}
