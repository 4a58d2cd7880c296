// Runs one persistent-row source, made host C++ by persistent_source.py (SRC,
// its path, a -D of the compiler; TB_EMULATED_OP_<OP> names the operation),
// over random rows laid out as the case's view (argv[1]: the view offset, 0
// packed or 1 strided; the row stride is the source's SX), twice: the second
// launch finds the workspace as the first left it (each group's arrival
// counter grown by K arrivals a row of the group). Each block is a process,
// each of its threads a thread, all resident at once. Compares every output
// with an fp64 reference within the operation's tolerance
// (docs/tolerances.md). Exit 0 when both launches pass and each counter holds
// the arrivals of the launches so far.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emulated_blocks.h"
#include SRC
#include "row_reference.h"

// Memory every block process sees: a shared anonymous mapping, zeroed.
template <class T> static T *shared_array(size_t count) {
  void *p = mmap(nullptr, count * sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  return static_cast<T *>(p);
}

// Block b as THREADS threads of this (forked) process.
static void run_block(long long b, const float *x, const float *w, const float *bias, float *out,
                      float *workspace) {
  std::barrier<> block(THREADS);
  tb_emulated_block_barrier = &block;
  // shared memory as the GPU leaves it: not zero (a slot read before it is written shows)
  for (float4 &v : tb_emulated_dynamic) v = {NAN, NAN, NAN, NAN};
  tb_emulated_block(b, THREADS, [&] { tb_main(x, nullptr, w, bias, out, workspace); });
}

// Every block of the grid at once; false when one did not finish (a trap).
static bool launch(const float *x, const float *w, const float *bias, float *out,
                   float *workspace) {
  const long long blocks = ROW_GROUPS * K;
  std::vector<pid_t> children;
  for (long long b = 0; b < blocks; ++b) {
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(20);  // a block that never finishes (a barrier some threads skip) ends here
      // each group's last block starts late: the others' first arrivals come before it reads
      // the group's counter, as on the GPU a block scheduled late finds them
      if (b % K == K - 1) usleep(50000);
      run_block(b, x, w, bias, out, workspace);
      _exit(0);
    }
    if (pid < 0) {
      perror("fork");
      exit(2);
    }
    children.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

int main(int argc, char **argv) {
  const long long offset = tb_emulated_offset(argc, argv);
  float *xs = shared_array<float>(offset + M * SX + 8), *x = xs + offset;
  float *w = shared_array<float>(N), *bias = shared_array<float>(N), *out = shared_array<float>(M * N);
  // a 64-bit arrival counter a group (two floats' room), then the statistics' slots
  const size_t slots = ROW_GROUPS * 2 * K * tb_row_op::words;
  float *workspace = shared_array<float>(2 * ROW_GROUPS + slots);
  const auto *counters = reinterpret_cast<const unsigned long long *>(workspace);
  // inputs in [-1, 1]: a padding zero counted as an element moves softmax's sum past its
  // tolerance (3 of 10001 in e^-1..e^1)
  tb_emulated_inputs(xs, offset + M * SX + 8, w, bias, N);
  bool ok = true;
  for (int round = 1; round <= 2; ++round) {
    for (long long i = 0; i < M * N; ++i) out[i] = NAN;
    const bool finished = launch(x, w, bias, out, workspace);
    double worst = 0;
    const long long wrong = finished ? wrong_outputs(x, w, bias, out, &worst) : M * N;
    long long counters_off = 0;  // groups whose counter is not K arrivals a row a launch
    for (long long g = 0; g < ROW_GROUPS; ++g) {
      const long long rows = (M - g + ROW_GROUPS - 1) / ROW_GROUPS;
      counters_off += counters[g] != (unsigned long long)(round * K * rows);
    }
    printf("%s launch %d: %lldx%d, %lld blocks: %s, %lld wrong output(s), largest error %.3g, "
           "%lld counter(s) off\n",
           offset ? "strided" : "packed", round, M, N, ROW_GROUPS * K,
           finished ? "every block finished" : "a block did not finish", wrong, worst,
           counters_off);
    ok = ok && finished && wrong == 0 && counters_off == 0;
  }
  return ok ? 0 : 1;
}
