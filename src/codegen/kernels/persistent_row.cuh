
// ---- mapping: persistent rows (one cooperative launch) -------------------
// For rows too long for a cluster's chunks in shared memory. ROW_GROUPS
// groups of K blocks, every block resident at once (the launch is
// cooperative); block b is chunk b % K of the rows of group g = b / K: rows
// g, g + ROW_GROUPS, ... one at a time. The block keeps its chunk of the
// current row in shared memory (shared_chunk.cuh: read once), publishes the
// chunk's statistics in the workspace and waits for the other K - 1 blocks';
// then every block merges the row's K statistics and writes its chunk from
// shared memory. The next row's chunk is copied ahead: its
// first groups into free slots of a ring before the exchange, the rest into
// each slot as soon as it is written, and reduced as the copies land, so the
// group's reads and reduction of row r + ROW_GROUPS overlap its exchange and
// its writes of row r. The copies and the output's stores are marked as
// streamed once (STREAMED_ONCE, STREAMING_STORES), so that L2 keeps the
// weight and bias, which every row reads again.
//
// The exchange carries no counter and no fence: each statistic travels as one
// 64-bit word, its float's bits beside the tag of the exchange it belongs to
// (a 64-bit access is single-copy atomic), so a block that reads a word with
// the tag it waits for holds that value. A row's barrier is thread 0 storing
// the block's words and every thread polling the words of its blocks until
// their tags match: one trip to L2 each way, where a counter took a fence, an
// atomic, the poll and then a read of the statistics.
//
// The workspace (zeroed when the case is loaded): each group's two rows of K
// blocks' Op::words tagged words (exchange t uses row t % 2: a block rewrites
// it two exchanges later, after every block of its group has passed the
// exchange between, so after they read it), then each block's tag of its last
// exchange, which the next launch counts on from. Every block of a group
// makes the same exchanges, so the group's blocks agree on every tag. A
// word whose tag never comes (a block not resident) traps after TB_SPIN_LIMIT
// polls instead of hanging the device.
#define TB_SPIN_LIMIT (1u << 25)

static __device__ __forceinline__ void tb_store_tagged(unsigned long long *p, float value,
                                                       unsigned tag) {
  const unsigned long long word = (unsigned long long)tag << 32 | __float_as_uint(value);
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(word) : "memory");
}

static __device__ __forceinline__ unsigned long long tb_load_tagged(const unsigned long long *p) {
  unsigned long long word;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(p) : "memory");
  return word;
}

// Thread 0 of each block: the block's statistics s, tagged.
template <class Op>
static __device__ __forceinline__ void tb_publish(unsigned long long *row, long long chunk,
                                                  const typename Op::stats &s, unsigned tag) {
  float v[Op::words];
  Op::store(s, v, 0);
  _Pragma("unroll") for (int w = 0; w < Op::words; ++w)
    tb_store_tagged(row + chunk * Op::words + w, v[w], tag);
}

