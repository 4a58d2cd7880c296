
// ---- operation: softmax, out = exp(x - max) / sum exp(x - max) -------------
// (the members as in tb_sum's comment)
static __device__ __forceinline__ float tb_warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// The row maximum, for register rows' reduction sites (TB_ROW_REDUCE).
struct tb_max_reduction {
  static __device__ __forceinline__ float warp(float v) { return tb_warp_max(v); }
  static __device__ __forceinline__ float combine(float a, float b) { return fmaxf(a, b); }
  static __device__ __forceinline__ float identity() { return -TB_INF; }
};
// exp(x) as 2^(x log2 e) by one ex2.approx.ftz: __expf's ex2.approx without
// .ftz adds a scaling of subnormal results around it (3 more instructions an
// exponential); a result below 2^-126 flushed to zero moves no sum of at
// least 1 and no output by more than 2^-126.
static __device__ __forceinline__ float tb_exp(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}
// Online softmax pair (running max m, sum s of exp(x - m)).
static __device__ __forceinline__ void tb_softmax_merge(float &m, float &s, float m2, float s2) {
  if (m2 > m) { float t = m; m = m2; m2 = t; t = s; s = s2; s2 = t; }
  if (m2 != -TB_INF) s += s2 * tb_exp(m2 - m);
}

struct tb_softmax {
  enum { has_row_output = 1, has_weight = 0, has_bias = 0, words = 2 };
  struct stats {
    float m0, s0; // running max, sum of exp(x - m0)
  };
  struct finished {
    float mx, inv;
  };
  static __device__ __forceinline__ stats init() { return {-TB_INF, 0.0f}; }
  static __device__ __forceinline__ void accumulate(stats &s, float val) {
    if (val > s.m0) { s.s0 = s.s0 * tb_exp(s.m0 - val) + 1.0f; s.m0 = val; }
    else s.s0 += tb_exp(val - s.m0);
  }
  static __device__ __forceinline__ void warp_merge(stats &s) {
    for (int o = 16; o > 0; o >>= 1) {
      const float m2 = __shfl_xor_sync(0xffffffffu, s.m0, o);
      const float s2 = __shfl_xor_sync(0xffffffffu, s.s0, o);
      tb_softmax_merge(s.m0, s.s0, m2, s2);
    }
  }
  static __device__ __forceinline__ void merge(stats &s, const stats &o) {
    tb_softmax_merge(s.m0, s.s0, o.m0, o.s0);
  }
  template <class Index> static __device__ __forceinline__ stats load(const float *p, Index at) {
    return {p[at + 0], p[at + 1]};
  }
  template <class Index>
  static __device__ __forceinline__ void store(const stats &s, float *p, Index at) {
    p[at + 0] = s.m0; p[at + 1] = s.s0;
  }
  static __device__ __forceinline__ finished finish(const stats &s) { return {s.m0, 1.0f / s.s0}; }
  static __device__ __forceinline__ float output(float v, const finished &f, const tb_params &,
                                                 int) {
    return tb_exp(v - f.mx) * f.inv;
  }

  // Register rows: the row max, then the cache keeps exp(x - max) (zero past
  // the row end): one exponential per element, as the payload model's
  // private writes count; the output scales it.
  using first_reduction = tb_max_reduction;
  enum { register_passes = 2, chunk_passes = 2 };
  static __device__ __forceinline__ float register_first_init() { return -TB_INF; }
  enum { register_first_masked = 1, register_caches_term = 1 };
  static __device__ __forceinline__ float register_first(float acc, float v) {
    return fmaxf(acc, v);
  }
  static __device__ __forceinline__ float register_between(float max) { return max; }
  static __device__ __forceinline__ float register_term(float cached, float max) {
    return tb_exp(cached - max);
  }
  static __device__ __forceinline__ float register_second(float term) { return term; }
  static __device__ __forceinline__ finished register_finish(float, float max, float sum) {
    return {max, 1.0f / sum};
  }
  static __device__ __forceinline__ float register_row_output(float v, const finished &f,
                                                              const tb_params &, int) {
    return v * f.inv;
  }

  // A chunk in registers: independent operations (its max, then the
  // exponentials) instead of the streamed updates' chain.
  static __device__ __forceinline__ void chunk_first(stats &s, float v, bool ok, float) {
    if (ok) s.m0 = fmaxf(s.m0, v);
  }
  static __device__ __forceinline__ void chunk_between(stats &) {}
  static __device__ __forceinline__ void chunk_second(stats &s, float v, bool ok, float) {
    if (ok) s.s0 += tb_exp(v - s.m0);
  }
};
