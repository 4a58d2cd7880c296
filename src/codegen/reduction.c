/* Row-reduction kernels from plans (docs/method.md §7 mappings). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emit.h"

/* ---- per-operation pieces ---------------------------------------------- */

static int has_row_output(enum tb_op op) {
  return op != TB_OP_SUM;
}

/* Expression of the output element from the cached value `v` and index `j`
 * (weight wv[i], bias bv[i] loaded per group); stats named as below. */
static const char *output_expr(enum tb_op op) {
  switch (op) {
  case TB_OP_SOFTMAX: return "__expf(v - mx) * inv";
  case TB_OP_RMSNORM: return "v * inv * wv[i]";
  case TB_OP_LAYERNORM: return "(v - mean) * inv * wv[i] + bv[i]";
  default: return "v";
  }
}

static void emit_constants(struct tb_strbuf *b, const struct tb_case *c) {
  /* N unsuffixed: an int wherever it fits, so the per-element masks
   * `e + i < N` compare 32-bit indices (a 64-bit compare is two ALU
   * instructions, and the short-row softmax is instruction-bound). */
  tb_strbuf_printf(b, "#define M %zuLL\n#define N %zu\n#define SX %zuLL\n", c->shape.m, c->shape.n,
                   c->view.row_stride);
  if (c->op->op == TB_OP_RMSNORM) {
    tb_strbuf_printf(b, "#define EPS 1e-6f\n");
  } else if (c->op->op == TB_OP_LAYERNORM) {
    tb_strbuf_printf(b, "#define EPS 1e-5f\n");
  }
}

/* Loads weight/bias of the group starting at e into wv/bv (16-byte loads:
 * the vectors are packed and e is a multiple of 4). */
static void emit_load_params(struct tb_strbuf *b, enum tb_op op, const char *indent) {
  if (op != TB_OP_RMSNORM && op != TB_OP_LAYERNORM) {
    return;
  }
  tb_strbuf_printf(b, op == TB_OP_LAYERNORM ? "%sfloat wv[4], bv[4];\n" : "%sfloat wv[4];\n",
                   indent);
  tb_strbuf_printf(b,
                   "%sif (e + 3 < N) {\n"
                   "%s  const float4 t = *reinterpret_cast<const float4 *>(weight + e);\n"
                   "%s  wv[0] = t.x; wv[1] = t.y; wv[2] = t.z; wv[3] = t.w;\n",
                   indent, indent, indent);
  if (op == TB_OP_LAYERNORM) {
    tb_strbuf_printf(b,
                     "%s  const float4 u = *reinterpret_cast<const float4 *>(bias + e);\n"
                     "%s  bv[0] = u.x; bv[1] = u.y; bv[2] = u.z; bv[3] = u.w;\n",
                     indent, indent);
  }
  tb_strbuf_printf(b, "%s} else {\n%s  _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) {\n", indent,
                   indent);
  tb_strbuf_printf(b, "%s    wv[i] = e + i < N ? weight[e + i] : 0.0f;\n", indent);
  if (op == TB_OP_LAYERNORM) {
    tb_strbuf_printf(b, "%s    bv[i] = e + i < N ? bias[e + i] : 0.0f;\n", indent);
  }
  tb_strbuf_printf(b, "%s  }\n%s}\n", indent, indent);
}

/* Loads 4 consecutive elements at e of row pointer `src` into t[4], zero
 * past the row end and where `guard` (a condition and "&& ", or "") fails;
 * 16-byte load when the row is aligned. */
static void emit_guarded_load4(struct tb_strbuf *b, const char *src, const char *guard,
                               const char *indent) {
  tb_strbuf_printf(b,
                   "%sfloat t[4];\n"
                   "%sif (vec && %se + 3 < N) {\n"
                   "%s  const float4 q4 = *reinterpret_cast<const float4 *>(%s + e);\n"
                   "%s  t[0] = q4.x; t[1] = q4.y; t[2] = q4.z; t[3] = q4.w;\n"
                   "%s} else {\n"
                   "%s  _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) t[i] = %se + i < N ? "
                   "%s[e + i] : 0.0f;\n"
                   "%s}\n",
                   indent, indent, guard, indent, src, indent, indent, indent, guard, src, indent);
}

static void emit_load4(struct tb_strbuf *b, const char *src, const char *indent) {
  emit_guarded_load4(b, src, "", indent);
}

/* Stores r[4] at e of `dst`, 16-byte when aligned, masked at the row end. */
static void emit_store4(struct tb_strbuf *b, const char *dst, const char *indent) {
  tb_strbuf_printf(
      b,
      "%sif (ovec && e + 3 < N) {\n"
      "%s  *reinterpret_cast<float4 *>(%s + e) = make_float4(r[0], r[1], r[2], r[3]);\n"
      "%s} else {\n"
      "%s  _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) if (e + i < N) %s[e + i] = r[i];\n"
      "%s}\n",
      indent, indent, dst, indent, indent, dst, indent);
}

