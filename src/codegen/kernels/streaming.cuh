
// ---- streamed statistics: block streaming, split rows, cluster rows ------
// A row (or its chunk [lo, hi)) is read in groups of 4 by `threads` threads;
// each thread keeps statistics (Op::stats), merged across the block.

// TB_PASS: one group of 4 a trip, unrolled (less at 1024 threads, where a
// thread has only 64 registers). Its loads do not overlap: each sits behind
// the previous group's bounds tests, so a thread has one 16-byte load in
// flight. The passes that read the row from memory (TB_STAT_PASS,
// TB_OUTPUT_PASS) therefore read it in batches: where the row is aligned,
// a batch's groups all inside [lo, hi) are loaded before the first is used;
// the groups left (fewer than a batch a thread, or a misaligned row's) are
// loaded a batch at a time with their bounds tests as predicates. A thread
// meets its elements in the same order as one group a trip would, so the
// statistics and outputs keep their bits. (A grid of a few hundred blocks of
// 256 threads, one load in flight each, reads about 1 MB at a time: a third
// of the H100's bandwidth.)
#define TB_PRAGMA(text) _Pragma(#text)
#define TB_PASS(e, lo, hi, threads)                                                      \
  TB_PRAGMA(unroll (threads >= 1024 ? 4 : 8))                                            \
  for (long long e = lo + 4LL * threadIdx.x; e < hi; e += 4LL * threads)
#define TB_STAT_BATCH(threads) ((threads) >= 512 ? 4 : 8)
#define TB_OUTPUT_BATCH(threads) ((threads) >= 1024 ? 2 : 4)
// From the thread's group e on, a trip a batch while the whole batch (groups
// e + u * stride, u < batch) lies inside [lo, hi); e is left at the first
// group not taken.
#define TB_WHOLE_BATCHES(e, batch, stride, hi)                                           \
  for (; e + stride * (batch - 1) + 3 < hi; e += stride * batch)

// q[batch][4] = the groups e + u * stride (u < batch) of row `xr`, zero past
// hi: with no tests (`whole`: the row aligned and every group inside), or
// each group's own.
#define TB_LOAD_BATCH(q, batch, e, stride, hi, whole)                                    \
  float q[batch][4];                                                                     \
  _Pragma("unroll") for (int u = 0; u < batch; ++u) {                                    \
    const long long g = e + stride * u;                                                  \
    if (whole) {                                                                         \
      const float4 q4 = *reinterpret_cast<const float4 *>(xr + g);                       \
      q[u][0] = q4.x; q[u][1] = q4.y; q[u][2] = q4.z; q[u][3] = q4.w;                    \
    } else {                                                                             \
      TB_LOAD4(t, xr, g, vec, g < hi &&)                                                 \
      _Pragma("unroll") for (int i = 0; i < 4; ++i) q[u][i] = t[i];                      \
    }                                                                                    \
  }

