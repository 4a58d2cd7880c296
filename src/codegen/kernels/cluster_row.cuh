
// ---- mapping: cluster rows (one launch, Hopper) --------------------------
// Row `row` is cluster `row`: its K blocks of THREADS threads, chunk = rank,
// CHUNK elements each. Each block reduces its chunk (its warps' statistics
// merged as a tree: one block a multiprocessor leaves the registers for it)
// and pushes its statistics into every block of the cluster (tb_push below);
// once the row's K have come, every thread merges them as a tree and the
// block writes its chunk. CHUNK_CACHED: the chunk stays in registers (ITERS
// groups of 4 a thread: read once from memory); else CHUNK_SHARED: in shared
// memory (read once); else it is streamed twice.
// TB_CLUSTER_DIMS (the generator's) fixes the cluster.
// PREFETCH (emitted, as 1, only for a chunk in registers of at most 4 groups
// a thread of an operation with a weight, in a grid of at most one block a
// multiprocessor: reduction.c): the weight and bias
// groups are loaded with the chunk, so the output after the row's statistics
// have come does not wait for them.
// CHUNK_SHARED (emitted, as 1, for a chunk too long for registers that the
// plan keeps in dynamic shared memory): shared_chunk.cuh.
#ifndef PREFETCH
#define PREFETCH 0
#endif
#ifndef CHUNK_SHARED
#define CHUNK_SHARED 0
#endif

// The two halves of a cluster barrier, the arrival relaxed: it orders no
// memory, only says the block has started (its mbarrier is initialised, and
// the fence that follows the initialisation releases it).
static __device__ __forceinline__ void tb_cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
static __device__ __forceinline__ void tb_cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

// The row's statistics are pushed, not fetched: each block writes its words
// into every block's tb_row_stats with st.async, which counts the bytes on the
// receiving block's mbarrier; a block waits on its own mbarrier until all
// K * words have come. No cluster barrier, and no fence, stands between a
// block's statistics and the row's: the one cluster barrier (arrived at the
// start, waited before the first push) only says every mbarrier is ready. A
// block leaves once its own statistics have all come, which is after every
// block has pushed, so no block's shared memory is written after it left.
static __device__ __forceinline__ unsigned tb_shared_address(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
static __device__ __forceinline__ void tb_receive_init(unsigned long long *bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n\t"
               "fence.mbarrier_init.release.cluster;" ::"r"(tb_shared_address(bar))
               : "memory");
}
static __device__ __forceinline__ void tb_receive_expect(unsigned long long *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   tb_shared_address(bar)),
               "r"(bytes)
               : "memory");
}
// value into `slot` of block `rank`'s shared memory, counted on its mbarrier
static __device__ __forceinline__ void tb_push(float *slot, unsigned long long *bar, unsigned rank,
                                               float value) {
  unsigned remote_slot, remote_bar;
  asm("mapa.shared::cluster.u32 %0, %1, %2;"
      : "=r"(remote_slot)
      : "r"(tb_shared_address(slot)), "r"(rank));
  asm("mapa.shared::cluster.u32 %0, %1, %2;"
      : "=r"(remote_bar)
      : "r"(tb_shared_address(bar)), "r"(rank));
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(
                   remote_slot),
               "r"(__float_as_uint(value)), "r"(remote_bar)
               : "memory");
}
static __device__ __forceinline__ void tb_receive_wait(unsigned long long *bar) {
  asm volatile("{\n\t.reg .pred done;\n\t"
               "wait:\n\t"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], 0;\n\t"
               "@!done bra.uni wait;\n\t}" ::"r"(tb_shared_address(bar))
               : "memory");
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
  __shared__ alignas(8) unsigned long long tb_received;
  __shared__ float tb_row_stats[K * Op::words];
  if (threadIdx.x == 0) tb_receive_init(&tb_received);
  tb_cluster_arrive_relaxed();
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
    if (threadIdx.x == 0) tb_receive_expect(&tb_received, K * Op::words * 4);
    tb_cluster_wait();
    if (threadIdx.x < K * Op::words) {
      const unsigned to = threadIdx.x / Op::words, word = threadIdx.x % Op::words;
      // the word this thread sends, by selects (an array indexed at run time
      // would live in local memory)
      float words[Op::words];
      Op::store(s, words, 0);
      float value = words[0];
      _Pragma("unroll") for (int i = 1; i < Op::words; ++i) if (word == i) value = words[i];
      tb_push(&tb_row_stats[chunk * Op::words + word], &tb_received, to, value);
    }
  }
  tb_receive_wait(&tb_received); // every thread waits itself: no block barrier after it
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
    TB_OUTPUT_PASS_FROM_SHARED(Op, f, orow, ovec)
  } else
#endif
  {
    TB_ROW_RESULT(Op, s, lo, hi, THREADS, chunk == 0 && threadIdx.x == 0)
  }
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
