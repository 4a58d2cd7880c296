
// ---- a row's chunk in dynamic shared memory (cluster and persistent rows) -
// Each thread copies its groups of [lo, hi) to tb_chunk[(e - lo) / 4] with
// cp.async, all at once (no registers between, so the whole chunk is in
// flight however few warps the shared memory leaves an SM), waits for its
// own copies, and the passes read the groups back from there. TB_PASS deals
// every pass's groups to the same threads, so a thread reads back only what
// it copied itself: no barrier.

// STREAMED_ONCE (emitted as 1 where the plan wants L2 kept for what is read
// again, as persistent rows' weights): the copies' lines are the first L2
// evicts.
#ifndef STREAMED_ONCE
#define STREAMED_ONCE 0
#endif
#if STREAMED_ONCE
#define TB_CP_ASYNC(level, bytes)                                                        \
  "cp.async." level ".shared.global.L2::cache_hint [%0], [%1], " bytes ", %2, %3;"
#define TB_CP_POLICY , "l"(policy)
#else
#define TB_CP_ASYNC(level, bytes) "cp.async." level ".shared.global [%0], [%1], " bytes ", %2;"
#define TB_CP_POLICY
#endif

// Group e of row `src` to shared `dst` without registers: 16 bytes from a
// 16-byte-aligned row (`vec`), else 4 at a time; zeros past the row end
// (cp.async reads `bytes` of the source and zero-fills the rest).
static __device__ __forceinline__ void tb_copy_group_async(float4 *dst, const float *src,
                                                           long long e, bool vec) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
#if STREAMED_ONCE
  unsigned long long policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
  if (vec) {
    const unsigned bytes = e + 3 < N ? 16u : (unsigned)(N - e) * 4u;
    asm volatile(TB_CP_ASYNC("cg", "16")::"r"(d), "l"(src + e), "r"(bytes) TB_CP_POLICY
                 : "memory");
  } else {
    _Pragma("unroll") for (int i = 0; i < 4; ++i) {
      const bool ok = e + i < N;
      asm volatile(TB_CP_ASYNC("ca", "4")::"r"(d + 4u * i), "l"(src + (ok ? e + i : e)),
                   "r"(ok ? 4u : 0u) TB_CP_POLICY
                   : "memory");
    }
  }
}

// The thread's groups of [lo, hi) of row `src` to the chunk, in flight.
static __device__ __forceinline__ void tb_copy_chunk_async(float4 *chunk, const float *src,
                                                           long long lo, long long hi, bool vec) {
  for (long long e = lo + 4LL * threadIdx.x; e < hi; e += 4LL * THREADS)
    tb_copy_group_async(&chunk[(e - lo) / 4], src, e, vec);
}

// The groups of [lo, hi) a thread passes over (TB_PASS), from the chunk in
// shared memory: t[4] the group at e, and per element i, ok and w as
// cluster_row.cuh's TB_FOR_CHUNK_ELEMENTS makes them.
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

// The output of [lo, hi) to `orow` from the chunk in shared memory and the
// row's finished statistics f; `then` (a statement) follows each group's
// stores, once its shared group has been read.
#define TB_SHARED_OUTPUT_PASS(Op, f, orow, ovec, then)                                   \
  TB_PASS(e, lo, hi, THREADS) {                                                          \
    const float4 q4 = tb_chunk[(e - lo) / 4];                                            \
    const float t[4] = {q4.x, q4.y, q4.z, q4.w};                                         \
    TB_LOAD_PARAMS(Op, p, e)                                                             \
    TB_OUTPUT_GROUP(Op, output, orow, e, ovec, f, p, t[i])                               \
    then                                                                                 \
  }
