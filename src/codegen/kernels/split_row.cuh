
// ---- mapping: split rows -------------------------------------------------
// Each row is split into K chunks of CHUNK elements, one block of THREADS
// threads each, that reduces its chunk to statistics in
// workspace[(row * K + chunk) * words].
//
// A row output (ROW_OUTPUT 1), two launches: launch 1 (tb_partials) writes the
// statistics; launch 2 (tb_finish, FINISH_THREADS a block, one block a chunk)
// merges its row's K statistics in chunk order and writes its chunk.
//
// One value a row (ROW_OUTPUT 0), one launch (tb_main): a block that has
// written its statistics takes a ticket from its row's counter (M counters
// after the statistics, zeroed when the case is loaded); the block that takes
// the K-th merges the row's K statistics and writes the value, so no second
// launch waits for the grid to drain, and puts the counter back to 0 for the
// next launch.
#if ROW_OUTPUT
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
  TB_CHUNK_BOUNDS
  const float *p = workspace + row * K * Op::words;
  const typename Op::stats s = tb_merge_partials<Op>(p);
  const typename Op::finished f = Op::finish(s);
  TB_OUTPUT_PASS(Op, f, lo, hi, FINISH_THREADS)
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

#else

// The row's K statistics merged by the block: thread t's k = t, t + THREADS,
// ..., then the warps' as a tree (a fixed order: the same bits every run).
template <class Op>
static __device__ __forceinline__ typename Op::stats tb_merge_row_partials(const float *slots) {
  typename Op::stats r = Op::init();
  for (long long k = threadIdx.x; k < K; k += THREADS) Op::merge(r, tb_load_partial<Op>(slots, k));
  TB_BLOCK_COMBINE_TREE(Op, r, THREADS, 2)
  return r;
}

template <class Op>
static __device__ __forceinline__ void tb_split_row_value(const float *__restrict__ x,
                                                          float *__restrict__ out,
                                                          float *__restrict__ workspace) {
  TB_CHUNK_BOUNDS
  float *slots = workspace + row * K * Op::words;
  unsigned *ticket = reinterpret_cast<unsigned *>(workspace + M * K * Op::words) + row;
  __shared__ unsigned tb_last_block;
  {
    TB_STAT_PASS(Op, s, lo, hi, THREADS)
    TB_BLOCK_COMBINE(Op, s, THREADS, 0)
    if (threadIdx.x == 0) {
      Op::store(s, slots, chunk * Op::words);
      __threadfence(); // the statistics visible before the ticket is taken
      tb_last_block = atomicAdd(ticket, 1u) == (unsigned)(K - 1);
      __threadfence(); // and the other blocks' read after it
    }
  }
  tb_barrier<1>();
  if (!tb_last_block) return;
  const typename Op::stats r = tb_merge_row_partials<Op>(slots);
  if (threadIdx.x == 0) {
    out[row] = Op::row_value(Op::finish(r));
    *ticket = 0;
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_split_row_value<tb_row_op>(x, out, workspace);
}
#endif
