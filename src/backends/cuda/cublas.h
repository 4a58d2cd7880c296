/* cuBLAS, loaded at run time, as the vendor baseline for gemm: the call a
 * user would make (cublasSgemm on row-major data through the transposed
 * product), with the math mode matched to the realization compared. */
#ifndef TB_BACKENDS_CUDA_CUBLAS_H
#define TB_BACKENDS_CUDA_CUBLAS_H

#include "backends/cuda/driver.h"
#include "planner/gemm.h"
#include "providers/provider_details.h"

struct tb_cublas;

/* Loads libcublas, creates a handle bound to `stream` (outside any timing);
 * TB_ERR_UNAVAILABLE with the reason when cuBLAS is missing. */
enum tb_status tb_cublas_open(CUstream stream, struct tb_cublas **out, struct tb_error *err);

/* fp32 (default math: no TF32) for simt and tensor-3xtf32, TF32 tensor-op
 * math for tensor. */
enum tb_status tb_cublas_set_realization(struct tb_cublas *c, enum tb_realization r,
                                         struct tb_error *err);

/* out (m x n) = a (m x k, leading dimension sa) . b (k x n, leading
 * dimension sb), all row-major; returns the cublasStatus_t (0: success). */
/* Gives cuBLAS its workspace, so a call captured into a graph allocates
 * nothing (the graph mode; the buffer outlives every graph of the handle). */
enum tb_status tb_cublas_set_workspace(struct tb_cublas *c, CUdeviceptr workspace, size_t bytes,
                                       struct tb_error *err);

int tb_cublas_gemm(struct tb_cublas *c, size_t m, size_t n, size_t k, CUdeviceptr a, size_t sa,
                   CUdeviceptr b, size_t sb, CUdeviceptr out);

/* Library path, version, math mode and the call made, for the results
 * (the rest of *out, buffers and device, is the provider's). */
void tb_cublas_facts(const struct tb_cublas *c, struct tb_cublas_details *out);

void tb_cublas_close(struct tb_cublas *c);

#endif
