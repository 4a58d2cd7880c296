
// ---- mapping: persistent rows (one cooperative launch) -------------------
// For rows too long for a cluster's chunks in shared memory. ROW_GROUPS
// groups of K blocks, every block resident at once (the launch is
// cooperative); block b is chunk b % K of the rows of group g = b / K: rows
// g, g + ROW_GROUPS, ... one at a time. The block keeps its chunk of the
// current row in shared memory (shared_chunk.cuh: read once), publishes the
// chunk's statistics in the workspace and waits at its group's barrier for
// the other K - 1; then every block merges the row's K statistics and writes
// its chunk from shared memory. The next row's chunk is copied ahead: its
// first groups into free slots of a ring before the barrier, the rest into
// each slot as soon as it is written, and reduced as the copies land, so the
// group's reads and reduction of row r + ROW_GROUPS overlap its barrier and
// its writes of row r. The copies and the output's stores are marked as
// streamed once (STREAMED_ONCE, STREAMING_STORES), so that L2 keeps the
// weight and bias, which every row reads again.
//
// The workspace (zeroed when the case is loaded): ROW_GROUPS arrival counters
// of 64 bits, then each group's statistics, two rows of K (a row's slot is
// rewritten two rows later, when every block of the group has passed the
// barrier of the row between, so after it read them). A group's counter is
// never put back: every launch adds K arrivals a row of the group, so a
// launch finds it at a whole number of launches' arrivals, and each block
// reads that base before its own first arrival (tb_arrivals_before). A
// departure counter that let the last block reset it cost every block an
// atomic's round trip before it could exit. A barrier that never completes
// (a block not resident) traps after TB_SPIN_LIMIT polls instead of hanging
// the device.
#define TB_SPIN_LIMIT (1u << 25)

static __device__ __forceinline__ unsigned long long tb_load_acquire(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Thread 0 of each block, before its first arrival: the arrivals of the
// group's earlier launches, `per_launch` each. The counter now holds them
// plus at most K - 1 arrivals of this launch (its first barrier needs this
// block), so rounding down to a whole launch gives them.
static __device__ __forceinline__ unsigned long long tb_arrivals_before(
    const unsigned long long *arrived, unsigned long long per_launch) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(arrived) : "memory");
  return v - v % per_launch;
}

// Thread 0 of each block: this block's statistics, already stored, released
// with its arrival; then waits until the counter reaches `target`.
static __device__ __forceinline__ void tb_group_barrier(unsigned long long *arrived,
                                                        unsigned long long target) {
  __threadfence();
  atomicAdd(arrived, 1ull);
  for (unsigned polls = 0; tb_load_acquire(arrived) < target;)
    if (++polls == TB_SPIN_LIMIT) __trap();
}

// The statistics of group e's elements t (zero past the row end), in the
// passes of the operator's chunk; `masked` where the group may cross the row
// end (its last group only): a whole group's elements need no test each (a
// branch an element, as softmax's masked maximum compiles).
template <class Op, bool masked>
static __device__ __forceinline__ typename Op::stats tb_group_stats(const float (&t)[4],
                                                                    long long e) {
  typename Op::stats g = Op::init();
  _Pragma("unroll") for (int i = 0; i < 4; ++i) {
    const bool ok = !masked || e + i < N;
    Op::chunk_first(g, t[i], ok, ok ? 1.0f : 0.0f);
  }
  if constexpr (Op::chunk_passes == 2) {
    Op::chunk_between(g);
    _Pragma("unroll") for (int i = 0; i < 4; ++i) {
      const bool ok = !masked || e + i < N;
      Op::chunk_second(g, t[i], ok, ok ? 1.0f : 0.0f);
    }
  }
  return g;
}

// Merges group e's elements into s: the group's own statistics first, so the
// reduction can run group by group as the copies land.
template <class Op>
static __device__ __forceinline__ void tb_merge_group(typename Op::stats &s, const float4 q4,
                                                      long long e) {
  const float t[4] = {q4.x, q4.y, q4.z, q4.w};
  Op::merge(s, e + 3 < N ? tb_group_stats<Op, false>(t, e) : tb_group_stats<Op, true>(t, e));
}

