
// ---- a row's chunk in dynamic shared memory (cluster and persistent rows) -
// Each thread copies its groups with cp.async, all in flight at once (no
// registers between, so the whole chunk is requested however few warps the
// shared memory leaves an SM), waits for its own copies and reads them back:
// a thread reads back only what it copied itself, so no barrier is needed.

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

// The output group at e of `orow` from q4, the group as shared memory holds
// it, and the row's finished statistics f.
#define TB_OUTPUT_FROM_SHARED(Op, f, orow, ovec, e, q4)                                  \
  {                                                                                      \
    const float4 q = q4;                                                                 \
    const float t[4] = {q.x, q.y, q.z, q.w};                                             \
    TB_LOAD_PARAMS(Op, p, e)                                                             \
    TB_OUTPUT_GROUP(Op, output, orow, e, ovec, f, p, t[i])                               \
  }

// The output of a chunk [lo, hi) that shared memory holds (tb_chunk[(e - lo) / 4]
// is group e), from the row's finished statistics f: batches of
// TB_SHARED_OUTPUT_BATCH groups a thread whose weight (and bias) groups are
// all loaded before the first output, then the groups left one by one. One
// group a trip waited out each weight load's latency from L2 in turn, and at
// the two blocks an SM that 96 KiB chunks leave, that kept the norms' output
// passes behind streaming the row twice (docs/planner.md).
#define TB_SHARED_OUTPUT_BATCH 8
#define TB_OUTPUT_PASS_FROM_SHARED(Op, f, orow, ovec)                                    \
  {                                                                                      \
    constexpr long long stride = 4LL * THREADS;                                          \
    long long e = lo + 4LL * threadIdx.x;                                                \
    if constexpr (Op::has_weight) {                                                      \
      TB_WHOLE_BATCHES(e, TB_SHARED_OUTPUT_BATCH, stride, hi) {                          \
        tb_params p[TB_SHARED_OUTPUT_BATCH];                                             \
        _Pragma("unroll") for (int u = 0; u < TB_SHARED_OUTPUT_BATCH; ++u) {             \
          TB_PARAMS_GROUP(Op, p[u], e + stride * u)                                      \
        }                                                                                \
        _Pragma("unroll") for (int u = 0; u < TB_SHARED_OUTPUT_BATCH; ++u) {             \
          const long long g = e + stride * u;                                            \
          const float4 q = tb_chunk[(g - lo) / 4];                                       \
          const float t[4] = {q.x, q.y, q.z, q.w};                                       \
          TB_OUTPUT_GROUP(Op, output, orow, g, ovec, f, p[u], t[i])                      \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
    for (; e < hi; e += stride) TB_OUTPUT_FROM_SHARED(Op, f, orow, ovec, e, tb_chunk[(e - lo) / 4]) \
  }
