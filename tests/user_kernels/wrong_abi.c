/* Declares a kernel ABI this tilebench does not speak: the run is refused. */
#include <tilebench/kernel.h>

uint32_t tb_user_kernel_abi_version(void) {
  return TB_KERNEL_ABI_VERSION + 1;
}

int tb_user_softmax(const struct tb_kernel_args *a) {
  return 0;
}
