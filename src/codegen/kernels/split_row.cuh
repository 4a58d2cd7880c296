
// ---- mapping: split rows (two launches) ----------------------------------
// Each row is split into K chunks of CHUNK elements, one block of THREADS
// threads each. Launch 1 (tb_partials) writes each chunk's statistics to
// workspace[(row * K + chunk) * words]; launch 2 (tb_finish, FINISH_THREADS a
// block) merges a row's K partials in chunk order and writes its chunk, or,
// for an operation with one value a row, one thread a row adds the K values.

template <class Op>
static __device__ __forceinline__ void tb_split_partials(const float *__restrict__ x,
                                                         float *__restrict__ workspace) {
  TB_CHUNK_BOUNDS
  TB_STAT_PASS(Op, s, lo, hi, THREADS)
  TB_BLOCK_COMBINE(Op, s, THREADS, 0)
  if (threadIdx.x == 0) {
    float *p = workspace + (row * K + chunk) * Op::words;
    Op::store(s, p, 0);
  }
}

template <class Op>
static __device__ __forceinline__ void tb_split_finish(const float *__restrict__ x,
                                                       const float *__restrict__ weight,
                                                       const float *__restrict__ bias,
                                                       float *__restrict__ out,
                                                       float *__restrict__ workspace) {
  if constexpr (!Op::has_row_output) {
    const long long row = (long long)blockIdx.x * FINISH_THREADS + threadIdx.x;
    if (row >= M) return;
    typename Op::stats s = Op::init();
    for (long long k = 0; k < K; ++k) Op::merge(s, Op::load(workspace, row * K + k));
    out[row] = Op::row_value(Op::finish(s));
  } else {
    TB_CHUNK_BOUNDS
    const float *p = workspace + row * K * Op::words;
    const typename Op::stats s = tb_merge_partials<Op>(p);
    const typename Op::finished f = Op::finish(s);
    TB_OUTPUT_PASS(Op, f, lo, hi, FINISH_THREADS)
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) tb_partials(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_split_partials<tb_row_op>(x, workspace);
}

extern "C" __global__ void __launch_bounds__(FINISH_THREADS) tb_finish(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_split_finish<tb_row_op>(x, weight, bias, out, workspace);
}
