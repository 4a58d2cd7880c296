/* Returns an error code from every call: the case is invalid with it. */
#include <tilebench/kernel.h>

int tb_user_softmax(const struct tb_kernel_args *a) {
  return 7;
}
