
// ---- mapping: subwarp rows (very short rows, docs/planner.md) -------------
// LANES lanes a row (a power of two, 1..16), so 32 / LANES consecutive rows
// a warp and ROWS = THREADS / LANES consecutive rows a block; each lane caches
// V elements of its row in registers. Elements are dealt to a row's lanes
// one at a time, element e = lane + k * LANES for k < V, so at each k the
// warp reads 32 / LANES consecutive rows' elements k * LANES .. k * LANES +
// LANES - 1 (a line the loads of several k share is meant to hit in L1
// after the first). VEC4 (a row a whole number of groups of 4 for
// every lane and a stride that is a multiple of 4): groups of 4 are dealt
// round-robin instead, as register rows deal them, element e = 4 * (lane +
// j * LANES) + i of slot k = 4j + i, loaded and stored 16 bytes at once when
// the matrix is aligned. The reductions shuffle within the row's lanes only
// (log2 LANES levels, none for one lane a row): no shared memory, no
// barriers. The weight and bias are loaded with the row.

// The element of cache slot k (a constant after unrolling but for lane).
#define TB_SUBWARP_ELEMENT(k) (VEC4 ? 4 * (lane + (k) / 4 * LANES) + (k) % 4 : lane + (k) * LANES)

// One reduction site across a row's LANES lanes: a butterfly of Reduction's
// combine (the same tree as its warp reduction, on the last log2 LANES
// levels). Every lane of the warp takes part (the rows past M too).
#define TB_SUBWARP_REDUCE(Reduction, v)                                                  \
  _Pragma("unroll") for (int o = LANES / 2; o > 0; o >>= 1) {                            \
    v = Reduction::combine(v, __shfl_xor_sync(0xffffffffu, v, o, LANES));                \
  }

template <class Op>
static __device__ __forceinline__ void tb_subwarp_rows(const float *__restrict__ x,
                                                       const float *__restrict__ weight,
                                                       const float *__restrict__ bias,
                                                       float *__restrict__ out) {
  const int lane = threadIdx.x % LANES;
  const int slot = threadIdx.x / LANES;
  const long long row = (long long)blockIdx.x * ROWS + slot;
  // Rows past M still take part in the shuffles; they never store.
  const bool active = row < M;
  const float *xr = x + (active ? row : 0LL) * SX;
  float cache[V];
  float wpre[V], bpre[V]; // the weight and bias of each cached element
  if constexpr (VEC4) {
    // every row starts aligned when x does: SX is a multiple of 4
    const bool vec = tb_aligned16(x);
#pragma unroll
    for (int j = 0; j < V / 4; ++j) {
      const int e = 4 * (lane + j * LANES);
      TB_LOAD4(t, xr, e, vec, )
#pragma unroll
      for (int i = 0; i < 4; ++i) cache[4 * j + i] = active ? t[i] : 0.0f;
      if constexpr (Op::has_weight) {
        TB_LOAD_PARAMS(Op, p, e)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          wpre[4 * j + i] = p.w[i];
          if constexpr (Op::has_bias) bpre[4 * j + i] = p.b[i];
        }
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const int e = TB_SUBWARP_ELEMENT(k);
      // a row past M reads row 0 (xr) and drops it: no branch around the loads
      const float v = e < N ? xr[e] : 0.0f;
      cache[k] = active ? v : 0.0f;
      if constexpr (Op::has_weight) {
        wpre[k] = e < N ? weight[e] : 0.0f;
        if constexpr (Op::has_bias) bpre[k] = e < N ? bias[e] : 0.0f;
      }
    }
  }
  using first_reduction = typename Op::first_reduction;
  float first = Op::register_first_init();
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const int e = TB_SUBWARP_ELEMENT(k);
    if (!Op::register_first_masked || e < N) first = Op::register_first(first, cache[k]);
  }
  TB_SUBWARP_REDUCE(first_reduction, first)
  float pivot = 0.0f, second = 0.0f;
  if constexpr (Op::register_passes == 2) {
    pivot = Op::register_between(first);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const int e = TB_SUBWARP_ELEMENT(k);
      const float term = e < N ? Op::register_term(cache[k], pivot) : 0.0f;
      if constexpr (Op::register_caches_term) cache[k] = term;
      second += Op::register_second(term);
    }
    TB_SUBWARP_REDUCE(tb_sum_reduction, second)
  }
  const typename Op::finished f = Op::register_finish(first, pivot, second);
  if constexpr (!Op::has_row_output) {
    if (active && lane == 0) out[row] = Op::row_value(f);
  } else {
    if (!active) return;
    float *orow = out + row * N;
    tb_params p;
    if constexpr (VEC4) {
      const bool ovec = tb_aligned16(out); // every output row too: N is a multiple of 4
#pragma unroll
      for (int j = 0; j < V / 4; ++j) {
        const int e = 4 * (lane + j * LANES);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          p.w[i] = wpre[4 * j + i];
          if constexpr (Op::has_bias) p.b[i] = bpre[4 * j + i];
        }
        TB_OUTPUT_GROUP(Op, register_row_output, orow, e, ovec, f, p, cache[4 * j + i])
      }
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const int e = TB_SUBWARP_ELEMENT(k);
        p.w[0] = wpre[k];
        if constexpr (Op::has_bias) p.b[0] = bpre[k];
        if (e < N) orow[e] = Op::register_row_output(cache[k], f, p, 0);
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_subwarp_rows<tb_row_op>(x, weight, bias, out);
}
