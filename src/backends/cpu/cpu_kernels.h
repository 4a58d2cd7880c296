/* fp32 host implementations of every operation: the CPU backend's kernels.
 * Row accumulations are blocked (TB_CPU_LANES partial sums combined
 * pairwise), as a GPU's lanes and tree reduction would be, so long rows keep
 * fp32 accuracy instead of a serial sum's O(n*u) error. */
#ifndef TB_BACKENDS_CPU_KERNELS_H
#define TB_BACKENDS_CPU_KERNELS_H

#include "inputs/tensor.h"

#define TB_CPU_LANES 8

/* Computes the case's operation from data->inputs into out (packed). */
void tb_cpu_run_case(const struct tb_case_data *data, float *out);

#endif
