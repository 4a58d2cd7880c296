// Runs one generated matrix-vector source (SRC, its path, a -D of the
// compiler) on the host over random operands laid out as the case's view
// (argv[1]: the view offset, 0 packed or 1 strided; the leading dimensions
// are the source's SA and SB) and compares it with an fp64 product. Exit 0
// when every output is written and within 1e-3 sqrt(K).
#include "emulated_cuda.h"
#include SRC

typedef void (*kernel)(const float *, const float *, const float *, const float *, float *,
                       float *);

// Every block in turn, each as THREADS host threads.
static void launch(kernel f, long long blocks, int threads, const float *x, const float *y,
                   float *out, float *workspace) {
  for (long long b = 0; b < blocks; ++b)
    tb_emulated_block(b, threads, [&] { f(x, y, nullptr, nullptr, out, workspace); });
}

int main(int argc, char **argv) {
  const long long offset = tb_emulated_offset(argc, argv);
  std::vector<float> a(offset + M * SA + 8), b(offset + K * SB + 8), c(M * N, NAN);
  srand(7);
  for (auto &v : a) v = (rand() % 2001 - 1000) / 1000.0f;
  for (auto &v : b) v = (rand() % 2001 - 1000) / 1000.0f;
  std::vector<float> workspace(SPLITS * OUTPUTS + 8, NAN);
  const float *x = a.data() + offset, *y = b.data() + offset;
  launch(tb_main, GRID_OUT * SPLITS, THREADS, x, y, c.data(), workspace.data());
#if SPLITS > 1
  launch(tb_combine, (OUTPUTS + COMBINE_THREADS - 1) / COMBINE_THREADS, COMBINE_THREADS, x, y,
         c.data(), workspace.data());
#endif
  double worst = 0;  // NaN (an output never written) stays the worst
  for (long long i = 0; i < M; ++i)
    for (long long j = 0; j < N; ++j) {
      double exact = 0;
      for (long long k = 0; k < K; ++k) exact += (double)x[i * SA + k] * y[k * SB + j];
      const double e = std::fabs(exact - c[i * N + j]);
      if (!(e <= worst)) worst = e;
    }
  const bool ok = worst < 1e-3 * std::sqrt((double)K);
  printf("%lldx%lldx%lld, %d chunk(s): largest error %.3g %s\n", M, N, K, (int)SPLITS, worst,
         ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
