/* A user kernel library for the CUDA backend (`tilebench run --backend cuda
 * --providers native,user --kernel libsoftmax_cuda.so --ops softmax`): every
 * pointer is a device pointer into the buffer set of the call, and the kernel
 * is enqueued on the stream tilebench passes (args->stream, a CUstream, the
 * same object as a cudaStream_t) and not waited for, so the device phase's
 * events, its graph capture and the probe see exactly this work. */
#include "softmax_rows.cuh"

extern "C" {

uint32_t tb_user_kernel_abi_version(void) {
  return TB_KERNEL_ABI_VERSION;
}

uint32_t tb_user_kernel_flags(void) {
  return TB_KERNEL_ACCEPTS_STRIDED_ROWS; /* scalar loads: any stride, any alignment */
}

const char *tb_user_kernel_description(void) {
  return "example: CUDA softmax, one 256-thread block per row, three passes, float";
}

int tb_user_softmax(const struct tb_kernel_args *a) {
  return launch_softmax_rows(a, (cudaStream_t)a->stream);
}
}