/* r[i] = expr for the group's 4 values, stored. */
static void emit_group_result(struct tb_strbuf *b, const char *value, const char *expr) {
  tb_strbuf_printf(b,
                   "    float r[4];\n    _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) {\n"
                   "      const float v = %s;\n      r[i] = %s;\n    }\n",
                   value, expr);
  emit_store4(b, "orow", "    ");
}

/* The output of one group of 4 at e: weights/bias as the op needs, r[i] =
 * `expr` of the element value v = `value` (an expression in i), stored 16
 * bytes wide when aligned. */
static void emit_output_group(struct tb_strbuf *b, enum tb_op op, const char *value,
                              const char *expr) {
  emit_load_params(b, op, "    ");
  emit_group_result(b, value, expr);
}

/* The plan's one kernel, tb_main: its launch facts. */
static void one_kernel(struct tb_generated *g, unsigned threads, unsigned long long blocks,
                       unsigned shared_bytes) {
  g->kernel_count = 1;
  snprintf(g->kernels[0].name, sizeof g->kernels[0].name, "tb_main");
  g->kernels[0].threads_per_block = threads;
  g->kernels[0].blocks = blocks;
  g->kernels[0].static_shared_bytes = shared_bytes;
}

/* ---- register rows ----------------------------------------------------- */

/* One reduction site across the s warps of a row: warp shuffle, then (s > 1)
 * a shared array and one barrier, after which every warp of the row combines
 * the s partials the same way (identical results, no second barrier).
 * Up to 16 warps a serial loop combines them; beyond, a second warp shuffle
 * does, because ptxas keeps the unrolled loop's loads live: the 1024-thread
 * layernorm row spilled at 64 registers with the loop and needs 62 without.
 * (With the shuffle at 512 threads, ptxas aimed at 40 registers and spilled.)
 * Emitted inline so the source holds exactly one __syncthreads() per barrier
 * site of the plan. */
static void emit_row_reduce(struct tb_strbuf *b, const struct tb_candidate *cand, const char *var,
                            int site, int is_max) {
  const char *kind = is_max ? "max" : "sum";
  tb_strbuf_printf(b, "  %s = tb_warp_%s(%s);\n", var, kind, var);
  if (cand->subgroups == 1) {
    return;
  }
  tb_strbuf_printf(b,
                   "  {\n"
                   "    __shared__ float tb_red%d[P * S];\n"
                   "    if ((lane & 31) == 0) tb_red%d[slot * S + lane / 32] = %s;\n"
                   "    __syncthreads();\n",
                   site, site, var);
  if (cand->subgroups > 16) {
    tb_strbuf_printf(
        b, "    %s = tb_warp_%s((lane & 31) < S ? tb_red%d[slot * S + (lane & 31)] : %s);\n", var,
        kind, site, is_max ? "-TB_INF" : "0.0f");
  } else {
    char combine[96];
    if (is_max) {
      snprintf(combine, sizeof combine, "%s = fmaxf(%s, tb_red%d[slot * S + i])", var, var, site);
    } else {
      snprintf(combine, sizeof combine, "%s += tb_red%d[slot * S + i]", var, site);
    }
    tb_strbuf_printf(b, "    %s = tb_red%d[slot * S];\n    for (int i = 1; i < S; ++i) %s;\n", var,
                     site, combine);
  }
  tb_strbuf_printf(b, "  }\n");
}

static void emit_row_reduce_sum(struct tb_strbuf *b, const struct tb_candidate *cand,
                                const char *var, int site) {
  emit_row_reduce(b, cand, var, site, 0);
}

static void emit_row_reduce_max(struct tb_strbuf *b, const struct tb_candidate *cand,
                                const char *var, int site) {
  emit_row_reduce(b, cand, var, site, 1);
}

/* A loop over the cached groups and their 4 elements, with e and j = e + i. */
#define FOR_CACHED                                                                                 \
  "  _Pragma(\"unroll\") for (int k = 0; k < G; ++k) {\n"                                          \
  "    const int e = 4 * (lane + k * WIDTH);\n"                                                    \
  "    (void)e;\n"                                                                                 \
  "    _Pragma(\"unroll\") _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) {\n"
#define END_CACHED "    }\n  }\n"

