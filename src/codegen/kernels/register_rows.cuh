
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

// Every cached element: k, i, its index j in the row and `cache[k][i]`.
// GROUPED (a template parameter of the row below): a lane caches groups of 4
// consecutive elements, 4 * (lane + k * WIDTH) + i; otherwise elements dealt
// one at a time across the lanes, (4 * k + i) * WIDTH + lane.
#define TB_CACHED_INDEX(k, i)                                                            \
  (GROUPED ? 4 * (lane + (k) * WIDTH) + (i) : (4 * (k) + (i)) * WIDTH + lane)
#define TB_FOR_CACHED(...)                                                               \
  _Pragma("unroll") for (int k = 0; k < G; ++k) {                                        \
    _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                      \
      const int j = TB_CACHED_INDEX(k, i);                                               \
      (void)j;                                                                           \
      __VA_ARGS__                                                                        \
    }                                                                                    \
  }

// p = the weight (and bias) of cached group k: a 16-byte group where GROUPED,
// else the elements the lane holds, one load each (a warp reads 128 contiguous
// bytes a load).
#define TB_CACHED_PARAMS(Op, p, k)                                                       \
  tb_params p;                                                                           \
  if constexpr (GROUPED) {                                                               \
    const int e = 4 * (lane + (k) * WIDTH);                                              \
    TB_LOAD_PARAMS(Op, p##_group, e)                                                     \
    if constexpr (Op::has_weight) p = p##_group;                                         \
  } else if constexpr (Op::has_weight) {                                                 \
    _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                      \
      const int j = TB_CACHED_INDEX(k, i);                                               \
      p.w[i] = j < N ? weight[j] : 0.0f;                                                 \
      if constexpr (Op::has_bias) p.b[i] = j < N ? bias[j] : 0.0f;                       \
    }                                                                                    \
  }

// This thread's lane and slot, its row, whether the row is one (rows past M
// still take part in the barriers; they never store) and its start (a macro:
// the index arithmetic needs the facts about lane and slot, row_common.cuh).
#define TB_ROW_OF_THREAD                                                                 \
  const int lane = threadIdx.x % WIDTH;                                                  \
  const int slot = threadIdx.x / WIDTH;                                                  \
  const long long row = (long long)blockIdx.x * P + slot;                                \
  const bool active = row < M;                                                           \
  const float *xr = x + (active ? row : 0LL) * SX;

// This thread's row, its elements cached as GROUPED says: groups of 16-byte
// loads and stores where the row is aligned (else 4 accesses of 4 bytes a
// group, 16 bytes apart a lane), or elements dealt one at a time, whose 4-byte
// accesses a warp makes as 128 contiguous bytes.
template <class Op, bool GROUPED>
static __device__ __forceinline__ void tb_register_row(const float *__restrict__ x,
                                                       const float *__restrict__ weight,
                                                       const float *__restrict__ bias,
                                                       float *__restrict__ out) {
  TB_ROW_OF_THREAD
  const bool vec = tb_aligned16(xr); // GROUPED's loads
  (void)vec;
  float cache[G][4];
  float wpre[G][4], bpre[G][4]; // PREFETCH: the weight and bias groups
#pragma unroll
  for (int k = 0; k < G; ++k) {
    float t[4];
    if constexpr (GROUPED) {
      const int e = 4 * (lane + k * WIDTH);
      TB_LOAD4(g, xr, e, vec, )
#pragma unroll
      for (int i = 0; i < 4; ++i) t[i] = g[i];
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int j = TB_CACHED_INDEX(k, i);
        t[i] = j < N ? xr[j] : 0.0f;
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) cache[k][i] = active ? t[i] : 0.0f;
    if constexpr (PREFETCH) {
      TB_CACHED_PARAMS(Op, p, k)
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
  TB_FOR_CACHED(if (!Op::register_first_masked || j < N) {
    first = Op::register_first(first, cache[k][i]);
  })
  TB_ROW_REDUCE(first_reduction, first, 0)
  float pivot = 0.0f, second = 0.0f;
  if constexpr (Op::register_passes == 2) {
    pivot = Op::register_between(first);
    TB_FOR_CACHED(const float term = j < N ? Op::register_term(cache[k][i], pivot) : 0.0f;
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
    const bool ovec = tb_aligned16(orow); // GROUPED's stores
    (void)ovec;
#pragma unroll
    for (int k = 0; k < G; ++k) {
      tb_params p;
      if constexpr (PREFETCH) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          p.w[i] = wpre[k][i];
          if constexpr (Op::has_bias) p.b[i] = bpre[k][i];
        }
      } else {
        TB_CACHED_PARAMS(Op, loaded, k)
        if constexpr (Op::has_weight) p = loaded;
      }
      if constexpr (GROUPED) {
        const int e = 4 * (lane + k * WIDTH);
        TB_OUTPUT_GROUP(Op, register_row_output, orow, e, ovec, f, p, cache[k][i])
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int j = TB_CACHED_INDEX(k, i);
          if (j < N) TB_ST(orow + j, Op::register_row_output(cache[k][i], f, p, i));
        }
      }
    }
  }
}

// CONTIGUOUS_FALLBACK (emitted as 1 for one warp a row of at most 4 groups a
// lane where the view may leave rows misaligned, 3 rows in 4 at a stride of
// 257): a row that is not 16-byte aligned takes its elements one at a time
// across the lanes. In groups its 4-byte accesses lie 16 bytes apart a lane,
// so a warp's access spans 512 bytes for 128 of use: 4 times the sectors
// requested, and every output sector written in 4 parts. The branch is the
// warp's own (one warp a row, no block barrier), and each side compiles with
// what it knows (which elements lie past the row, among them).
template <class Op>
static __device__ __forceinline__ void tb_register_rows(const float *__restrict__ x,
                                                        const float *__restrict__ weight,
                                                        const float *__restrict__ bias,
                                                        float *__restrict__ out) {
  static_assert(!CONTIGUOUS_FALLBACK || S == 1, "a row's warps would part at their barriers");
  if constexpr (CONTIGUOUS_FALLBACK) {
    TB_ROW_OF_THREAD
    if (tb_aligned16(xr)) {
      tb_register_row<Op, true>(x, weight, bias, out);
    } else {
      tb_register_row<Op, false>(x, weight, bias, out);
    }
  } else {
    tb_register_row<Op, true>(x, weight, bias, out);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_register_rows<tb_row_op>(x, weight, bias, out);
}
