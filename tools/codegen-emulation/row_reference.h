// The fp64 reference of the row operations and the count of outputs outside
// their tolerance (docs/tolerances.md), for the host emulations of row
// kernels (run_persistent.cpp, run_register_rows.cpp). Included after the
// generated source: M, N and SX are its plan's; TB_EMULATED_OP_<OP> (a -D of
// the compiler) names the operation.
#include <algorithm>

#if defined(TB_EMULATED_OP_SUM)
enum { ROW_OUTPUTS = 1 };  // one value a row
#else
enum { ROW_OUTPUTS = N };
#endif

// The fp64 reference of one row into ref[0 .. ROW_OUTPUTS).
static void reference(const float *row, const float *w, const float *bias, double *ref) {
#if defined(TB_EMULATED_OP_SUM)
  double sum = 0;
  for (long long j = 0; j < N; ++j) sum += row[j];
  ref[0] = sum;
  (void)w, (void)bias;
#elif defined(TB_EMULATED_OP_SOFTMAX)
  double top = -INFINITY, sum = 0;
  for (long long j = 0; j < N; ++j) top = std::max(top, (double)row[j]);
  for (long long j = 0; j < N; ++j) sum += std::exp(row[j] - top);
  for (long long j = 0; j < N; ++j) ref[j] = std::exp(row[j] - top) / sum;
  (void)w, (void)bias;
#elif defined(TB_EMULATED_OP_RMSNORM)
  double squares = 0;
  for (long long j = 0; j < N; ++j) squares += (double)row[j] * row[j];
  const double scale = 1 / std::sqrt(squares / N + (double)EPS);
  for (long long j = 0; j < N; ++j) ref[j] = row[j] * scale * w[j];
  (void)bias;
#elif defined(TB_EMULATED_OP_LAYERNORM)
  double mean = 0, var = 0;
  for (long long j = 0; j < N; ++j) mean += row[j];
  mean /= N;
  for (long long j = 0; j < N; ++j) var += (row[j] - mean) * (row[j] - mean);
  const double scale = 1 / std::sqrt(var / N + (double)EPS);
  for (long long j = 0; j < N; ++j) ref[j] = (row[j] - mean) * scale * w[j] + bias[j];
#else
#error "TB_EMULATED_OP_SUM, _SOFTMAX, _RMSNORM or _LAYERNORM"
#endif
}

#if defined(TB_EMULATED_OP_SUM)
static const double abs_tol = 1e-4, rel_tol = 1e-5;  // a float sum of N terms in [-1, 1]
#elif defined(TB_EMULATED_OP_SOFTMAX)
static const double abs_tol = 1e-8, rel_tol = 5e-5;
#else
static const double abs_tol = 1e-5, rel_tol = 1e-5;
#endif

// Outputs outside the tolerance (NaN: never written, counts as one), the
// largest error in *worst.
static long long wrong_outputs(const float *x, const float *w, const float *bias, const float *out,
                               double *worst) {
  std::vector<double> ref(ROW_OUTPUTS);
  long long wrong = 0;
  *worst = 0;
  for (long long r = 0; r < M; ++r) {
    reference(x + r * SX, w, bias, ref.data());
    for (long long j = 0; j < ROW_OUTPUTS; ++j) {
      const double e = std::fabs(out[r * ROW_OUTPUTS + j] - ref[j]);
      if (!(e <= abs_tol + rel_tol * std::fabs(ref[j]))) ++wrong;
      if (!(e <= *worst)) *worst = e;
    }
  }
  return wrong;
}

// A case of rows for the runners that launch blocks one after another
// (run_register_rows.cpp, run_streaming.cpp): random rows starting `offset`
// floats past a 16-byte boundary (the storage is aligned, as cudaMalloc's),
// the row stride SX, a weight and bias of N, the outputs NaN until written.
struct tb_emulated_rows {
  std::vector<float4> storage;
  float *x;
  std::vector<float> w, bias, out;
  explicit tb_emulated_rows(long long offset)
      : storage((offset + M * SX + 8) / 4 + 1),
        x(reinterpret_cast<float *>(storage.data()) + offset), w(N), bias(N),
        out(M * ROW_OUTPUTS, NAN) {
    tb_emulated_inputs(x, M * SX, w.data(), bias.data(), N);
  }
  // Prints what ran and how many outputs fall outside the tolerance; the exit status.
  int report(long long offset, long long blocks, int threads) const {
    double worst = 0;
    const long long wrong = wrong_outputs(x, w.data(), bias.data(), out.data(), &worst);
    printf("  offset %lld: %lldx%d, stride %lld, %lld blocks of %d: %lld wrong output(s), "
           "largest error %.3g\n",
           offset, M, N, (long long)SX, blocks, threads, wrong, worst);
    return wrong == 0 ? 0 : 1;
  }
};
