// Runs one register-rows source, made host C++ by register_rows_source.py
// (SRC, its path, a -D of the compiler; TB_EMULATED_OP_<OP> names the
// operation), over random rows starting argv[1] (0 to 3) floats past a 16-byte
// boundary (the row stride is the source's SX), each block in turn as THREADS
// threads.
// Compares every output with an fp64 reference within the operation's
// tolerance (row_reference.h). Exit 0 when all are within it.
#include "emulated_blocks.h"
#include SRC
#include "row_reference.h"

int main(int argc, char **argv) {
  const long long offset = tb_emulated_offset(argc, argv);
  tb_emulated_rows c(offset);
  const long long blocks = (M + P - 1) / P;
  for (long long b = 0; b < blocks; ++b) {
    std::barrier<> block(THREADS);
    tb_emulated_block_barrier = &block;
    tb_emulated_block(b, THREADS, [&] {
      tb_main(c.x, nullptr, c.w.data(), c.bias.data(), c.out.data(), nullptr);
    });
  }
  return c.report(offset, blocks, THREADS);
}
