
// ---- mapping: block streaming --------------------------------------------
// One block of THREADS threads a row; the row is read again from memory for
// each pass (statistics, then output).
template <class Op>
static __device__ __forceinline__ void tb_block_streaming(const float *__restrict__ x,
                                                          const float *__restrict__ weight,
                                                          const float *__restrict__ bias,
                                                          float *__restrict__ out) {
  const long long row = blockIdx.x;
  const float *xr = x + row * SX;
  const bool vec = tb_aligned16(xr);
  TB_STAT_PASS(Op, s, 0LL, N, THREADS)
  TB_BLOCK_COMBINE(Op, s, THREADS, 0)
  TB_ROW_RESULT(Op, s, 0LL, N, THREADS, threadIdx.x == 0)
}

extern "C" __global__ void __launch_bounds__(THREADS) tb_main(
    const float *__restrict__ x, const float *__restrict__ y,
    const float *__restrict__ weight, const float *__restrict__ bias,
    float *__restrict__ out, float *__restrict__ workspace) {
  tb_block_streaming<tb_row_op>(x, weight, bias, out);
}
