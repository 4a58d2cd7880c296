
// ---- operation: rmsnorm, out = x / sqrt(mean(x^2) + EPS) * weight ---------
// (the members as sum.cuh's comment lists them)
struct tb_rmsnorm : tb_one_sum_stats { // the sum of squares
  enum { has_row_output = 1, has_weight = 1, has_bias = 0 };
  struct finished {
    float inv;
  };
  static __device__ __forceinline__ void accumulate(stats &s, float val) { s.a0 += val * val; }
  static __device__ __forceinline__ finished finish(const stats &s) {
    return {rsqrtf(s.a0 / (float)N + EPS)};
  }
  static __device__ __forceinline__ float output(float v, const finished &f, const tb_params &p,
                                                 int i) {
    return v * f.inv * p.w[i];
  }
  static __device__ __forceinline__ float register_row_output(float v, const finished &f,
                                                              const tb_params &p, int i) {
    return output(v, f, p, i);
  }

  using first_reduction = tb_sum_reduction;
  enum { register_passes = 1, chunk_passes = 1 };
  static __device__ __forceinline__ float register_first_init() { return 0.0f; }
  enum { register_first_masked = 0 };
  static __device__ __forceinline__ float register_first(float acc, float v) { return acc + v * v; }
  static __device__ __forceinline__ finished register_finish(float first, float, float) {
    return finish({first});
  }
  static __device__ __forceinline__ void chunk_first(stats &s, float v, bool, float) {
    s.a0 += v * v;
  }
};
