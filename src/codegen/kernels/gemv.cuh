// ---- gemm as a matrix-vector product (m = 1 or n = 1) ----------------------
// The generator (src/codegen/gemv.c) defines the case (M, N, K, SA, SB), the
// plan (GEMV_ROWS, VW, THREADS, MIN_BLOCKS, GRID_OUT: the blocks along the
// outputs, KCHUNK, SPLITS) and OUTPUTS (m for rows, n for columns).
// Memory-bound: each element of the matrix is loaded once, 4 floats at a time
// when VW is 4, marked streaming (__ldcs: read once, so it should not evict
// the vector and the partial sums from the caches).
// Block b covers outputs' block b % GRID_OUT over k chunk b / GRID_OUT. With
// SPLITS > 1 a chunk's partial sums go to workspace[chunk * OUTPUTS + output]
// and tb_combine adds an output's SPLITS partials in chunk order: the same
// additions in the same order every run (no atomics), so results repeat.

static __device__ __forceinline__ float *tb_gemv_destination(float *out, float *workspace,
                                                             long long chunk) {
  return SPLITS > 1 ? workspace + chunk * OUTPUTS : out;
}

#if GEMV_ROWS
// n = 1: warp w of the block reduces row GRID_OUT-block * 8 + w of A against
// the vector (B's column, contiguous when VW is 4), lane l taking k = k0 + VW l
// and every 32 VW further, then a shuffle tree (fixed order). No barrier: a
// warp past the last row leaves as a whole.
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long chunk = blockIdx.x / GRID_OUT;
  const long long row = (blockIdx.x % GRID_OUT) * (THREADS / 32) + warp;
  if (row >= M) return;
  const long long k0 = chunk * KCHUNK, k1 = k0 + KCHUNK < K ? k0 + KCHUNK : K;
  const float *const a = x + row * SA;
  float acc = 0.0f;
#if VW == 4
  // K % 4 == 0: a float4 starting below k1 ends below it
  _Pragma("unroll 4") for (long long k = k0 + 4 * lane; k < k1; k += 128) {
    const float4 u = __ldcs(reinterpret_cast<const float4 *>(a + k));
    const float4 v = *reinterpret_cast<const float4 *>(y + k);
    acc = fmaf(u.x, v.x, acc);
    acc = fmaf(u.y, v.y, acc);
    acc = fmaf(u.z, v.z, acc);
    acc = fmaf(u.w, v.w, acc);
  }
#else
  _Pragma("unroll 4") for (long long k = k0 + lane; k < k1; k += 32)
    acc = fmaf(__ldcs(a + k), y[k * SB], acc);
#endif
  _Pragma("unroll") for (int offset = 16; offset > 0; offset /= 2)
    acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  if (lane == 0) tb_gemv_destination(out, workspace, chunk)[row] = acc;
}
#else
// m = 1: thread t owns columns VW (block THREADS + t) .. + VW - 1 of B and
// walks the chunk's rows of B (a warp's load is one contiguous 32 VW floats
// of a row); x[k] is one address for the whole block, a broadcast.
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  const long long chunk = blockIdx.x / GRID_OUT;
  const long long col = ((blockIdx.x % GRID_OUT) * THREADS + threadIdx.x) * VW;
  if (col >= N) return;
  const long long k0 = chunk * KCHUNK;
  // a chunk's rows fit an int: a longer one would need more than 2^31 rows
  // of B, each of at least 4 bytes, in one block
  const int rows = (int)(K - k0 < KCHUNK ? K - k0 : KCHUNK);
  const float *b = y + k0 * SB + col;
  float *const dst = tb_gemv_destination(out, workspace, chunk) + col;
#if VW == 4
  // N % 4 == 0: the 4 columns are all inside
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  _Pragma("unroll 8") for (int r = 0; r < rows; ++r, b += SB) {
    const float a = x[k0 + r];
    const float4 v = __ldcs(reinterpret_cast<const float4 *>(b));
    acc.x = fmaf(a, v.x, acc.x);
    acc.y = fmaf(a, v.y, acc.y);
    acc.z = fmaf(a, v.z, acc.z);
    acc.w = fmaf(a, v.w, acc.w);
  }
  *reinterpret_cast<float4 *>(dst) = acc;
#else
  float acc = 0.0f;
  _Pragma("unroll 8") for (int r = 0; r < rows; ++r, b += SB) acc = fmaf(x[k0 + r], __ldcs(b), acc);
  *dst = acc;
#endif
}
#endif
