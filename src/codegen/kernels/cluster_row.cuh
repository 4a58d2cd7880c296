
// ---- mapping: cluster rows (one launch, Hopper) --------------------------
// Row `row` is cluster `row`: its K blocks of THREADS threads, chunk = rank,
// CHUNK elements each. Each block reduces its chunk (its warps' statistics
// merged as a tree: one block a multiprocessor leaves the registers for it)
// and publishes its statistics in shared memory; after a cluster barrier
// K * words threads fetch the row's K * words floats at once into this
// block's shared memory, and every thread merges them as a tree. The barrier's second half waits at
// the very end: a block leaves only when the whole cluster has read its
// statistics, and writes its chunk meanwhile. CHUNK_CACHED: the chunk stays
// in registers (ITERS groups of 4 a thread: read once from memory); else
// CHUNK_SHARED: in shared memory (read once); else it is streamed twice.
// TB_CLUSTER_DIMS (the generator's) fixes the cluster.
// PREFETCH (emitted, as 1, only for a chunk in registers of at most 4 groups
// a thread of an operation with a weight, in a grid of at most one block a
// multiprocessor: reduction.c): the weight and bias
// groups are loaded with the chunk, so the output after the cluster barrier
// does not wait for them.
// CHUNK_SHARED (emitted, as 1, for a chunk too long for registers that the
// plan keeps in dynamic shared memory): shared_chunk.cuh.
#ifndef PREFETCH
#define PREFETCH 0
#endif
#ifndef CHUNK_SHARED
#define CHUNK_SHARED 0
#endif

// The two halves of a cluster barrier (arrive releases this block's shared
// writes, wait acquires every block's), and the address of a shared variable's
// counterpart in cluster block `rank` (distributed shared memory, read with
// ordinary loads, which the compiler may overlap).
static __device__ __forceinline__ void tb_cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
static __device__ __forceinline__ void tb_cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
static __device__ __forceinline__ const float *tb_cluster_map(const float *local, unsigned rank) {
  unsigned long long remote;
  asm("mapa.u64 %0, %1, %2;" : "=l"(remote) : "l"(local), "r"(rank));
  return reinterpret_cast<const float *>(remote);
}

// The thread's ITERS groups of 4 of [lo, hi) (a chunk in registers): k, e
// and `in`, whether the group lies inside the chunk (it lies wholly inside or
// outside: lo and CHUNK are multiples of 4).
#define TB_FOR_CHUNK_GROUPS(...)                                                         \
  _Pragma("unroll") for (int k = 0; k < ITERS; ++k) {                                    \
    const long long e = lo + 4LL * (threadIdx.x + k * THREADS);                          \
    const bool in = e < hi;                                                              \
    __VA_ARGS__                                                                          \
  }
// ... and their elements: also i, `ok` (inside the chunk and the row) and
// its weight w (1.0f where ok, else 0.0f). Both forms of the mask are made
// here, in place, for the same reason as the index arithmetic (row_common.cuh):
// a member that selects on a bool parameter (layernorm's `ok ? 1.0f : 0.0f`,
// `ok ? v - mean : 0.0f`) is simplified before it is inlined, into other
// operations than the same select in place (layernorm's chunk in registers
// took 5 to 8 registers more), while a float weight computed here keeps them;
// softmax's `if (ok)` compiles best on the bool. The unused one costs nothing.
#define TB_FOR_CHUNK_ELEMENTS(...)                                                       \
  TB_FOR_CHUNK_GROUPS(_Pragma("unroll") for (int i = 0; i < 4; ++i) {                    \
    const bool ok = in && e + i < N;                                                     \
    const float w = ok ? 1.0f : 0.0f;                                                    \
    __VA_ARGS__                                                                          \
  })

// The groups of [lo, hi) a thread passes over (TB_PASS), from the chunk in
// shared memory: t[4] the group at e, and per element i, ok and w as
// TB_FOR_CHUNK_ELEMENTS makes them
// (CHUNK_SHARED: tb_chunk[(e - lo) / 4] holds group e; TB_PASS deals every
// pass's groups to the same threads).
#define TB_FOR_SHARED_ELEMENTS(...)                                                      \
  TB_PASS(e, lo, hi, THREADS) {                                                          \
    const float4 q4 = tb_chunk[(e - lo) / 4];                                            \
    const float t[4] = {q4.x, q4.y, q4.z, q4.w};                                         \
    _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                      \
      const bool ok = e + i < N;                                                         \
      const float w = ok ? 1.0f : 0.0f;                                                  \
      __VA_ARGS__                                                                        \
    }                                                                                    \
  }

// s = the thread's statistics of its groups of the chunk in shared memory,
// in the passes the operator's chunk in registers takes.
#define TB_SHARED_CHUNK_STATS(Op, s)                                                     \
  typename Op::stats s = Op::init();                                                     \
  TB_FOR_SHARED_ELEMENTS(Op::chunk_first(s, t[i], ok, w);)                               \
  if constexpr (Op::chunk_passes == 2) {                                                 \
    Op::chunk_between(s);                                                                \
    TB_FOR_SHARED_ELEMENTS(Op::chunk_second(s, t[i], ok, w);)                            \
  }

