
// ---- operation: layernorm, out = (x - mean) / sqrt(var + EPS) * weight + bias
// (the members as in tb_sum's comment)
// Welford/Chan merge of (count, mean, M2). The counts' ratio by the fast
// division (2 ulp): merges are chained (a warp's, a block's, a cluster's), and
// the IEEE division's longer sequence is on that chain, while 2 ulp of the
// weight of one mean's correction is far below the float sums' own error.
// EVEN_COUNTS (emitted, as 1, for a cluster row whose every thread holds a
// full share of the row: reduction.c): every merge joins two equal counts, so
// the ratio is exactly 1/2 and no division is on the chain (the general
// merge's bits where the counts are powers of two).
#ifndef EVEN_COUNTS
#define EVEN_COUNTS 0
#endif
static __device__ __forceinline__ void tb_welford_merge(float &c, float &mu, float &q, float c2,
                                                        float mu2, float q2) {
#if EVEN_COUNTS
  const float d = mu2 - mu;
  mu += d * 0.5f; q += q2 + d * d * c * 0.5f; c += c; // c2 == c: not waited for
#else
  float n = c + c2;
  if (n == 0.0f) return;
  float d = mu2 - mu, f = __fdividef(c2, n);
  mu += d * f; q += q2 + d * d * c * f; c = n;
#endif
}

struct tb_layernorm {
  enum { has_row_output = 1, has_weight = 1, has_bias = 1, words = 3 };
  struct stats {
    float c0, mu0, q0; // count, mean, sum of squared deviations (M2)
  };
  struct finished {
    float mean, inv;
  };
  static __device__ __forceinline__ stats init() { return {0.0f, 0.0f, 0.0f}; }
  static __device__ __forceinline__ void accumulate(stats &s, float val) {
    { s.c0 += 1.0f; const float d = val - s.mu0; s.mu0 += d / s.c0; s.q0 += d * (val - s.mu0); }
  }
  static __device__ __forceinline__ void warp_merge(stats &s) {
    for (int o = 16; o > 0; o >>= 1) {
#if EVEN_COUNTS
      const float c2 = s.c0; // every lane's count is the same
#else
      const float c2 = __shfl_xor_sync(0xffffffffu, s.c0, o);
#endif
      const float mu2 = __shfl_xor_sync(0xffffffffu, s.mu0, o);
      const float q2 = __shfl_xor_sync(0xffffffffu, s.q0, o);
      tb_welford_merge(s.c0, s.mu0, s.q0, c2, mu2, q2);
    }
  }
  static __device__ __forceinline__ void merge(stats &s, const stats &o) {
    tb_welford_merge(s.c0, s.mu0, s.q0, o.c0, o.mu0, o.q0);
  }
  template <class Index> static __device__ __forceinline__ stats load(const float *p, Index at) {
    return {p[at + 0], p[at + 1], p[at + 2]};
  }
  template <class Index>
  static __device__ __forceinline__ void store(const stats &s, float *p, Index at) {
    p[at + 0] = s.c0; p[at + 1] = s.mu0;
    p[at + 2] = s.q0;
  }
  static __device__ __forceinline__ finished finish(const stats &s) {
    return {s.mu0, rsqrtf(s.q0 / (float)N + EPS)};
  }
  static __device__ __forceinline__ float output(float v, const finished &f, const tb_params &p,
                                                 int i) {
    return (v - f.mean) * f.inv * p.w[i] + p.b[i];
  }

  // Register rows: the row sum, then the squared deviations from its mean.
  using first_reduction = tb_sum_reduction;
  enum { register_passes = 2, chunk_passes = 2 };
  static __device__ __forceinline__ float register_first_init() { return 0.0f; }
  enum { register_first_masked = 0, register_caches_term = 0 };
  static __device__ __forceinline__ float register_first(float acc, float v) { return acc + v; }
  static __device__ __forceinline__ float register_between(float sum) { return sum / (float)N; }
  static __device__ __forceinline__ float register_term(float cached, float mean) {
    return cached - mean;
  }
  static __device__ __forceinline__ float register_second(float d) { return d * d; }
  static __device__ __forceinline__ finished register_finish(float, float mean, float squares) {
    return {mean, rsqrtf(squares / (float)N + EPS)};
  }
  static __device__ __forceinline__ float register_row_output(float v, const finished &f,
                                                              const tb_params &p, int i) {
    return output(v, f, p, i);
  }

  // A chunk in registers: independent operations (a count and mean, then
  // squares) instead of the streamed updates' chain. The mask is the weight
  // w, not ok: a select on the bool parameter compiles to more registers
  // (cluster_row.cuh, TB_FOR_CHUNK_ELEMENTS).
  static __device__ __forceinline__ void chunk_first(stats &s, float v, bool, float w) {
    s.c0 += w; s.mu0 += v;
  }
  static __device__ __forceinline__ void chunk_between(stats &s) {
#if EVEN_COUNTS
    s.mu0 /= (float)(4 * ITERS); // a constant: a multiply where that is exact
#else
    s.mu0 = s.c0 > 0.0f ? s.mu0 / s.c0 : 0.0f;
#endif
  }
  static __device__ __forceinline__ void chunk_second(stats &s, float v, bool, float w) {
    const float d = w != 0.0f ? v - s.mu0 : 0.0f;
    s.q0 += d * d;
  }
};
