
// ---- row reductions: helpers every mapping shares ----------------------
// The plan's constants precede this text: M (rows, long long), N (row length,
// an int so the masks `e + i < N` compare 32-bit indices), SX (row stride),
// EPS where the operation has one.

static __device__ __forceinline__ float tb_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The row sum, for register rows' reduction sites (TB_ROW_REDUCE).
struct tb_sum_reduction {
  static __device__ __forceinline__ float warp(float v) { return tb_warp_sum(v); }
  static __device__ __forceinline__ float combine(float a, float b) { return a + b; }
  static __device__ __forceinline__ float identity() { return 0.0f; }
};

// The statistics of an operator whose row needs one running sum (sum,
// rmsnorm): one float, merged by addition. Such an operator derives from this
// and says only how an element is accumulated and what the sum gives.
struct tb_one_sum_stats {
  enum { words = 1 };
  struct stats {
    float a0;
  };
  static __device__ __forceinline__ stats init() { return {0.0f}; }
  static __device__ __forceinline__ void warp_merge(stats &s) { s.a0 = tb_warp_sum(s.a0); }
  static __device__ __forceinline__ void merge(stats &s, const stats &o) { s.a0 += o.a0; }
  template <class Index> static __device__ __forceinline__ stats load(const float *p, Index at) {
    return {p[at + 0]};
  }
  template <class Index>
  static __device__ __forceinline__ void store(const stats &s, float *p, Index at) {
    p[at + 0] = s.a0;
  }
};

// A block barrier by site number. The generator defines one specialization
// per site of the mapping (reduction.c), so the text holds exactly one block
// barrier per site (the audit counts them against the plan); a site used but
// not defined fails to link.
template <int site> __device__ void tb_barrier();

// A weight and bias group of 4 (only what the operation reads is loaded).
struct tb_params {
  float w[4], b[4];
};

// Index arithmetic is written where it is used, by these macros, not passed
// to functions: NVVM simplifies a function before inlining it, and a bounds
// test simplified without the caller's facts about the index (e = 4 * lane,
// lo a multiple of 4, ...) compiles to other instructions and registers than
// the same test in place. The operators' members take values only.

// t[4] = the 4 elements at e of row `src`, zero past the row end and where
// `guard` (a condition and &&, or nothing) fails; 16 bytes at once when the
// row is aligned (`vec`).
#define TB_LOAD4(t, src, e, vec, guard)                                                  \
  float t[4];                                                                            \
  if (vec && guard e + 3 < N) {                                                          \
    const float4 q4 = *reinterpret_cast<const float4 *>(src + e);                        \
    t[0] = q4.x; t[1] = q4.y; t[2] = q4.z; t[3] = q4.w;                                  \
  } else {                                                                               \
    _Pragma("unroll") for (int i = 0; i < 4; ++i) t[i] = guard e + i < N ? src[e + i] : 0.0f; \
  }

// How an output is stored: plainly, or (STREAMING_STORES, emitted as 1 where
// the plan wants the caches kept for what is read again) marked as written
// once, first to leave L2. TB_ST4 stores a float4 by one 16-byte instruction:
// a plain `*p = float4` is split by NVVM into 4 scalar stores, and its
// vectorizer joins them again only where it can still prove the alignment
// (it did not for cluster rows' groups, nor for the first group of a subwarp
// or register row: 4 stores of 4 bytes a lane there, 16 bytes apart).
// __stwb is the plain store (write-back) as one instruction.
#ifndef STREAMING_STORES
#define STREAMING_STORES 0
#endif
#if STREAMING_STORES
#define TB_ST(p, v) __stcs(p, v)
#define TB_ST4(p, v) __stcs(p, v)
#else
#define TB_ST(p, v) (*(p) = (v))
#define TB_ST4(p, v) __stwb(p, v)
#endif

// Stores r[4] at e of `dst`, 16 bytes at once when aligned (`ovec`), masked
// at the row end.
#define TB_STORE4(dst, e, ovec, r)                                                       \
  if (ovec && e + 3 < N) {                                                               \
    TB_ST4(reinterpret_cast<float4 *>(dst + e), make_float4(r[0], r[1], r[2], r[3]));    \
  } else {                                                                               \
    _Pragma("unroll") for (int i = 0; i < 4; ++i) if (e + i < N) TB_ST(dst + e + i, r[i]); \
  }

// p = the weight (and bias) group at e, what operator Op reads (16-byte
// loads: the vectors are packed and e is a multiple of 4); TB_PARAMS_GROUP
// where the group lies inside the row (p any lvalue, already declared).
#define TB_PARAMS_GROUP(Op, p, e)                                                        \
  if constexpr (Op::has_weight) {                                                        \
    const float4 tb_w4 = *reinterpret_cast<const float4 *>(weight + (e));                \
    (p).w[0] = tb_w4.x; (p).w[1] = tb_w4.y; (p).w[2] = tb_w4.z; (p).w[3] = tb_w4.w;      \
    if constexpr (Op::has_bias) {                                                        \
      const float4 tb_b4 = *reinterpret_cast<const float4 *>(bias + (e));                \
      (p).b[0] = tb_b4.x; (p).b[1] = tb_b4.y; (p).b[2] = tb_b4.z; (p).b[3] = tb_b4.w;    \
    }                                                                                    \
  }
#define TB_LOAD_PARAMS(Op, p, e)                                                         \
  tb_params p;                                                                           \
  if constexpr (Op::has_weight) {                                                        \
    if (e + 3 < N) {                                                                     \
      TB_PARAMS_GROUP(Op, p, e)                                                          \
    } else {                                                                             \
      _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                    \
        p.w[i] = e + i < N ? weight[e + i] : 0.0f;                                       \
        if constexpr (Op::has_bias) p.b[i] = e + i < N ? bias[e + i] : 0.0f;             \
      }                                                                                  \
    }                                                                                    \
  }

// The output group at e of `orow`: r[i] = Op::output (or the member named
// `output`) of v = `value` (an expression of i), the row's finished
// statistics f and the group's parameters p.
#define TB_OUTPUT_GROUP(Op, output, orow, e, ovec, f, p, value)                          \
  {                                                                                      \
    float r[4];                                                                          \
    _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                      \
      const float v = value;                                                             \
      r[i] = Op::output(v, f, p, i);                                                     \
    }                                                                                    \
    TB_STORE4(orow, e, ovec, r)                                                          \
  }