static void emit_register_statistics(struct tb_strbuf *b, enum tb_op op,
                                     const struct tb_candidate *cand) {
  switch (op) {
  case TB_OP_SUM:
    tb_strbuf_printf(b,
                     "  float acc = 0.0f;\n" FOR_CACHED "      acc += cache[k][i];\n" END_CACHED);
    emit_row_reduce_sum(b, cand, "acc", 0);
    break;
  case TB_OP_RMSNORM:
    tb_strbuf_printf(b, "  float sq = 0.0f;\n" FOR_CACHED
                        "      sq += cache[k][i] * cache[k][i];\n" END_CACHED);
    emit_row_reduce_sum(b, cand, "sq", 0);
    tb_strbuf_printf(b, "  const float inv = rsqrtf(sq / (float)N + EPS);\n");
    break;
  case TB_OP_SOFTMAX:
    tb_strbuf_printf(b, "  float mx = -TB_INF;\n" FOR_CACHED
                        "      if (e + i < N) mx = fmaxf(mx, cache[k][i]);\n" END_CACHED);
    emit_row_reduce_max(b, cand, "mx", 0);
    /* The cache keeps exp(x - max) (zero past the row end): one exponential
     * per element, as the payload model's private writes count. */
    tb_strbuf_printf(b, "  float sum = 0.0f;\n" FOR_CACHED
                        "      cache[k][i] = e + i < N ? __expf(cache[k][i] - mx) : 0.0f;\n"
                        "      sum += cache[k][i];\n" END_CACHED);
    emit_row_reduce_sum(b, cand, "sum", 1);
    tb_strbuf_printf(b, "  const float inv = 1.0f / sum;\n");
    break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(b, "  float s1 = 0.0f;\n" FOR_CACHED "      s1 += cache[k][i];\n" END_CACHED);
    emit_row_reduce_sum(b, cand, "s1", 0);
    tb_strbuf_printf(b, "  const float mean = s1 / (float)N;\n  float s2 = 0.0f;\n" FOR_CACHED
                        "      const float d = e + i < N ? cache[k][i] - mean : 0.0f;\n"
                        "      s2 += d * d;\n" END_CACHED);
    emit_row_reduce_sum(b, cand, "s2", 1);
    tb_strbuf_printf(b, "  const float inv = rsqrtf(s2 / (float)N + EPS);\n");
    break;
  default: break;
  }
}

/* Rows of at most this many groups a lane, in blocks of at most 256 threads
 * (255 registers a thread to spare), load their weight and bias with the row,
 * so the output does not wait for them after the reductions. */
#define PREFETCH_GROUPS 4
#define PREFETCH_THREADS 256

static bool prefetches_params(enum tb_op op, const struct tb_candidate *cand, unsigned groups) {
  return (op == TB_OP_RMSNORM || op == TB_OP_LAYERNORM) && groups <= PREFETCH_GROUPS &&
         cand->threads <= PREFETCH_THREADS;
}

static void emit_register_rows(struct tb_strbuf *b, const struct tb_plan *plan,
                               const struct tb_case *c, struct tb_generated *g) {
  const struct tb_candidate *cand = &plan->selected;
  enum tb_op op = c->op->op;
  unsigned groups = (cand->slots + 3) / 4;
  bool prefetch = prefetches_params(op, cand, groups);
  tb_strbuf_printf(b, "#define S %u\n#define P %u\n#define WIDTH %u\n#define G %u\n",
                   cand->subgroups, cand->packing, cand->width, groups);
  tb_emit_signature(b, "tb_main", cand->threads, 0);
  tb_strbuf_printf(b, "  const int lane = threadIdx.x %% WIDTH;\n"
                      "  const int slot = threadIdx.x / WIDTH;\n"
                      "  const long long row = (long long)blockIdx.x * P + slot;\n"
                      "  // Rows past M still take part in the barriers; they never store.\n"
                      "  const bool active = row < M;\n"
                      "  const float *xr = x + (active ? row : 0LL) * SX;\n"
                      "  const bool vec = tb_aligned16(xr);\n"
                      "  float cache[G][4];\n");
  if (prefetch) {
    tb_strbuf_printf(b, op == TB_OP_LAYERNORM ? "  float wpre[G][4], bpre[G][4];\n"
                                              : "  float wpre[G][4];\n");
  }
  tb_strbuf_printf(b, "  _Pragma(\"unroll\") for (int k = 0; k < G; ++k) {\n"
                      "    const int e = 4 * (lane + k * WIDTH);\n");
  emit_load4(b, "xr", "    ");
  tb_strbuf_printf(b, "    _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) cache[k][i] = active ? "
                      "t[i] : 0.0f;\n");
  if (prefetch) {
    emit_load_params(b, op, "    ");
    tb_strbuf_printf(b, op == TB_OP_LAYERNORM ? "    _Pragma(\"unroll\") for (int i = 0; i < 4; "
                                                "++i) { wpre[k][i] = wv[i]; bpre[k][i] = bv[i]; }\n"
                                              : "    _Pragma(\"unroll\") for (int i = 0; i < 4; "
                                                "++i) wpre[k][i] = wv[i];\n");
  }
  tb_strbuf_printf(b, "  }\n");
  emit_register_statistics(b, op, cand);
  if (!has_row_output(op)) {
    tb_strbuf_printf(b, "  if (active && lane == 0) out[row] = acc;\n}\n");
  } else {
    tb_strbuf_printf(b, "  if (!active) return;\n"
                        "  float *orow = out + row * N;\n"
                        "  const bool ovec = tb_aligned16(orow);\n"
                        "  _Pragma(\"unroll\") for (int k = 0; k < G; ++k) {\n"
                        "    const int e = 4 * (lane + k * WIDTH);\n");
    if (prefetch) {
      tb_strbuf_printf(b, op == TB_OP_LAYERNORM
                              ? "    const float *const wv = wpre[k], *const bv = bpre[k];\n"
                              : "    const float *const wv = wpre[k];\n");
      emit_group_result(b, "cache[k][i]", output_expr(op));
    } else {
      /* softmax's cache already holds exp(x - max) */
      emit_output_group(b, op, "cache[k][i]", op == TB_OP_SOFTMAX ? "v * inv" : output_expr(op));
    }
    tb_strbuf_printf(b, "  }\n}\n");
  }
  one_kernel(g, cand->threads, cand->thread_blocks, cand->shared_bytes);
}

