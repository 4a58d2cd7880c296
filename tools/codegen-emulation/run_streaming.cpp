// Runs one block-streaming or split-row source, made host C++ by
// streaming_source.py (SRC, its path, a -D of the compiler; TB_EMULATED_OP_<OP>
// names the operation, TB_EMULATED_SPLIT_ROW the mapping), over random rows
// starting argv[1] (0 to 3) floats past a 16-byte boundary (the row stride is
// the source's SX), each block in turn as its THREADS threads. A split row of
// one value a row (ROW_OUTPUT 0) runs twice, its blocks first in order and
// then backwards, so that another chunk's block finds itself last; the second
// call finds the workspace as the first left it. Compares every output with an
// fp64 reference within the operation's tolerance (row_reference.h). Exit 0
// when all are within it (and the counters are back at 0).
#include "emulated_blocks.h"
#include SRC
#include "row_reference.h"

// Blocks [0, blocks) of `threads` threads, one after another (last to first
// when backwards), each running body.
template <class Body>
static void launch(long long blocks, int threads, Body body, bool backwards = false) {
  for (long long i = 0; i < blocks; ++i) {
    std::barrier<> block(threads);
    tb_emulated_block_barrier = &block;
    tb_emulated_block(backwards ? blocks - 1 - i : i, threads, body);
  }
}

int main(int argc, char **argv) {
  const long long offset = tb_emulated_offset(argc, argv);
  tb_emulated_rows c(offset);
  float *x = c.x, *w = c.w.data(), *bias = c.bias.data(), *out = c.out.data();
#if defined(TB_EMULATED_SPLIT_ROW) && ROW_OUTPUT
  // every partial's words, NaN until written (a merge that reads one unwritten shows)
  std::vector<float> workspace(M * K * tb_row_op::words, NAN);
  launch(M * K, THREADS, [&] { tb_partials(x, nullptr, w, bias, out, workspace.data()); });
  launch(M * K, FINISH_THREADS, [&] { tb_finish(x, nullptr, w, bias, out, workspace.data()); });
  return c.report(offset, M * K, THREADS);
#elif defined(TB_EMULATED_SPLIT_ROW)
  // the partials, NaN until written, then a counter a row, zeroed as the case's load zeroes it
  const long long statistics = M * K * tb_row_op::words;
  std::vector<float> workspace(statistics + M, NAN);
  unsigned *counters = reinterpret_cast<unsigned *>(workspace.data() + statistics);
  std::fill(counters, counters + M, 0u);
  int status = 0;
  for (bool backwards : {false, true}) {
    printf("  blocks %s:\n", backwards ? "last to first" : "in order");
    std::fill(c.out.begin(), c.out.end(), NAN);
    launch(M * K, THREADS, [&] { tb_main(x, nullptr, w, bias, out, workspace.data()); },
           backwards);
    status |= c.report(offset, M * K, THREADS);
  }
  for (long long r = 0; r < M; ++r) {
    if (counters[r] != 0) {
      printf("  row %lld's counter left at %u\n", r, counters[r]);
      status = 1;
    }
  }
  return status;
#else
  launch(M, THREADS, [&] { tb_main(x, nullptr, w, bias, out, nullptr); });
  return c.report(offset, M, THREADS);
#endif
}
