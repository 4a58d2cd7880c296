/* The CUDA templates of src/codegen/kernels/, embedded at build time
 * (kernels/kernels.cmake): each <name>.cuh is tb_kernel_<name>, its text as a
 * NUL-terminated string. The generators paste them into the sources they
 * emit, after the constants of the plan. */
#ifndef TB_CODEGEN_TEMPLATES_H
#define TB_CODEGEN_TEMPLATES_H

/* TB_INF and tb_aligned16: every generated kernel */
extern const char tb_kernel_prelude[];
/* row reductions: warp sum, barrier sites, loads, stores, output groups */
extern const char tb_kernel_row_common[];
/* the operators, one a row operation */
extern const char tb_kernel_sum[];
extern const char tb_kernel_softmax[];
extern const char tb_kernel_rmsnorm[];
extern const char tb_kernel_layernorm[];
/* streamed statistics, shared by block streaming, split rows, cluster rows */
extern const char tb_kernel_streaming[];
/* a row's chunk in shared memory: cluster rows and persistent rows */
extern const char tb_kernel_shared_chunk[];
/* the mappings, one template each */
extern const char tb_kernel_register_rows[];
extern const char tb_kernel_block_streaming[];
extern const char tb_kernel_split_row[];
extern const char tb_kernel_cluster_row[];
extern const char tb_kernel_persistent_row[];
extern const char tb_kernel_subwarp_rows[];
/* gemm with m = 1 or n = 1: the matrix-vector kernels (codegen/gemv.c) */
extern const char tb_kernel_gemv[];
extern const char tb_kernel_gemv_combine[]; /* the second launch, where k is split */

#endif