/* ---- streaming statistics (block streaming and split row) --------------- */

/* Declares the per-thread statistics and accumulates element `val`. */
static void emit_stat_decl(struct tb_strbuf *b, enum tb_op op) {
  switch (op) {
  case TB_OP_SOFTMAX: tb_strbuf_printf(b, "  float m0 = -TB_INF, s0 = 0.0f;\n"); break;
  case TB_OP_LAYERNORM: tb_strbuf_printf(b, "  float c0 = 0.0f, mu0 = 0.0f, q0 = 0.0f;\n"); break;
  default: tb_strbuf_printf(b, "  float a0 = 0.0f;\n"); break;
  }
}

static void emit_stat_accumulate(struct tb_strbuf *b, enum tb_op op, const char *indent) {
  switch (op) {
  case TB_OP_SUM: tb_strbuf_printf(b, "%sa0 += val;\n", indent); break;
  case TB_OP_RMSNORM: tb_strbuf_printf(b, "%sa0 += val * val;\n", indent); break;
  case TB_OP_SOFTMAX:
    tb_strbuf_printf(b,
                     "%sif (val > m0) { s0 = s0 * __expf(m0 - val) + 1.0f; m0 = val; }\n"
                     "%selse s0 += __expf(val - m0);\n",
                     indent, indent);
    break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(
        b, "%s{ c0 += 1.0f; const float d = val - mu0; mu0 += d / c0; q0 += d * (val - mu0); }\n",
        indent);
    break;
  default: break;
  }
}

/* Merges the statistics of thread lanes, then of warps through shared
 * memory (one barrier); every thread ends with the block's statistics. */
static void emit_block_combine(struct tb_strbuf *b, enum tb_op op, unsigned threads) {
  unsigned warps = threads / 32, words = tb_stat_words(op);
  switch (op) {
  case TB_OP_SOFTMAX:
    tb_strbuf_printf(b, "  for (int o = 16; o > 0; o >>= 1) {\n"
                        "    const float m2 = __shfl_xor_sync(0xffffffffu, m0, o);\n"
                        "    const float s2 = __shfl_xor_sync(0xffffffffu, s0, o);\n"
                        "    tb_softmax_merge(m0, s0, m2, s2);\n  }\n");
    break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(b, "  for (int o = 16; o > 0; o >>= 1) {\n"
                        "    const float c2 = __shfl_xor_sync(0xffffffffu, c0, o);\n"
                        "    const float mu2 = __shfl_xor_sync(0xffffffffu, mu0, o);\n"
                        "    const float q2 = __shfl_xor_sync(0xffffffffu, q0, o);\n"
                        "    tb_welford_merge(c0, mu0, q0, c2, mu2, q2);\n  }\n");
    break;
  default: tb_strbuf_printf(b, "  a0 = tb_warp_sum(a0);\n"); break;
  }
  tb_strbuf_printf(b, "  __shared__ float tb_stats[%u * %u];\n", words, warps);
  tb_strbuf_printf(b, "  if ((threadIdx.x & 31) == 0) {\n");
  switch (op) {
  case TB_OP_SOFTMAX:
    tb_strbuf_printf(
        b,
        "    tb_stats[2 * (threadIdx.x / 32)] = m0; tb_stats[2 * (threadIdx.x / 32) + 1] = s0;\n");
    break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(
        b,
        "    tb_stats[3 * (threadIdx.x / 32)] = c0; tb_stats[3 * (threadIdx.x / 32) + 1] = mu0;\n"
        "    tb_stats[3 * (threadIdx.x / 32) + 2] = q0;\n");
    break;
  default: tb_strbuf_printf(b, "    tb_stats[threadIdx.x / 32] = a0;\n"); break;
  }
  tb_strbuf_printf(b, "  }\n  __syncthreads();\n");
  /* Every thread merges the warps in the same order: identical results. */
  switch (op) {
  case TB_OP_SOFTMAX:
    tb_strbuf_printf(b,
                     "  m0 = tb_stats[0]; s0 = tb_stats[1];\n"
                     "  for (int w = 1; w < %u; ++w) tb_softmax_merge(m0, s0, tb_stats[2 * w], "
                     "tb_stats[2 * w + 1]);\n",
                     warps);
    break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(b,
                     "  c0 = tb_stats[0]; mu0 = tb_stats[1]; q0 = tb_stats[2];\n"
                     "  for (int w = 1; w < %u; ++w) tb_welford_merge(c0, mu0, q0, tb_stats[3 * "
                     "w], tb_stats[3 * w + 1], tb_stats[3 * w + 2]);\n",
                     warps);
    break;
  default:
    tb_strbuf_printf(b, "  a0 = tb_stats[0];\n  for (int w = 1; w < %u; ++w) a0 += tb_stats[w];\n",
                     warps);
    break;
  }
}

