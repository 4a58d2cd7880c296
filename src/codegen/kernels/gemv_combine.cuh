// ---- gemm with k split: the second launch -----------------------------------
// Pasted where the plan splits k (SPLITS > 1), after gemv.cuh or the
// one-launch tensor-core kernel: tb_main left each chunk's partial sums in
// workspace[chunk * OUTPUTS + output].
// The second launch: output i is the sum of its SPLITS partials, chunk 0 first.
extern "C" __global__ void __launch_bounds__(COMBINE_THREADS) tb_combine(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  const long long i = (long long)blockIdx.x * COMBINE_THREADS + threadIdx.x;
  if (i >= OUTPUTS) return;
  float sum = 0.0f;
  for (int chunk = 0; chunk < SPLITS; ++chunk) sum += workspace[chunk * OUTPUTS + i];
  out[i] = sum;
}
