
// ---- mapping: register rows (docs/method.md §7) --------------------------
// S warps per row, P rows per block, WIDTH = 32 * S lanes per row, each lane
// caching G groups of 4 elements in registers; THREADS = WIDTH * P. PREFETCH:
// the weight and bias groups are loaded with the row (rows of at most 4
// groups a lane in blocks of at most 256 threads: registers to spare), so the
// output does not wait for them after the reductions.

// One reduction site across the S warps of a row: warp shuffle, then (S > 1)
// a shared array and one barrier, after which every warp of the row combines
// the S partials the same way (identical results, no second barrier).
// Up to 16 warps a serial loop combines them; beyond, a second warp shuffle
// does, because ptxas keeps the unrolled loop's loads live: the 1024-thread
// layernorm row spilled at 64 registers with the loop and needs 62 without.
// (With the shuffle at 512 threads, ptxas aimed at 40 registers and spilled.)
// (A macro: lane and slot are the caller's, whose facts about them the
// index arithmetic needs; see row_common.cuh.) `Reduction`: warp (a warp's
// tree), combine (two values), identity.
#define TB_ROW_REDUCE(Reduction, v, site)                                                \
  v = Reduction::warp(v);                                                                \
  if constexpr (S > 1) {                                                                 \
    __shared__ float tb_red##site[P * S];                                                \
    if ((lane & 31) == 0) tb_red##site[slot * S + lane / 32] = v;                        \
    tb_barrier<site>();                                                                  \
    if constexpr (S > 16) {                                                              \
      v = Reduction::warp((lane & 31) < S ? tb_red##site[slot * S + (lane & 31)]         \
                                          : Reduction::identity());                      \
    } else {                                                                             \
      v = tb_red##site[slot * S];                                                        \
      for (int i = 1; i < S; ++i) v = Reduction::combine(v, tb_red##site[slot * S + i]); \
    }                                                                                    \
  }

// Every cached element: k, i, its index e + i and `cache[k][i]`.
#define TB_FOR_CACHED(...)                                                               \
  _Pragma("unroll") for (int k = 0; k < G; ++k) {                                        \
    const int e = 4 * (lane + k * WIDTH);                                                \
    (void)e;                                                                             \
    _Pragma("unroll") for (int i = 0; i < 4; ++i) { __VA_ARGS__ }                        \
  }

template <class Op>
static __device__ __forceinline__ void tb_register_rows(const float *__restrict__ x,
                                                        const float *__restrict__ weight,
                                                        const float *__restrict__ bias,
                                                        float *__restrict__ out) {
  const int lane = threadIdx.x % WIDTH;
  const int slot = threadIdx.x / WIDTH;
  const long long row = (long long)blockIdx.x * P + slot;
  // Rows past M still take part in the barriers; they never store.
  const bool active = row < M;
  const float *xr = x + (active ? row : 0LL) * SX;
  const bool vec = tb_aligned16(xr);
  float cache[G][4];
  float wpre[G][4], bpre[G][4]; // PREFETCH: the weight and bias groups
#pragma unroll
  for (int k = 0; k < G; ++k) {
    const int e = 4 * (lane + k * WIDTH);
    TB_LOAD4(t, xr, e, vec, )
#pragma unroll
    for (int i = 0; i < 4; ++i) cache[k][i] = active ? t[i] : 0.0f;
    if constexpr (PREFETCH) {
      TB_LOAD_PARAMS(Op, p, e)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        wpre[k][i] = p.w[i];
        if constexpr (Op::has_bias) bpre[k][i] = p.b[i];
      }
    }
  }
  using first_reduction = typename Op::first_reduction;
  float first = Op::register_first_init();
  // the masks in place, not in the operator (row_common.cuh says why)
  TB_FOR_CACHED(if (!Op::register_first_masked || e + i < N) {
    first = Op::register_first(first, cache[k][i]);
  })
  TB_ROW_REDUCE(first_reduction, first, 0)
  float pivot = 0.0f, second = 0.0f;
  if constexpr (Op::register_passes == 2) {
    pivot = Op::register_between(first);
    TB_FOR_CACHED(const float term = e + i < N ? Op::register_term(cache[k][i], pivot) : 0.0f;
                  if constexpr (Op::register_caches_term) cache[k][i] = term;
                  second += Op::register_second(term);)
    TB_ROW_REDUCE(tb_sum_reduction, second, 1)
  }
  const typename Op::finished f = Op::register_finish(first, pivot, second);
  if constexpr (!Op::has_row_output) {
    if (active && lane == 0) out[row] = Op::row_value(f);
  } else {
    if (!active) return;
    float *orow = out + row * N;
    const bool ovec = tb_aligned16(orow);
#pragma unroll
    for (int k = 0; k < G; ++k) {
      const int e = 4 * (lane + k * WIDTH);
      if constexpr (PREFETCH) {
        tb_params p;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          p.w[i] = wpre[k][i];
          if constexpr (Op::has_bias) p.b[i] = bpre[k][i];
        }
        TB_OUTPUT_GROUP(Op, register_row_output, orow, e, ovec, f, p, cache[k][i])
      } else {
        TB_LOAD_PARAMS(Op, p, e)
        TB_OUTPUT_GROUP(Op, register_row_output, orow, e, ovec, f, p, cache[k][i])
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_register_rows<tb_row_op>(x, weight, bias, out);
}