/* Turns the row's statistics into the names the output expression uses. */
static void emit_finish_statistics(struct tb_strbuf *b, enum tb_op op) {
  switch (op) {
  case TB_OP_SOFTMAX: tb_strbuf_printf(b, "  const float mx = m0, inv = 1.0f / s0;\n"); break;
  case TB_OP_RMSNORM:
    tb_strbuf_printf(b, "  const float inv = rsqrtf(a0 / (float)N + EPS);\n");
    break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(b, "  const float mean = mu0, inv = rsqrtf(q0 / (float)N + EPS);\n");
    break;
  default: break;
  }
}

/* A strided pass over elements [LO, HI) of row `xr` by THREADS threads, in
 * groups of 4; body sees e and t[4]. */
static void emit_pass_open(struct tb_strbuf *b, const char *lo, const char *hi, unsigned threads) {
  /* Unrolled so several 16-byte loads are in flight before the first use;
   * less at 1024 threads, where a thread has only 64 registers. */
  tb_strbuf_printf(b,
                   "  _Pragma(\"unroll %u\") for (long long e = %s + 4LL * threadIdx.x; e < %s; e "
                   "+= 4LL * %u) {\n",
                   threads >= 1024 ? 4u : 8u, lo, hi, threads);
}

static void emit_output_pass(struct tb_strbuf *b, enum tb_op op, const char *lo, const char *hi,
                             unsigned threads) {
  tb_strbuf_printf(b, "  float *orow = out + row * N;\n  const bool ovec = tb_aligned16(orow);\n");
  emit_pass_open(b, lo, hi, threads);
  emit_load4(b, "xr", "    ");
  emit_output_group(b, op, "t[i]", output_expr(op));
  tb_strbuf_printf(b, "  }\n");
}

/* With the row's statistics in every thread: the output of [lo, hi),
 * streamed again, or (sum) the row's value, stored by the thread `writer`. */
static void emit_row_result(struct tb_strbuf *b, enum tb_op op, const char *lo, const char *hi,
                            unsigned threads, const char *writer) {
  if (has_row_output(op)) {
    emit_finish_statistics(b, op);
    emit_output_pass(b, op, lo, hi, threads);
  } else {
    tb_strbuf_printf(b, "  if (%s) out[row] = a0;\n", writer);
  }
}

static void emit_stat_pass(struct tb_strbuf *b, enum tb_op op, const char *lo, const char *hi,
                           unsigned threads) {
  emit_stat_decl(b, op);
  emit_pass_open(b, lo, hi, threads);
  emit_load4(b, "xr", "    ");
  tb_strbuf_printf(
      b,
      "    _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) {\n      if (e + i >= %s) break;\n"
      "      const float val = t[i];\n",
      hi);
  emit_stat_accumulate(b, op, "      ");
  tb_strbuf_printf(b, "    }\n  }\n");
}

static void emit_block_streaming(struct tb_strbuf *b, const struct tb_plan *plan,
                                 const struct tb_case *c, struct tb_generated *g) {
  enum tb_op op = c->op->op;
  unsigned threads = plan->stream.threads_per_block;
  tb_emit_signature(b, "tb_main", threads, 0);
  tb_strbuf_printf(b, "  const long long row = blockIdx.x;\n  const float *xr = x + row * SX;\n"
                      "  const bool vec = tb_aligned16(xr);\n");
  emit_stat_pass(b, op, "0LL", "N", threads);
  emit_block_combine(b, op, threads);
  emit_row_result(b, op, "0LL", "N", threads, "threadIdx.x == 0");
  tb_strbuf_printf(b, "}\n");
  one_kernel(g, threads, plan->stream.thread_blocks, plan->stream.shared_bytes);
}