// s = the thread's statistics of elements [lo, hi) of row `xr`.
#define TB_STAT_PASS(Op, s, lo, hi, threads)                                             \
  typename Op::stats s = Op::init();                                                     \
  {                                                                                      \
    constexpr int batch = TB_STAT_BATCH(threads);                                        \
    constexpr long long stride = 4LL * (threads);                                        \
    long long e = lo + 4LL * threadIdx.x;                                                \
    if (vec) {                                                                           \
      TB_WHOLE_BATCHES(e, batch, stride, hi) {                                           \
        TB_LOAD_BATCH(q, batch, e, stride, hi, true)                                     \
        _Pragma("unroll") for (int u = 0; u < batch; ++u) {                              \
          _Pragma("unroll") for (int i = 0; i < 4; ++i) Op::accumulate(s, q[u][i]);      \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
    for (; e < hi; e += stride * batch) {                                                \
      TB_LOAD_BATCH(q, batch, e, stride, hi, false)                                      \
      _Pragma("unroll") for (int u = 0; u < batch; ++u) {                                \
        _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                  \
          if (e + stride * u + i < hi) Op::accumulate(s, q[u][i]);                       \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
  }

// The output of elements [lo, hi) of row `row`, the row streamed again, from
// the row's finished statistics f: batches of x's groups and their weight
// and bias groups loaded before the first output, then the groups left one
// by one.
#define TB_OUTPUT_PASS(Op, f, lo, hi, threads)                                           \
  {                                                                                      \
    float *orow = out + row * N;                                                         \
    const bool ovec = tb_aligned16(orow);                                                \
    constexpr int batch = TB_OUTPUT_BATCH(threads);                                      \
    constexpr long long stride = 4LL * (threads);                                        \
    long long e = lo + 4LL * threadIdx.x;                                                \
    if (vec) {                                                                           \
      TB_WHOLE_BATCHES(e, batch, stride, hi) {                                           \
        TB_LOAD_BATCH(q, batch, e, stride, hi, true)                                     \
        tb_params p[batch];                                                              \
        _Pragma("unroll") for (int u = 0; u < batch; ++u) {                              \
          TB_PARAMS_GROUP(Op, p[u], e + stride * u)                                      \
        }                                                                                \
        _Pragma("unroll") for (int u = 0; u < batch; ++u) {                              \
          const long long g = e + stride * u;                                            \
          TB_OUTPUT_GROUP(Op, output, orow, g, ovec, f, p[u], q[u][i])                   \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
    for (; e < hi; e += stride) {                                                        \
      TB_LOAD4(t, xr, e, vec, )                                                          \
      TB_LOAD_PARAMS(Op, p, e)                                                           \
      TB_OUTPUT_GROUP(Op, output, orow, e, ovec, f, p, t[i])                             \
    }                                                                                    \
  }

// With the row's statistics s in every thread: the output of [lo, hi),
// streamed again, or (an operation with one value a row) that value, stored
// where `writer`.
#define TB_ROW_RESULT(Op, s, lo, hi, threads, writer)                                    \
  if constexpr (Op::has_row_output) {                                                    \
    const typename Op::finished f = Op::finish(s);                                       \
    TB_OUTPUT_PASS(Op, f, lo, hi, threads)                                               \
  } else {                                                                               \
    if (writer) out[row] = Op::row_value(Op::finish(s));                                 \
  }

// (split rows and cluster rows) Row `row`'s chunk [lo, hi).
#define TB_CHUNK_BOUNDS                                                                  \
  const long long row = blockIdx.x / K, chunk = blockIdx.x % K;                          \
  const long long lo = chunk * CHUNK, hi = lo + CHUNK < N ? lo + CHUNK : N;              \
  const float *xr = x + row * SX;                                                        \
  const bool vec = tb_aligned16(xr);

// Merges the statistics s of the lanes, then of the warps through shared
// memory (barrier `site`); every thread ends with the block's statistics,
// merged in the same order: identical results. (Macros: the shared array is
// declared where it is used, so the arrays keep their order in the block.)
// TB_BLOCK_COMBINE merges the warps' statistics one after another;
// TB_BLOCK_COMBINE_TREE as a tree of up to 16 (tb_merge_tree), for mappings
// whose register budget holds a block's warps' statistics at once (a tree
// spilled where the plan caps registers at 32).
#define TB_BLOCK_PUBLISH(Op, s, threads, site)                                           \
  Op::warp_merge(s);                                                                     \
  __shared__ float tb_stats[Op::words * (threads / 32)];                                 \
  if ((threadIdx.x & 31) == 0) {                                                         \
    Op::store(s, tb_stats, Op::words * (threadIdx.x / 32));                              \
  }                                                                                      \
  tb_barrier<site>();
#define TB_BLOCK_COMBINE(Op, s, threads, site)                                           \
  TB_BLOCK_PUBLISH(Op, s, threads, site)                                                 \
  s = Op::load(tb_stats, 0);                                                             \
  for (int w = 1; w < threads / 32; ++w) Op::merge(s, Op::load(tb_stats, Op::words * w));
#define TB_BLOCK_COMBINE_TREE(Op, s, threads, site)                                      \
  static_assert(threads / 32 <= 16, "a tree of at most 16 warps");                        \
  TB_BLOCK_PUBLISH(Op, s, threads, site)                                                 \
  s = tb_merge_tree<Op, threads / 32>(tb_stats);

// Merges COUNT <= 16 statistics p[0 .. COUNT * words) as a tree, k with
// k + step for step = 1, 2, 4, 8: a chain of log2(COUNT) merges where one
// after another takes COUNT - 1 (the chain lies between a row's last load and
// its first store). A fixed shape, so every thread that merges them gets the
// same bits.
template <class Op, int COUNT>
static __device__ __forceinline__ typename Op::stats tb_merge_tree(const float *p) {
  typename Op::stats s[COUNT];
  _Pragma("unroll") for (int k = 0; k < COUNT; ++k) s[k] = Op::load(p, Op::words * k);
  _Pragma("unroll") for (int step = 1; step < COUNT; step *= 2) {
    _Pragma("unroll") for (int k = 0; k + step < COUNT; k += 2 * step) Op::merge(s[k], s[k + step]);
  }
  return s[0];
}

// Statistics k of a row's slot, read from L2: the slot was written by other
// multiprocessors since this one last read it (persistent rows, split rows
// whose last block merges).
template <class Op>
static __device__ __forceinline__ typename Op::stats tb_load_partial(const float *slot,
                                                                      long long k) {
  float v[Op::words];
  _Pragma("unroll") for (int w = 0; w < Op::words; ++w) v[w] = __ldcg(slot + k * Op::words + w);
  return Op::load(v, 0);
}

// The K partial statistics of a row (a cluster's blocks, split rows'
// partials): as a tree up to 16, more one after another.
template <class Op>
static __device__ __forceinline__ typename Op::stats tb_merge_partials(const float *p) {
  if constexpr (K <= 16) {
    return tb_merge_tree<Op, K>(p);
  } else {
    typename Op::stats s = Op::load(p, 0);
    for (long long k = 1; k < K; ++k) Op::merge(s, Op::load(p, Op::words * k));
    return s;
  }
}