// A thread's groups of a chunk: group k is element lo + 4 * (threadIdx.x +
// k * THREADS), k < GROUPS. Shared memory is a ring of RING slots a thread
// (slot j at tb_ring[j * THREADS + threadIdx.x]); a row's groups take GROUPS
// consecutive slots from its base, so the next row's first RING - GROUPS
// groups have slots free before this row is written.
static __device__ __forceinline__ int tb_ring_slot(int base, int k) {
  return base + k < RING ? base + k : base + k - RING;
}

// PARAMS_AHEAD (emitted as 1 where every group takes one row and the ring
// has room for the weight's and bias's groups beside the chunk's): they are
// copied into slots GROUPS .. (bias: 2 * GROUPS ..) with the chunk, so their
// reads overlap the exchange instead of following it.
#ifndef PARAMS_AHEAD
#define PARAMS_AHEAD 0
#endif

// The output group k (at e) of a row whose weight and bias groups the ring
// holds (PARAMS_AHEAD: the only row, from slot 0).
#define TB_OUTPUT_WITH_RING_PARAMS(Op, f, orow, ovec, e, k)                              \
  {                                                                                      \
    const float4 q = mine[(k) * THREADS], w4 = mine[(GROUPS + (k)) * THREADS];           \
    const float4 b4 = Op::has_bias ? mine[(2 * GROUPS + (k)) * THREADS] : w4;           \
    const float t[4] = {q.x, q.y, q.z, q.w};                                             \
    const tb_params p = {{w4.x, w4.y, w4.z, w4.w}, {b4.x, b4.y, b4.z, b4.w}};            \
    TB_OUTPUT_GROUP(Op, output, orow, e, ovec, f, p, t[i])                               \
  }

// The thread's statistics s of its groups of the group's first row, whose
// whole chunk has landed: in the passes of the operator's chunk over all the
// groups at once (softmax: the maximum, then one exponential an element),
// not merged group by group as the later rows' are while their copies land
// (an online merge costs softmax an exponential more a group). Each element's
// test `ok` only in a group that may cross the row end, as in tb_group_stats.
#define TB_EACH_OF_FOUR(OK, ...)                                                         \
  _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                        \
    OK;                                                                                  \
    __VA_ARGS__                                                                          \
  }
#define TB_FOR_FIRST_ROW_ELEMENTS(...)                                                   \
  _Pragma("unroll 4") for (int k = 0; k < GROUPS; ++k) {                                 \
    const long long e = first + k * step;                                                \
    if (e < hi) {                                                                        \
      const float4 q4 = mine[k * THREADS];                                               \
      const float t[4] = {q4.x, q4.y, q4.z, q4.w};                                       \
      if (e + 3 < N) {                                                                   \
        TB_EACH_OF_FOUR(constexpr bool ok = true, __VA_ARGS__)                           \
      } else {                                                                           \
        TB_EACH_OF_FOUR(const bool ok = e + i < N, __VA_ARGS__)                          \
      }                                                                                  \
    }                                                                                    \
  }
#define TB_FIRST_ROW_STATS(Op, s)                                                        \
  TB_FOR_FIRST_ROW_ELEMENTS(Op::chunk_first(s, t[i], ok, ok ? 1.0f : 0.0f);)             \
  if constexpr (Op::chunk_passes == 2) {                                                 \
    Op::chunk_between(s);                                                                \
    TB_FOR_FIRST_ROW_ELEMENTS(Op::chunk_second(s, t[i], ok, ok ? 1.0f : 0.0f);)          \
  }