/* Merges the K partial statistics p[0..K*W) of a row in chunk order, so every
 * thread that merges them gets the same bits. */
static void emit_merge_partials(struct tb_strbuf *b, enum tb_op op) {
  switch (op) {
  case TB_OP_SOFTMAX:
    tb_strbuf_printf(b, "  float m0 = p[0], s0 = p[1];\n"
                        "  for (long long k = 1; k < K; ++k) tb_softmax_merge(m0, s0, p[2 * k], "
                        "p[2 * k + 1]);\n");
    break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(b, "  float c0 = p[0], mu0 = p[1], q0 = p[2];\n"
                        "  for (long long k = 1; k < K; ++k) tb_welford_merge(c0, mu0, q0, p[3 * "
                        "k], p[3 * k + 1], p[3 * k + 2]);\n");
    break;
  default:
    tb_strbuf_printf(b, "  float a0 = p[0];\n  for (long long k = 1; k < K; ++k) a0 += p[k];\n");
    break;
  }
}

/* Stores the block's statistics (after emit_block_combine) at `dst` (W floats). */
static void emit_store_statistics(struct tb_strbuf *b, enum tb_op op, const char *dst) {
  switch (op) {
  case TB_OP_SOFTMAX: tb_strbuf_printf(b, "    %s[0] = m0; %s[1] = s0;\n", dst, dst); break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(b, "    %s[0] = c0; %s[1] = mu0; %s[2] = q0;\n", dst, dst, dst);
    break;
  default: tb_strbuf_printf(b, "    %s[0] = a0;\n", dst); break;
  }
}

/* Row `row`'s chunk [lo, hi) for blocks_per_row blocks: K and CHUNK defined. */
#define CHUNK_BOUNDS                                                                               \
  "  const long long row = blockIdx.x / K, chunk = blockIdx.x % K;\n"                              \
  "  const long long lo = chunk * CHUNK, hi = lo + CHUNK < N ? lo + CHUNK : N;\n"                  \
  "  const float *xr = x + row * SX;\n  const bool vec = tb_aligned16(xr);\n"

/* Launch 1 writes each chunk's statistics to workspace[(row*K + chunk)*W];
 * launch 2 merges a row's K partials and writes its chunk (or the row sum). */
static void emit_split_row(struct tb_strbuf *b, const struct tb_plan *plan, const struct tb_case *c,
                           struct tb_generated *g) {
  enum tb_op op = c->op->op;
  const struct tb_stream_facts *f = &plan->stream;
  unsigned threads = f->threads_per_block, words = tb_stat_words(op);
  tb_strbuf_printf(b, "#define K %uLL\n#define CHUNK %lluLL\n#define W %u\n", f->blocks_per_row,
                   f->chunk_elements, words);
  tb_emit_signature(b, "tb_partials", threads, 0);
  tb_strbuf_printf(b, "%s", CHUNK_BOUNDS);
  emit_stat_pass(b, op, "lo", "hi", threads);
  emit_block_combine(b, op, threads);
  tb_strbuf_printf(
      b, "  if (threadIdx.x == 0) {\n    float *p = workspace + (row * K + chunk) * W;\n");
  emit_store_statistics(b, op, "p");
  tb_strbuf_printf(b, "  }\n}\n\n");

  unsigned finish_threads = 256;
  tb_emit_signature(b, "tb_finish", finish_threads, 0);
  if (!has_row_output(op)) {
    tb_strbuf_printf(b,
                     "  const long long row = (long long)blockIdx.x * %u + threadIdx.x;\n"
                     "  if (row >= M) return;\n"
                     "  float a0 = 0.0f;\n"
                     "  for (long long k = 0; k < K; ++k) a0 += workspace[row * K + k];\n"
                     "  out[row] = a0;\n}\n",
                     finish_threads);
  } else {
    tb_strbuf_printf(b, "%s  const float *p = workspace + row * K * W;\n", CHUNK_BOUNDS);
    emit_merge_partials(b, op);
    emit_finish_statistics(b, op);
    emit_output_pass(b, op, "lo", "hi", finish_threads);
    tb_strbuf_printf(b, "}\n");
  }
  g->kernel_count = 2;
  snprintf(g->kernels[0].name, sizeof g->kernels[0].name, "tb_partials");
  g->kernels[0].threads_per_block = threads;
  g->kernels[0].blocks = f->thread_blocks;
  g->kernels[0].static_shared_bytes = f->shared_bytes;
  snprintf(g->kernels[1].name, sizeof g->kernels[1].name, "tb_finish");
  g->kernels[1].threads_per_block = finish_threads;
  g->kernels[1].blocks =
      has_row_output(op) ? f->thread_blocks : (c->shape.m + finish_threads - 1) / finish_threads;
  g->kernels[1].static_shared_bytes = 0;
  g->workspace_floats = (size_t)c->shape.m * f->blocks_per_row * words;
}

