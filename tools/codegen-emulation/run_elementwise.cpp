// Runs one generated add or gelu_add source (SRC, its path, a -D of the
// compiler; THREADS its block, TB_EMULATED_GELU for gelu_add) on the host
// over random operands starting argv[1] floats (0 to 3) past a 16-byte
// boundary, rows SX apart as the source says; the output is packed, as the
// harness allocates it. The kernel has no barrier or shuffle, so each thread
// runs in turn. It launches more blocks than any plan (one a THREADS
// elements): the blocks past the plan's grid must write nothing. Compares
// every output with an fp64 reference. Exit 0 when all are written and right.
#include "emulated_cuda.h"
#include SRC

int main(int argc, char **argv) {
  const long long offset = tb_emulated_offset(argc, argv);
  const long long count = M * SX;
  std::vector<float4> xs((offset + count) / 4 + 2), ys(xs.size());  // 16-byte aligned bases
  float *x = reinterpret_cast<float *>(xs.data()) + offset;
  float *y = reinterpret_cast<float *>(ys.data()) + offset;
  std::vector<float> out(M * N, NAN), unused(N);
  tb_emulated_inputs(x, count, unused.data(), unused.data(), N);
  tb_emulated_inputs(y, count, unused.data(), unused.data(), N);
  for (long long i = 0; i < count; ++i) y[i] = 0.5f * y[i] - 0.25f;  // not x's values
  const long long blocks = (M * N + THREADS - 1) / THREADS;
  for (long long b = 0; b < blocks; ++b)
    for (int t = 0; t < THREADS; ++t) {
      blockIdx = {(unsigned)b, 0, 0};
      threadIdx = {(unsigned)t, 0, 0};
      tb_main(x, y, nullptr, nullptr, out.data(), nullptr);
    }
  long long wrong = 0;
  for (long long r = 0; r < M; ++r)
    for (long long e = 0; e < N; ++e) {
      const double s = (double)x[r * SX + e] + y[r * SX + e];
#ifdef TB_EMULATED_GELU
      const double want = 0.5 * s * (1.0 + std::erf(s * 0.7071067811865476));
#else
      const double want = s;
#endif
      if (!(std::fabs(out[r * N + e] - want) <= 1e-6 * (1.0 + std::fabs(want)))) ++wrong;
    }
  printf("  offset %lld: %lldx%lld, stride %lld, %lld blocks of %d: %lld wrong output(s)\n",
         offset, (long long)M, (long long)N, (long long)SX, blocks, THREADS, wrong);
  return wrong == 0 ? 0 : 1;
}