template <class Op>
static __device__ __forceinline__ void tb_persistent_row(const float *__restrict__ x,
                                                         const float *__restrict__ weight,
                                                         const float *__restrict__ bias,
                                                         float *__restrict__ out,
                                                         float *__restrict__ workspace) {
  const long long group = blockIdx.x / K, chunk = blockIdx.x % K;
  const long long lo = chunk * CHUNK, hi = lo + CHUNK < N ? lo + CHUNK : N;
  const long long first = lo + 4LL * threadIdx.x, step = 4LL * THREADS; // group k: first + k * step
  unsigned long long *arrived = reinterpret_cast<unsigned long long *>(workspace) + group;
  float *slots = workspace + 2 * ROW_GROUPS + group * 2 * K * Op::words;
  extern __shared__ float4 tb_ring[];
  float4 *mine = tb_ring + threadIdx.x; // the thread's slot j: mine[j * THREADS]
  // s: the thread's statistics of its groups of the group's current row
  typename Op::stats s = Op::init();
  unsigned long long launched = 0; // (thread 0) the group's arrivals in earlier launches
  if (group < M) {
    // read first, so that its round trip overlaps the chunk's copy
    const long long rows = (M - group + ROW_GROUPS - 1) / ROW_GROUPS;
    if (threadIdx.x == 0) launched = tb_arrivals_before(arrived, (unsigned long long)(K * rows));
    const float *xr = x + group * SX;
    tb_copy_chunk_async(tb_ring, xr, lo, hi, tb_aligned16(xr)); // slots 0 .. GROUPS - 1
    if constexpr (PARAMS_AHEAD) {
      asm volatile("cp.async.commit_group;" ::: "memory");
      tb_copy_chunk_async(tb_ring + GROUPS * THREADS, weight, lo, hi, true);
      if constexpr (Op::has_bias) tb_copy_chunk_async(tb_ring + 2 * GROUPS * THREADS, bias, lo, hi, true);
      asm volatile("cp.async.commit_group;" ::: "memory");
      asm volatile("cp.async.wait_group 1;" ::: "memory"); // the chunk; its weight still in flight
    } else {
      asm volatile("cp.async.wait_all;" ::: "memory");
    }
    TB_FIRST_ROW_STATS(Op, s)
  }
  int base = 0; // the current row's group 0's slot
  unsigned trip = 0;
  for (long long row = group; row < M; row += ROW_GROUPS, ++trip) {
    const long long next = row + ROW_GROUPS;
    const float *nx = x + (next < M ? next : row) * SX;
    const bool nvec = tb_aligned16(nx);
    const int nbase = tb_ring_slot(base, GROUPS);
    // the next row's first groups into the free slots, in flight across the
    // barrier (one commit group each, empty or not: the waits below count them)
    if (next < M) {
      _Pragma("unroll") for (int k = 0; k < RING - GROUPS; ++k) {
        if (k < GROUPS && first + k * step < hi)
          tb_copy_group_async(&mine[tb_ring_slot(nbase, k) * THREADS], nx, first + k * step, nvec);
        asm volatile("cp.async.commit_group;" ::: "memory");
      }
    }
    float *slot = slots + (trip & 1) * K * Op::words;
    {
      TB_BLOCK_COMBINE_TREE(Op, s, THREADS, 0)
      if (threadIdx.x == 0) {
        Op::store(s, slot, chunk * Op::words);
        tb_group_barrier(arrived, launched + (unsigned long long)K * (trip + 1));
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
      TB_BLOCK_COMBINE_TREE(Op, r, THREADS, 2)
      f = Op::finish(r);
    }
    float *orow = out + row * N;
    const bool ovec = tb_aligned16(orow);
    if constexpr (PARAMS_AHEAD) asm volatile("cp.async.wait_all;" ::: "memory");
    s = Op::init();
    // group k written, its slot refilled with the next row's group
    // k + RING - GROUPS, and the next row's group k (copied RING - GROUPS
    // commit groups ago) reduced once it has landed (4 groups unrolled: more
    // keeps too many weight loads in flight for 128 registers)
    _Pragma("unroll 4") for (int k = 0; k < GROUPS; ++k) {
      const long long e = first + k * step;
      const int at = tb_ring_slot(base, k);
      if constexpr (PARAMS_AHEAD) {
        if (e < hi) TB_OUTPUT_WITH_RING_PARAMS(Op, f, orow, ovec, e, k)
      } else if (e < hi) TB_OUTPUT_FROM_SHARED(Op, f, orow, ovec, e, mine[at * THREADS])
      if (next < M) {
        const long long later = first + (k + RING - GROUPS) * step;
        if (k + RING - GROUPS < GROUPS && later < hi)
          tb_copy_group_async(&mine[at * THREADS], nx, later, nvec);
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group %0;" ::"n"(RING - GROUPS) : "memory");
        if (e < hi) tb_merge_group<Op>(s, mine[tb_ring_slot(nbase, k) * THREADS], e);
      }
    }
    base = nbase;
  }
}

// Two blocks an SM: the plan counts on them being resident together.
extern "C" __global__ void __launch_bounds__(THREADS, 2) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_persistent_row<tb_row_op>(x, weight, bias, out, workspace);
}