/* The two halves of a cluster barrier (arrive releases this block's shared
 * writes, wait acquires every block's), and the address of a shared variable's
 * counterpart in cluster block `rank` (distributed shared memory, read with
 * ordinary loads, which the compiler may overlap). */
static void emit_cluster_helpers(struct tb_strbuf *b) {
  tb_strbuf_printf(
      b, "static __device__ __forceinline__ void tb_cluster_arrive() {\n"
         "  asm volatile(\"barrier.cluster.arrive.release.aligned;\" ::: \"memory\");\n"
         "}\n"
         "static __device__ __forceinline__ void tb_cluster_wait() {\n"
         "  asm volatile(\"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
         "}\n"
         "static __device__ __forceinline__ const float *tb_cluster_map(const float *local, "
         "unsigned rank) {\n"
         "  unsigned long long remote;\n"
         "  asm(\"mapa.u64 %%0, %%1, %%2;\" : \"=l\"(remote) : \"l\"(local), \"r\"(rank));\n"
         "  return reinterpret_cast<const float *>(remote);\n}\n\n");
}

/* ---- a chunk cached in registers (cluster rows of short chunks) -------- */

/* Loops over the thread's ITERS groups of 4 of [lo, hi): e and `in` (the group
 * lies wholly inside the chunk: lo and CHUNK are multiples of 4). */
#define FOR_CHUNK_GROUPS                                                                           \
  "  _Pragma(\"unroll\") for (int k = 0; k < ITERS; ++k) {\n"                                      \
  "    const long long e = lo + 4LL * (threadIdx.x + k * THREADS);\n"                              \
  "    const bool in = e < hi;\n"
/* ... and its elements: `ok` = inside the chunk and the row */
#define FOR_CHUNK_ELEMENTS                                                                         \
  FOR_CHUNK_GROUPS "    _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) {\n"                       \
                   "      const bool ok = in && e + i < N;\n"
#define END_CHUNK_ELEMENTS "    }\n  }\n"

/* Every load of the chunk issued before any use (a loop bounded at run
 * time would wait out one memory latency per trip). */
static void emit_chunk_load(struct tb_strbuf *b) {
  tb_strbuf_printf(b, "  float cache[ITERS][4];\n" FOR_CHUNK_GROUPS);
  emit_guarded_load4(b, "xr", "in && ", "    "); /* not a byte of the next chunk */
  tb_strbuf_printf(
      b, "    _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) cache[k][i] = t[i];\n  }\n");
}

/* The thread's statistics of its cached elements, in the names the block
 * combine merges: independent operations (a max, then exponentials; a
 * count and mean, then squares) instead of the streaming updates' chain. */
static void emit_chunk_statistics(struct tb_strbuf *b, enum tb_op op) {
  switch (op) {
  case TB_OP_SUM:
    tb_strbuf_printf(b, "  float a0 = 0.0f;\n" FOR_CHUNK_ELEMENTS
                        "      a0 += cache[k][i];\n" END_CHUNK_ELEMENTS);
    break;
  case TB_OP_RMSNORM:
    tb_strbuf_printf(b, "  float a0 = 0.0f;\n" FOR_CHUNK_ELEMENTS
                        "      a0 += cache[k][i] * cache[k][i];\n" END_CHUNK_ELEMENTS);
    break;
  case TB_OP_SOFTMAX:
    tb_strbuf_printf(
        b, "  float m0 = -TB_INF, s0 = 0.0f;\n" FOR_CHUNK_ELEMENTS
           "      if (ok) m0 = fmaxf(m0, cache[k][i]);\n" END_CHUNK_ELEMENTS FOR_CHUNK_ELEMENTS
           "      if (ok) s0 += __expf(cache[k][i] - m0);\n" END_CHUNK_ELEMENTS);
    break;
  case TB_OP_LAYERNORM:
    tb_strbuf_printf(b,
                     "  float c0 = 0.0f, mu0 = 0.0f, q0 = 0.0f;\n" FOR_CHUNK_ELEMENTS
                     "      c0 += ok ? 1.0f : 0.0f;\n      mu0 += cache[k][i];\n" END_CHUNK_ELEMENTS
                     "  mu0 = c0 > 0.0f ? mu0 / c0 : 0.0f;\n" FOR_CHUNK_ELEMENTS
                     "      const float d = ok ? cache[k][i] - mu0 : 0.0f;\n"
                     "      q0 += d * d;\n" END_CHUNK_ELEMENTS);
    break;
  default: break;
  }
}

/* The chunk's output from the cache, group by group. */
static void emit_chunk_output(struct tb_strbuf *b, enum tb_op op) {
  tb_strbuf_printf(
      b,
      "  float *orow = out + row * N;\n  const bool ovec = tb_aligned16(orow);\n" FOR_CHUNK_GROUPS
      "    if (!in) continue;\n");
  emit_output_group(b, op, "cache[k][i]", output_expr(op));
  tb_strbuf_printf(b, "  }\n");
}