// The statistics of this thread's blocks of exchange `tag` (k = threadIdx.x,
// threadIdx.x + THREADS, ...), merged in that order: every word read at once,
// again until each carries the tag, so that a thread with two blocks waits
// one trip, not two.
template <class Op>
static __device__ __forceinline__ typename Op::stats tb_await(const unsigned long long *row,
                                                             unsigned tag) {
  constexpr int blocks = (K + THREADS - 1) / THREADS;
  unsigned long long word[blocks][Op::words];
  for (unsigned polls = 0;; ++polls) {
    bool tagged = true;
    _Pragma("unroll") for (int j = 0; j < blocks; ++j) {
      const long long k = threadIdx.x + (long long)j * THREADS;
      _Pragma("unroll") for (int w = 0; w < Op::words; ++w) {
        word[j][w] = k < K ? tb_load_tagged(row + k * Op::words + w) : (unsigned long long)tag << 32;
      }
    }
    _Pragma("unroll") for (int j = 0; j < blocks; ++j) {
      _Pragma("unroll") for (int w = 0; w < Op::words; ++w) tagged &= (unsigned)(word[j][w] >> 32) == tag;
    }
    if (tagged) break;
    if (polls == TB_SPIN_LIMIT) __trap();
  }
  typename Op::stats r = Op::init();
  _Pragma("unroll") for (int j = 0; j < blocks; ++j) {
    if (threadIdx.x + (long long)j * THREADS >= K) break;
    float v[Op::words];
    _Pragma("unroll") for (int w = 0; w < Op::words; ++w) v[w] = __uint_as_float((unsigned)word[j][w]);
    Op::merge(r, Op::load(v, 0));
  }
  return r;
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

template <class Op>
static __device__ __forceinline__ void tb_persistent_row(const float *__restrict__ x,
                                                         const float *__restrict__ weight,
                                                         const float *__restrict__ bias,
                                                         float *__restrict__ out,
                                                         float *__restrict__ workspace) {
  const long long group = blockIdx.x / K, chunk = blockIdx.x % K;
  const long long lo = chunk * CHUNK, hi = lo + CHUNK < N ? lo + CHUNK : N;
  const long long first = lo + 4LL * threadIdx.x, step = 4LL * THREADS; // group k: first + k * step
  unsigned long long *rows =
      reinterpret_cast<unsigned long long *>(workspace) + group * 2 * K * Op::words;
  unsigned *last_tag = reinterpret_cast<unsigned *>(workspace + ROW_GROUPS * 4 * K * Op::words) +
                       blockIdx.x;
  const unsigned tag0 = __ldcg(last_tag); // written by this block's previous launch
  extern __shared__ float4 tb_ring[];
  float4 *mine = tb_ring + threadIdx.x; // the thread's slot j: mine[j * THREADS]
  // s: the thread's statistics of its groups of the group's current row
  typename Op::stats s = Op::init();
  if (group < M) {
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
    _Pragma("unroll 4") for (int k = 0; k < GROUPS; ++k) {
      if (first + k * step < hi) tb_merge_group<Op>(s, mine[k * THREADS], first + k * step);
    }
  }
  int base = 0; // the current row's group 0's slot
  unsigned trip = 0;
  for (long long row = group; row < M; row += ROW_GROUPS, ++trip) {
    const long long next = row + ROW_GROUPS;
    const float *nx = x + (next < M ? next : row) * SX;
    const bool nvec = tb_aligned16(nx);
    const int nbase = tb_ring_slot(base, GROUPS);
    // the next row's first groups into the free slots, in flight across the
    // exchange (one commit group each, empty or not: the waits below count them)
    if (next < M) {
      _Pragma("unroll") for (int k = 0; k < RING - GROUPS; ++k) {
        if (k < GROUPS && first + k * step < hi)
          tb_copy_group_async(&mine[tb_ring_slot(nbase, k) * THREADS], nx, first + k * step, nvec);
        asm volatile("cp.async.commit_group;" ::: "memory");
      }
    }
    const unsigned tag = tag0 + trip + 1;
    unsigned long long *exchange = rows + (tag & 1) * K * Op::words;
    {
      TB_BLOCK_COMBINE(Op, s, THREADS, 0)
      if (threadIdx.x == 0) tb_publish<Op>(exchange, chunk, s, tag);
    }
    // the row's K statistics, merged by the block (a fixed order: every
    // block of the group gets the same bits)
    typename Op::finished f;
    {
      typename Op::stats r = tb_await<Op>(exchange, tag);
      TB_BLOCK_COMBINE(Op, r, THREADS, 1)
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
  if (threadIdx.x == 0) *last_tag = tag0 + trip;
}

// Two blocks an SM: the plan counts on them being resident together.
extern "C" __global__ void __launch_bounds__(THREADS, 2) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_persistent_row<tb_row_op>(x, weight, bias, out, workspace);
}
