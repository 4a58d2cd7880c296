/* tb_user_softmax for tilebench's CUDA source path (docs/user-kernels.md):
 * compiled by NVRTC at run time, launched by tilebench with the grid and
 * block of --launch (here grid=m,block=256: one block per row). No headers:
 * NVRTC compiles this file alone, so everything it uses is a CUDA builtin.
 *
 * The parameters are the contract's, in its order, for every operation:
 * x, y, weight, bias, out, m, n, row_stride, eps. Rows of x start
 * row_stride elements apart (n + 3 in the strided view, whose padding holds
 * NaN: reading it would fail validation); out is packed, m x n. */

/* The block size must be a multiple of 32 (full-warp shuffles) and at most
 * 1024 (32 warps, one partial result each in `scratch`). */

__device__ static float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

__device__ static float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

/* The whole block's maximum or sum, returned to every thread: each warp
 * reduces its lanes, lane 0 leaves the warp's result in scratch, then every
 * warp reduces those partials itself (no second broadcast needed). */
__device__ static float block_reduce(float v, bool is_max, float *scratch) {
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned warps = (blockDim.x + 31u) >> 5;
  const float identity = is_max ? -__int_as_float(0x7f800000) : 0.0f;
  v = is_max ? warp_max(v) : warp_sum(v);
  if (lane == 0) {
    scratch[warp] = v;
  }
  __syncthreads();
  v = lane < warps ? scratch[lane] : identity;
  v = is_max ? warp_max(v) : warp_sum(v);
  __syncthreads(); /* scratch is written again by the next reduction */
  return v;
}

extern "C" __global__ void tb_user_softmax(const float *x, const float *y, const float *weight,
                                           const float *bias, float *out, long long m,
                                           long long n, long long row_stride, float eps) {
  __shared__ float scratch[32];
  /* rows stride by the grid, so a grid smaller than m is still correct */
  for (long long row = blockIdx.x; row < m; row += gridDim.x) {
    const float *in = x + row * row_stride;
    float *o = out + row * n;
    float top = -__int_as_float(0x7f800000);
    for (long long j = threadIdx.x; j < n; j += blockDim.x) {
      top = fmaxf(top, in[j]);
    }
    top = block_reduce(top, true, scratch);
    float total = 0.0f;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) {
      total += expf(in[j] - top);
    }
    const float inverse = 1.0f / block_reduce(total, false, scratch);
    for (long long j = threadIdx.x; j < n; j += blockDim.x) {
      o[j] = expf(in[j] - top) * inverse;
    }
  }
}