/* One launch: row `row` is cluster `row` (its K blocks, chunk = rank). Each
 * block reduces its chunk and publishes its statistics in shared memory;
 * after a cluster barrier K*W threads fetch the row's K*W words at once into
 * this block's shared memory, and every thread merges them in rank order. The
 * barrier's second half waits at the very end: a block leaves only when the
 * whole cluster has read its statistics, and writes its chunk meanwhile. */
static void emit_cluster_row(struct tb_strbuf *b, const struct tb_plan *plan,
                             const struct tb_case *c, struct tb_generated *g) {
  enum tb_op op = c->op->op;
  const struct tb_stream_facts *f = &plan->stream;
  unsigned threads = f->threads_per_block;
  bool cached = tb_cluster_chunk_cached(f);
  tb_strbuf_printf(b, "#define K %uLL\n#define CHUNK %lluLL\n#define W %u\n", f->blocks_per_row,
                   f->chunk_elements, tb_stat_words(op));
  if (cached) {
    tb_strbuf_printf(b, "#define THREADS %u\n#define ITERS %llu\n", threads,
                     (f->chunk_elements + 4ULL * threads - 1) / (4ULL * threads));
  }
  emit_cluster_helpers(b);
  tb_emit_cluster_signature(b, "tb_main", threads, f->cluster_blocks);
  tb_strbuf_printf(b, "%s  __shared__ float tb_block_stats[W];\n", CHUNK_BOUNDS);
  if (cached) {
    emit_chunk_load(b);
  }
  /* the block's own statistics in a scope of their own: the merge below
   * declares the row's under the same names */
  tb_strbuf_printf(b, "  {\n");
  if (cached) {
    emit_chunk_statistics(b, op);
  } else {
    emit_stat_pass(b, op, "lo", "hi", threads);
  }
  emit_block_combine(b, op, threads);
  tb_strbuf_printf(b, "  if (threadIdx.x == 0) {\n");
  emit_store_statistics(b, op, "tb_block_stats");
  tb_strbuf_printf(
      b,
      "  }\n  }\n  tb_cluster_arrive();\n  tb_cluster_wait();\n"
      "  __shared__ float tb_row_stats[K * W];\n"
      "  if (threadIdx.x < K * W)\n"
      "    tb_row_stats[threadIdx.x] = tb_cluster_map(tb_block_stats, threadIdx.x / W)[threadIdx.x "
      "%% W];\n"
      "  tb_cluster_arrive();\n  __syncthreads();\n  const float *p = tb_row_stats;\n");
  emit_merge_partials(b, op);
  if (cached && has_row_output(op)) {
    emit_finish_statistics(b, op);
    emit_chunk_output(b, op);
  } else {
    emit_row_result(b, op, "lo", "hi", threads, "chunk == 0 && threadIdx.x == 0");
  }
  tb_strbuf_printf(b, "  tb_cluster_wait();\n}\n");
  one_kernel(g, threads, f->thread_blocks, f->shared_bytes);
  g->kernels[0].cluster_blocks = f->cluster_blocks;
}

enum tb_status tb_codegen_reduction(const struct tb_plan *plan, const struct tb_case *c,
                                    struct tb_generated *out, struct tb_error *err) {
  memset(out, 0, sizeof *out);
  if (plan->op != c->op->op || plan->m != c->shape.m || plan->n != c->shape.n) {
    return tb_fail(err, TB_ERR_RUN, "plan (%zux%zu) does not belong to case %zux%zu", plan->m,
                   plan->n, c->shape.m, c->shape.n);
  }
  struct tb_strbuf b = {0};
  char what[160];
  snprintf(what, sizeof what, "%s %zux%zu (row stride %zu), variant %s, mapping %s", c->op->name,
           c->shape.m, c->shape.n, c->view.row_stride, tb_variant_name(plan->variant),
           tb_mapping_name(plan->mapping));
  tb_emit_prelude(&b, what, c->op->op);
  emit_constants(&b, c);
  switch (plan->mapping) {
  case TB_MAPPING_REGISTER_ROWS: emit_register_rows(&b, plan, c, out); break;
  case TB_MAPPING_BLOCK_STREAMING: emit_block_streaming(&b, plan, c, out); break;
  case TB_MAPPING_CLUSTER_ROW: emit_cluster_row(&b, plan, c, out); break;
  default: emit_split_row(&b, plan, c, out); break;
  }
  enum tb_status status = tb_emit_finish(&b, out, err);
  if (status == TB_OK && plan->mapping == TB_MAPPING_CLUSTER_ROW) {
    out->min_cc_major = 9; /* thread-block clusters and distributed shared memory */
  }
  return status;
}
