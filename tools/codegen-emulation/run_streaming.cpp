// Runs one block-streaming or split-row source, made host C++ by
// streaming_source.py (SRC, its path, a -D of the compiler; TB_EMULATED_OP_<OP>
// names the operation, TB_EMULATED_SPLIT_ROW the mapping's two launches),
// over random rows starting argv[1] (0 to 3) floats past a 16-byte boundary
// (the row stride is the source's SX), each block in turn as its THREADS
// threads. Compares every output with an fp64 reference within the
// operation's tolerance (row_reference.h). Exit 0 when all are within it.
#include "emulated_blocks.h"
#include SRC
#include "row_reference.h"

// Blocks [0, blocks) of `threads` threads, one after another, each running body.
template <class Body> static void launch(long long blocks, int threads, Body body) {
  for (long long b = 0; b < blocks; ++b) {
    std::barrier<> block(threads);
    tb_emulated_block_barrier = &block;
    tb_emulated_block(b, threads, body);
  }
}

int main(int argc, char **argv) {
  const long long offset = tb_emulated_offset(argc, argv);
  tb_emulated_rows c(offset);
  float *x = c.x, *w = c.w.data(), *bias = c.bias.data(), *out = c.out.data();
#if defined(TB_EMULATED_SPLIT_ROW)
  // every partial's words, NaN until written (a merge that reads one unwritten shows)
  std::vector<float> workspace(M * K * 4, NAN);
  launch(M * K, THREADS, [&] { tb_partials(x, nullptr, w, bias, out, workspace.data()); });
  const long long finish_blocks = ROW_OUTPUTS == 1 ? (M + FINISH_THREADS - 1) / FINISH_THREADS
                                                   : M * K;
  launch(finish_blocks, FINISH_THREADS,
         [&] { tb_finish(x, nullptr, w, bias, out, workspace.data()); });
  return c.report(offset, M * K, THREADS);
#else
  launch(M, THREADS, [&] { tb_main(x, nullptr, w, bias, out, nullptr); });
  return c.report(offset, M, THREADS);
#endif
}
