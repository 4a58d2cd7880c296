/* The SIMT GEMM kernel: out (M x N) = a (M x K, leading dimension SA) .
 * b (K x N, leading dimension SB), fp32, from a tb_gemm_plan. Tiles of a and
 * b go through shared memory (one padding column against bank conflicts);
 * each thread keeps TM x TN outputs in registers; every global load is
 * guarded, so any M, N, K and leading dimension work. */
#include <stdio.h>
#include <string.h>

#include "codegen/emit.h"

enum tb_status tb_codegen_gemm(const struct tb_gemm_plan *plan, const struct tb_case *c,
                               struct tb_generated *g, struct tb_error *err) {
  memset(g, 0, sizeof *g);
  if (!c->op->is_matmul || plan->m != c->shape.m || plan->n != c->shape.n ||
      plan->k != c->shape.k) {
    return tb_fail(err, TB_ERR_RUN, "gemm plan does not belong to the case");
  }
  struct tb_strbuf b = {0};
  char what[160];
  size_t sa = tb_view_for(c->view.kind, c->shape.k).row_stride;
  size_t sb = tb_view_for(c->view.kind, c->shape.n).row_stride;
  snprintf(what, sizeof what, "gemm %zux%zux%zu (leading dimensions %zu, %zu), SIMT %ux%ux%u",
           c->shape.m, c->shape.n, c->shape.k, sa, sb, plan->block_m, plan->block_n, plan->block_k);
  tb_emit_prelude(&b, what, c->op->op);
  tb_strbuf_printf(&b,
                   "#define M %zuLL\n#define N %zuLL\n#define K %zuLL\n#define SA %zuLL\n"
                   "#define SB %zuLL\n#define BM %u\n#define BN %u\n#define BK %u\n#define TM %u\n"
                   "#define TN %u\n#define THREADS %u\n",
                   c->shape.m, c->shape.n, c->shape.k, sa, sb, plan->block_m, plan->block_n,
                   plan->block_k, plan->thread_m, plan->thread_n, plan->threads);
  /* two blocks per SM: room for the 4x4 accumulators and tile values */
  tb_emit_signature(&b, "tb_main", plan->threads, 2);
  tb_strbuf_printf(
      &b, "  __shared__ float as[BK][BM + 1];\n"
          "  __shared__ float bs[BK][BN + 1];\n"
          "  const long long grid_n = (N + BN - 1) / BN;\n"
          "  const long long bm = blockIdx.x / grid_n, bn = blockIdx.x %% grid_n;\n"
          "  const int tx = threadIdx.x %% (BN / TN), ty = threadIdx.x / (BN / TN);\n"
          "  float acc[TM][TN];\n"
          "  _Pragma(\"unroll\") for (int i = 0; i < TM; ++i)\n"
          "    _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;\n"
          "  for (long long k0 = 0; k0 < K; k0 += BK) {\n"
          "    for (int l = threadIdx.x; l < BM * BK; l += THREADS) {\n"
          "      const int r = l / BK, c = l %% BK;\n"
          "      const long long gr = bm * BM + r, gc = k0 + c;\n"
          "      as[c][r] = gr < M && gc < K ? x[gr * SA + gc] : 0.0f;\n"
          "    }\n"
          "    for (int l = threadIdx.x; l < BK * BN; l += THREADS) {\n"
          "      const int r = l / BN, c = l %% BN;\n"
          "      const long long gr = k0 + r, gc = bn * BN + c;\n"
          "      bs[r][c] = gr < K && gc < N ? y[gr * SB + gc] : 0.0f;\n"
          "    }\n"
          "    __syncthreads();\n"
          "    _Pragma(\"unroll\") for (int kk = 0; kk < BK; ++kk) {\n"
          "      float av[TM], bv[TN];\n"
          "      _Pragma(\"unroll\") for (int i = 0; i < TM; ++i) av[i] = as[kk][ty * TM + i];\n"
          "      _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) bv[j] = bs[kk][tx * TN + j];\n"
          "      _Pragma(\"unroll\") for (int i = 0; i < TM; ++i)\n"
          "        _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];\n"
          "    }\n"
          "    __syncthreads(); /* the tiles are reloaded next step */\n"
          "  }\n"
          "  _Pragma(\"unroll\") for (int i = 0; i < TM; ++i) {\n"
          "    const long long row = bm * BM + ty * TM + i;\n"
          "    _Pragma(\"unroll\") for (int j = 0; j < TN; ++j) {\n"
          "      const long long col = bn * BN + tx * TN + j;\n"
          "      if (row < M && col < N) out[row * N + col] = acc[i][j];\n"
          "    }\n"
          "  }\n}\n");
  g->kernel_count = 1;
  snprintf(g->kernels[0].name, sizeof g->kernels[0].name, "tb_main");
  g->kernels[0].threads_per_block = plan->threads;
  g->kernels[0].blocks = plan->blocks;
  g->kernels[0].static_shared_bytes = plan->shared_bytes;
  return tb_emit_finish(&b, g, err);
}
