
// ---- mapping: persistent rows (one cooperative launch) -------------------
// For rows too long for a cluster's chunks in shared memory. ROW_GROUPS
// groups of K blocks, every block resident at once (the launch is
// cooperative); block b is chunk b % K of the rows of group g = b / K: rows
// g, g + ROW_GROUPS, ... one at a time. The block keeps its chunk of the
// current row in shared memory (shared_chunk.cuh: read once), publishes the
// chunk's statistics in the workspace and waits at its group's barrier for
// the other K - 1; then every block merges the row's K statistics and writes
// its chunk from shared memory, copying the next row's chunk into each group
// as soon as it is written and reducing those copies as they land, so the
// group's reads and reduction of row r + ROW_GROUPS overlap its writes of
// row r. The copies and the output's stores are marked as streamed once
// (STREAMED_ONCE, STREAMING_STORES), so that L2 keeps the weight and bias,
// which every row reads again.
//
// The workspace (zeroed when it is allocated): ROW_GROUPS arrival counters,
// ROW_GROUPS departure counters, then each group's statistics, two rows of K
// (a row's slot is rewritten two rows later, when every block of the group
// has passed the barrier of the row between, so after it read them). The
// last block of a group to leave puts both counters back to 0 for the next
// launch. A barrier that never completes (a block not resident) traps after
// TB_SPIN_LIMIT polls instead of hanging the device.
#define TB_SPIN_LIMIT (1u << 25)

static __device__ __forceinline__ unsigned tb_load_acquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Thread 0 of each block: this block's statistics, already stored, released
// with its arrival; then waits until `target` arrivals (K a row so far).
static __device__ __forceinline__ void tb_group_barrier(unsigned *arrived, unsigned target) {
  __threadfence();
  atomicAdd(arrived, 1u);
  for (unsigned polls = 0; tb_load_acquire(arrived) < target;)
    if (++polls == TB_SPIN_LIMIT) __trap();
}

// Stats k of a row's slot, read from L2: the slot was written by other
// multiprocessors since this one last read it.
template <class Op>
static __device__ __forceinline__ typename Op::stats tb_load_partial(const float *slot,
                                                                      long long k) {
  float v[Op::words];
  _Pragma("unroll") for (int w = 0; w < Op::words; ++w) v[w] = __ldcg(slot + k * Op::words + w);
  return Op::load(v, 0);
}

// Merges group e's elements (zero past the row end) into s: the group's own
// statistics first, in the passes of the operator's chunk, so the reduction
// can run group by group as the copies land.
template <class Op>
static __device__ __forceinline__ void tb_merge_group(typename Op::stats &s, const float4 q4,
                                                      long long e) {
  const float t[4] = {q4.x, q4.y, q4.z, q4.w};
  typename Op::stats g = Op::init();
  _Pragma("unroll") for (int i = 0; i < 4; ++i) Op::chunk_first(g, t[i], e + i < N, e + i < N);
  if constexpr (Op::chunk_passes == 2) {
    Op::chunk_between(g);
    _Pragma("unroll") for (int i = 0; i < 4; ++i) Op::chunk_second(g, t[i], e + i < N, e + i < N);
  }
  Op::merge(s, g);
}

// Groups a thread has copied but not yet reduced while it writes a row: the
// copies of the next row stay this many groups ahead of its reduction.
#define TB_STATS_LAG 4

template <class Op>
static __device__ __forceinline__ void tb_persistent_row(const float *__restrict__ x,
                                                         const float *__restrict__ weight,
                                                         const float *__restrict__ bias,
                                                         float *__restrict__ out,
                                                         float *__restrict__ workspace) {
  const long long group = blockIdx.x / K, chunk = blockIdx.x % K;
  const long long lo = chunk * CHUNK, hi = lo + CHUNK < N ? lo + CHUNK : N;
  const long long step = 4LL * THREADS; // from one of a thread's groups to the next
  unsigned *arrived = reinterpret_cast<unsigned *>(workspace) + group;
  unsigned *departed = reinterpret_cast<unsigned *>(workspace) + ROW_GROUPS + group;
  float *slots = workspace + 2 * ROW_GROUPS + group * 2 * K * Op::words;
  extern __shared__ float4 tb_chunk[];
  // s: the thread's statistics of its groups of the group's current row
  typename Op::stats s = Op::init();
  if (group < M) {
    const float *xr = x + group * SX;
    tb_copy_chunk_async(tb_chunk, xr, lo, hi, tb_aligned16(xr));
    asm volatile("cp.async.wait_all;" ::: "memory");
    TB_PASS(e, lo, hi, THREADS) tb_merge_group<Op>(s, tb_chunk[(e - lo) / 4], e);
  }
  unsigned trip = 0;
  for (long long row = group; row < M; row += ROW_GROUPS, ++trip) {
    float *slot = slots + (trip & 1) * K * Op::words;
    {
      TB_BLOCK_COMBINE(Op, s, THREADS, 0)
      if (threadIdx.x == 0) {
        Op::store(s, slot, chunk * Op::words);
        tb_group_barrier(arrived, (unsigned)K * (trip + 1));
      }
    }
    tb_barrier<1>();
    // the row's K statistics, merged by the block (a fixed order: every
    // block of the group gets the same bits)
    typename Op::finished f;
    {
      typename Op::stats r = Op::init();
      for (long long k = threadIdx.x; k < K; k += THREADS)
        Op::merge(r, tb_load_partial<Op>(slot, k));
      TB_BLOCK_COMBINE(Op, r, THREADS, 2)
      f = Op::finish(r);
    }
    float *orow = out + row * N;
    const bool ovec = tb_aligned16(orow);
    const long long next = row + ROW_GROUPS;
    s = Op::init();
    if (next < M) {
      // each group written, then its slot refilled from the next row; the
      // group TB_STATS_LAG copies back reduced once it has landed
      const float *nx = x + next * SX;
      const bool nvec = tb_aligned16(nx);
      TB_SHARED_OUTPUT_PASS(Op, f, orow, ovec, {
        tb_copy_group_async(&tb_chunk[(e - lo) / 4], nx, e, nvec);
        asm volatile("cp.async.commit_group;" ::: "memory");
        const long long back = e - step * TB_STATS_LAG;
        if (back >= lo) {
          asm volatile("cp.async.wait_group %0;" ::"n"(TB_STATS_LAG) : "memory");
          tb_merge_group<Op>(s, tb_chunk[(back - lo) / 4], back);
        }
      })
      asm volatile("cp.async.wait_all;" ::: "memory");
      for (long long e = lo + 4LL * threadIdx.x; e < hi; e += step)
        if (e + step * TB_STATS_LAG >= hi) tb_merge_group<Op>(s, tb_chunk[(e - lo) / 4], e);
    } else {
      TB_SHARED_OUTPUT_PASS(Op, f, orow, ovec, {})
    }
  }
  if (threadIdx.x == 0 && atomicAdd(departed, 1u) == (unsigned)K - 1) {
    *arrived = 0;
    *departed = 0;
  }
}

// Two blocks an SM: the plan counts on them being resident together.
extern "C" __global__ void __launch_bounds__(THREADS, 2) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_persistent_row<tb_row_op>(x, weight, bias, out, workspace);
}
