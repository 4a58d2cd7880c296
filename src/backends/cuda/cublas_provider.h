/* The cublas provider: the vendor's gemm (cublasSgemm) on the shared CUDA
 * device (cuda_device.h: the same buffers, rotation and stream as the native
 * provider), gemm only, with the math mode matched to the realization. */
#ifndef TB_BACKENDS_CUDA_CUBLAS_PROVIDER_H
#define TB_BACKENDS_CUDA_CUBLAS_PROVIDER_H

#include "providers/provider.h"

/* TB_ERR_UNAVAILABLE (with the reason) without a usable GPU or cuBLAS. */
enum tb_status tb_cuda_cublas_provider_create(struct tb_provider **out, struct tb_error *err);

#endif
