/* tilebench/kernel.h: the contract of a kernel library a user brings
 * (`tilebench run --providers native,user --kernel libmine.so`,
 * docs/user-kernels.md). The library exports one C function per operation it
 * implements, named tb_user_<operation>; tilebench loads it with dlopen,
 * records its SHA-256, gives it the same input bytes and views as its own
 * kernels and validates every output it is asked to time.
 *
 * The contract is versioned by TB_KERNEL_ABI_VERSION: a library built against
 * another version is refused. Nothing here needs linking against tilebench:
 * the header only declares what the library defines. */
#ifndef TILEBENCH_KERNEL_H
#define TILEBENCH_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TB_KERNEL_ABI_VERSION 1

/* tb_user_kernel_flags(): the library accepts rows whose stride is larger
 * than n and whose first element is not 16-byte aligned (the strided input
 * view). Without it only packed views are measured; strided cases are
 * refused with that reason. */
#define TB_KERNEL_ACCEPTS_STRIDED_ROWS 0x1u

/* One call of an operation over an m x n fp32 matrix, row-major, along the
 * last axis. On the CPU backend every pointer is a host pointer and the
 * function computes before it returns; on a GPU they are device pointers and
 * the function enqueues its work on `stream`. */
struct tb_kernel_args {
  uint32_t abi_version; /* TB_KERNEL_ABI_VERSION as tilebench was built */
  uint32_t struct_size; /* sizeof(struct tb_kernel_args) as tilebench was built */
  int64_t m, n;         /* rows, row length */
  /* Elements between the starts of consecutive rows of x and y: n when
   * packed, more when strided (the padding holds NaN: reading it fails). */
  int64_t row_stride;
  const float *x;      /* element [0,0] of the input (add, gelu_add: the first operand) */
  const float *y;      /* add, gelu_add: the second operand, same layout as x; else NULL */
  const float *weight; /* rmsnorm, layernorm: n elements; else NULL */
  const float *bias;   /* layernorm: n elements; else NULL */
  float *out;          /* packed output: m x n elements, or m for sum */
  float eps;           /* rmsnorm, layernorm: the epsilon inside the square root; else 0 */
  void *stream;        /* a CUstream on the CUDA backend, NULL on the CPU */
};

/* Every operation's function has this type: 0 on success, any other value
 * is an error code tilebench records (the case is then invalid). The inputs
 * must not be written, nothing outside `out` may be written, and each call
 * must compute the whole output from the inputs it is given. */
typedef int (*tb_user_kernel_fn)(const struct tb_kernel_args *args);

/* The operations of ABI 1 (export those the library implements):
 *   sum       out[i] = sum_j x[i][j]                 (m outputs)
 *   softmax   out[i][j] = exp(x[i][j] - max_i) / sum_j exp(x[i][j] - max_i)
 *   rmsnorm   out[i][j] = x[i][j] / sqrt(mean_j x[i][j]^2 + eps) * weight[j]
 *   layernorm out[i][j] = (x[i][j] - mean_i) / sqrt(var_i + eps) * weight[j] + bias[j]
 *   add       out[i][j] = x[i][j] + y[i][j]
 *   gelu_add  out[i][j] = GELU(x[i][j] + y[i][j]), exact erf GELU
 * gemm is not part of ABI 1. */
int tb_user_sum(const struct tb_kernel_args *args);
int tb_user_softmax(const struct tb_kernel_args *args);
int tb_user_rmsnorm(const struct tb_kernel_args *args);
int tb_user_layernorm(const struct tb_kernel_args *args);
int tb_user_add(const struct tb_kernel_args *args);
int tb_user_gelu_add(const struct tb_kernel_args *args);

/* A CUDA source kernel (`--kernel mine.cu --launch 'grid=m,block=256'`,
 * docs/user-kernels.md) needs no header: tilebench compiles the file with
 * NVRTC and launches, per operation, the function of the same name with the
 * grid, block and dynamic shared memory of --launch, on its own stream, with
 * the fields of struct tb_kernel_args above as parameters, in this order:
 *
 *   extern "C" __global__ void tb_user_<op>(
 *       const float *x, const float *y, const float *weight, const float *bias,
 *       float *out, long long m, long long n, long long row_stride, float eps);
 *
 * (the pointers NULL where the operation has no such operand). It is part of
 * ABI 1: a change of the parameters is a new TB_KERNEL_ABI_VERSION. */

/* Optional: the ABI the library was built for (return TB_KERNEL_ABI_VERSION);
 * a library without it is taken as ABI 1, and the results say so. */
uint32_t tb_user_kernel_abi_version(void);
/* Optional: TB_KERNEL_* flags; without it, packed rows only. */
uint32_t tb_user_kernel_flags(void);
/* Optional: one line naming the implementation, recorded in the results. */
const char *tb_user_kernel_description(void);

#ifdef __cplusplus
}
#endif

#endif