template <class Op>
static __device__ __forceinline__ void tb_cluster_row(const float *__restrict__ x,
                                                      const float *__restrict__ weight,
                                                      const float *__restrict__ bias,
                                                      float *__restrict__ out) {
  TB_CHUNK_BOUNDS
  __shared__ float tb_block_stats[Op::words];
#if CHUNK_CACHED
  // every load of the chunk issued before any use (a loop bounded at run
  // time would wait out one memory latency per trip); not a byte of the next
  // chunk
  float cache[ITERS][4];
  float wpre[ITERS][4], bpre[ITERS][4]; // PREFETCH: the groups' weight and bias
  TB_FOR_CHUNK_GROUPS(TB_LOAD4(t, xr, e, vec, in &&)
                      _Pragma("unroll") for (int i = 0; i < 4; ++i) cache[k][i] = t[i];
                      if constexpr (PREFETCH) {
                        if (in) {
                          TB_LOAD_PARAMS(Op, p, e)
                          _Pragma("unroll") for (int i = 0; i < 4; ++i) {
                            wpre[k][i] = p.w[i];
                            if constexpr (Op::has_bias) bpre[k][i] = p.b[i];
                          }
                        }
                      })
#elif CHUNK_SHARED
  extern __shared__ float4 tb_chunk[];
#endif
  // the block's own statistics in a scope of their own: the merge below
  // declares the row's under the same name
  {
#if CHUNK_CACHED
    typename Op::stats s = Op::init();
    TB_FOR_CHUNK_ELEMENTS(Op::chunk_first(s, cache[k][i], ok, w);)
    if constexpr (Op::chunk_passes == 2) {
      Op::chunk_between(s);
      TB_FOR_CHUNK_ELEMENTS(Op::chunk_second(s, cache[k][i], ok, w);)
    }
#elif CHUNK_SHARED
    // the chunk read once from memory, every copy in flight before the first wait
    tb_copy_chunk_async(tb_chunk, xr, lo, hi, vec);
    asm volatile("cp.async.wait_all;" ::: "memory");
    TB_SHARED_CHUNK_STATS(Op, s)
#else
    TB_STAT_PASS(Op, s, lo, hi, THREADS)
#endif
    TB_BLOCK_COMBINE_TREE(Op, s, THREADS, 0)
    if (threadIdx.x == 0) {
      Op::store(s, tb_block_stats, 0);
    }
  }
  tb_cluster_arrive();
  tb_cluster_wait();
  __shared__ float tb_row_stats[K * Op::words];
  if (threadIdx.x < K * Op::words)
    tb_row_stats[threadIdx.x] =
        tb_cluster_map(tb_block_stats, threadIdx.x / Op::words)[threadIdx.x % Op::words];
  tb_cluster_arrive();
  tb_barrier<1>();
  const float *p = tb_row_stats;
  const typename Op::stats s = tb_merge_partials<Op>(p);
#if CHUNK_CACHED
  if constexpr (Op::has_row_output) {
    const typename Op::finished f = Op::finish(s);
    float *orow = out + row * N;
    const bool ovec = tb_aligned16(orow);
    if constexpr (PREFETCH) {
      TB_FOR_CHUNK_GROUPS(if (!in) continue; tb_params p;
                          _Pragma("unroll") for (int i = 0; i < 4; ++i) {
                            p.w[i] = wpre[k][i];
                            if constexpr (Op::has_bias) p.b[i] = bpre[k][i];
                          } TB_OUTPUT_GROUP(Op, output, orow, e, ovec, f, p, cache[k][i]))
    } else {
      TB_FOR_CHUNK_GROUPS(if (!in) continue; TB_LOAD_PARAMS(Op, p, e)
                          TB_OUTPUT_GROUP(Op, output, orow, e, ovec, f, p, cache[k][i]))
    }
  } else
#elif CHUNK_SHARED
  if constexpr (Op::has_row_output) {
    const typename Op::finished f = Op::finish(s);
    float *orow = out + row * N;
    const bool ovec = tb_aligned16(orow);
    TB_PASS(e, lo, hi, THREADS) TB_OUTPUT_FROM_SHARED(Op, f, orow, ovec, e, tb_chunk[(e - lo) / 4])
  } else
#endif
  {
    TB_ROW_RESULT(Op, s, lo, hi, THREADS, chunk == 0 && threadIdx.x == 0)
  }
  tb_cluster_wait();
}

// At least 1 block per SM: ptxas may take the registers the merge of a
// cluster's statistics needs (it spilled at its default 64 for layernorm in
// clusters of 16; the plan has about one block per SM anyway).
extern "C" __global__ void TB_CLUSTER_DIMS __launch_bounds__(THREADS, 1) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_cluster_row<tb_row_op>(x, weight, bias, out);
}
