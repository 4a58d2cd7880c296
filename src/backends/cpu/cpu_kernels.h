/* fp32 host implementations of every operation: the CPU backend's kernels.
 * Row accumulations follow the plan's lanes: element j goes to lane
 * (j / 4) mod lanes, as groups of 4 are dealt on the GPU, and the lanes are
 * then combined pairwise like a tree reduction. So the CPU keeps the GPU
 * plan's accuracy (no serial O(n*u) sums) while its timings stay host
 * timings; the plan does not make the host faster. */
#ifndef TB_BACKENDS_CPU_KERNELS_H
#define TB_BACKENDS_CPU_KERNELS_H

#include "inputs/tensor.h"

/* Lanes used for elementwise ops and as a floor for tiny plans. */
#define TB_CPU_MIN_LANES 8

/* Computes the case's operation into out (packed). scratch holds `lanes`
 * floats. gemm under the TF32 realization rounds each operand to TF32 as
 * the tensor cores do (the label stays true on the CPU); the other
 * realizations compute in fp32. */
void tb_cpu_run_case(const struct tb_case_data *data, enum tb_realization realization,
                     unsigned lanes, float *scratch, float *out);

/* x rounded to TF32 (10 explicit mantissa bits), to nearest with ties away
 * from zero, like cvt.rna.tf32.f32. */
float tb_round_tf32(float x);

#endif
