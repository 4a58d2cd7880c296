
// ---- operation: sum, out[row] = sum_j x[row, j] -------------------------
// An operator is a struct of static members the mapping templates call;
// each takes values (elements, statistics), never indices (row_common.cuh
// says why).
//   has_row_output, has_weight, has_bias, words   (enumerators, not static
//       members: those would be variables in the module)
//   stats            a thread's, block's or chunk's partial statistics;
//                    `words` floats in shared memory or the workspace (one
//                    running sum: derive from tb_one_sum_stats, row_common.cuh)
//   init, accumulate the statistics streamed, element by element
//   warp_merge       the 32 lanes' statistics merged by a shuffle tree
//   merge            two partials merged (the mappings fix the order)
//   load, store      `stats` as `words` floats at p[at]
//   finished, finish what the output needs, from the row's statistics
//   output           an output element, or row_value: the row's one value
//   register rows (the row cached in registers): a first pass over the
//       cache (acc = register_first(acc, v) from register_first_init, only
//       inside the row when register_first_masked, reduced across the row by
//       first_reduction), and with register_passes = 2 a second: the sum of
//       register_second(term), term = register_term(v, pivot) inside the
//       row (0 outside; it replaces v in the cache when
//       register_caches_term), pivot = register_between(first); then
//       register_finish, and register_row_output of what the cache holds
//   cluster rows with the chunk in registers: chunk_first, then with
//       chunk_passes = 2 chunk_between and chunk_second, each of (s, v, ok,
//       w): ok whether v lies inside the chunk and the row, w = ok ? 1 : 0
//       (use whichever compiles better: cluster_row.cuh says why both)
struct tb_sum : tb_one_sum_stats {
  enum { has_row_output = 0, has_weight = 0, has_bias = 0 };
  struct finished {
    float sum;
  };
  static __device__ __forceinline__ void accumulate(stats &s, float val) { s.a0 += val; }
  static __device__ __forceinline__ finished finish(const stats &s) { return {s.a0}; }
  static __device__ __forceinline__ float row_value(const finished &f) { return f.sum; }

  using first_reduction = tb_sum_reduction;
  enum { register_passes = 1, chunk_passes = 1 };
  static __device__ __forceinline__ float register_first_init() { return 0.0f; }
  enum { register_first_masked = 0 };
  static __device__ __forceinline__ float register_first(float acc, float v) { return acc + v; }
  static __device__ __forceinline__ finished register_finish(float first, float, float) {
    return {first};
  }
  static __device__ __forceinline__ void chunk_first(stats &s, float v, bool, float) { s.a0 += v; }
};
