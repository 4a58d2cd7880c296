// The CUDA built-ins the matrix-vector kernels use, emulated on the host so
// that a generated source (src/codegen/kernels/gemv.cuh) compiles as C++ and
// runs: a std::thread per CUDA thread of a block, warp shuffles exchanged
// through a per-warp barrier (every lane of a warp shuffles, or none: the
// kernels return whole warps only). Checks arithmetic and indexing, not
// speed or memory ordering. Used by check.sh; not part of CI.
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

struct tb_emulated_dim { unsigned x, y, z; };
static thread_local tb_emulated_dim threadIdx, blockIdx;
// 16-byte aligned as CUDA's: a misaligned access shows under -fsanitize=alignment
struct alignas(16) float4 { float x, y, z, w; };
static inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }

struct tb_emulated_warp {
  std::barrier<> exchange{32};
  float lanes[32];
};
static thread_local tb_emulated_warp *tb_my_warp;

static inline float __shfl_xor_sync(unsigned, float v, int offset) {
  const int lane = threadIdx.x % 32;
  tb_my_warp->lanes[lane] = v;
  tb_my_warp->exchange.arrive_and_wait();
  const float r = tb_my_warp->lanes[lane ^ offset];
  tb_my_warp->exchange.arrive_and_wait();  // nobody overwrites before all have read
  return r;
}

// Block b as `threads` host threads, each running body() with its
// threadIdx, blockIdx and warp set; returns when all have.
template <class Body> static void tb_emulated_block(long long b, int threads, Body body) {
  std::vector<std::unique_ptr<tb_emulated_warp>> warps;
  for (int w = 0; w < (threads + 31) / 32; ++w) warps.emplace_back(new tb_emulated_warp);
  std::vector<std::thread> block;
  for (int t = 0; t < threads; ++t)
    block.emplace_back([&, t] {
      threadIdx = {(unsigned)t, 0, 0};
      blockIdx = {(unsigned)b, 0, 0};
      tb_my_warp = warps[t / 32].get();
      body();
    });
  for (auto &t : block) t.join();
}

// The runners' one argument: how many floats past a 16-byte boundary the
// operands start, 0 to 3 (0 when absent); anything else ends the run with 2.
static long long tb_emulated_offset(int argc, char **argv) {
  if (argc < 2) return 0;
  char *end = nullptr;
  const long long offset = strtoll(argv[1], &end, 10);
  if (argc > 2 || end == argv[1] || *end != '\0' || offset < 0 || offset > 3) {
    fprintf(stderr, "usage: %s [OFFSET] (floats past a 16-byte boundary, 0 to 3)\n", argv[0]);
    exit(2);
  }
  return offset;
}

// Inputs in [-1, 1] (x, `count` of them) and a weight in [0.5, 1.5] and bias
// in [-1, 1] (n each), the same for every run.
static void tb_emulated_inputs(float *x, long long count, float *w, float *bias, long long n) {
  srand(7);
  for (long long i = 0; i < count; ++i) x[i] = (rand() % 2001 - 1000) / 1000.0f;
  for (long long j = 0; j < n; ++j) {
    w[j] = 0.5f + (rand() % 1001) / 1000.0f;
    bias[j] = (rand() % 2001 - 1000) / 1000.0f;
  }
}

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
