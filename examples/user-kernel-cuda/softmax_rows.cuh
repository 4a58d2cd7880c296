/* A row softmax on the GPU: one block per row, three passes over the row in
 * global memory (the maximum, the sum of exponentials, the output), each
 * reduction over the block's warps through shared memory. Loads are of
 * single floats, so any row stride and any alignment of the first element
 * work (the strided view's rows start 4 bytes off 16-byte alignment).
 * Included by softmax.cu and by tests/user_kernels/cuda/side_stream.cu, whose
 * only fault is the stream it launches on. */
#ifndef TB_EXAMPLE_SOFTMAX_ROWS_CUH
#define TB_EXAMPLE_SOFTMAX_ROWS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <tilebench/kernel.h>

#define SOFTMAX_THREADS 256
#define SOFTMAX_WARPS (SOFTMAX_THREADS / 32)

__device__ static float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

__device__ static float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

/* The block's maximum (is_max) or sum of v, in every thread; `partial` holds
 * one value per warp and is not reused before the barrier that ends this. */
__device__ static float block_reduce(float v, bool is_max, float *partial) {
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  v = is_max ? warp_max(v) : warp_sum(v);
  if (lane == 0) {
    partial[warp] = v;
  }
  __syncthreads();
  v = lane < SOFTMAX_WARPS ? partial[lane] : (is_max ? -INFINITY : 0.0f);
  return is_max ? warp_max(v) : warp_sum(v);
}

__global__ void __launch_bounds__(SOFTMAX_THREADS)
    softmax_rows_kernel(const float *x, float *out, int64_t n, int64_t row_stride) {
  __shared__ float max_partial[SOFTMAX_WARPS], sum_partial[SOFTMAX_WARPS];
  const float *row = x + (int64_t)blockIdx.x * row_stride;
  float *y = out + (int64_t)blockIdx.x * n;
  float max = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += SOFTMAX_THREADS) {
    max = fmaxf(max, row[j]);
  }
  max = block_reduce(max, true, max_partial);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += SOFTMAX_THREADS) {
    sum += expf(row[j] - max);
  }
  float inv = 1.0f / block_reduce(sum, false, sum_partial);
  for (int64_t j = threadIdx.x; j < n; j += SOFTMAX_THREADS) {
    y[j] = expf(row[j] - max) * inv;
  }
}

/* The contract's checks of one call: 1 for another ABI or struct, 2 for a
 * shape the grid cannot hold (one block per row). */
static int softmax_args_error(const struct tb_kernel_args *a) {
  if (a->abi_version != TB_KERNEL_ABI_VERSION || a->struct_size < sizeof *a) {
    return 1;
  }
  return a->m < 1 || a->n < 1 || a->m > INT32_MAX || a->row_stride < a->n ? 2 : 0;
}

/* Enqueues the kernel on `stream`; 0, the argument check's code, or 100 +
 * the launch's cudaError_t (a code tilebench records as the call's error). */
static int launch_softmax_rows(const struct tb_kernel_args *a, cudaStream_t stream) {
  int bad = softmax_args_error(a);
  if (bad != 0) {
    return bad;
  }
  softmax_rows_kernel<<<(unsigned)a->m, SOFTMAX_THREADS, 0, stream>>>(a->x, a->out, a->n,
                                                                       a->row_stride);
  cudaError_t rc = cudaGetLastError();
  return rc == cudaSuccess ? 0 : 100 + (int)rc;
}

#endif
