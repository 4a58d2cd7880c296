/* Broken on purpose (GPU-only class "side stream"): the example's correct
 * softmax kernel, launched on a stream of the library's own instead of the
 * provider's, then waited for, so every output is right. The provider's
 * events never see the kernel (its control times an empty stream) and the
 * probe records it as a side-stream kernel: the defence launches_on_stream
 * must make the case invalid. Built with -I examples/user-kernel-cuda. */
#include "softmax_rows.cuh"

extern "C" {

uint32_t tb_user_kernel_flags(void) {
  return TB_KERNEL_ACCEPTS_STRIDED_ROWS;
}

int tb_user_softmax(const struct tb_kernel_args *a) {
  static cudaStream_t own; /* created at the first call, kept for the process */
  if (own == NULL && cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess) {
    return 3;
  }
  int rc = launch_softmax_rows(a, own);
  /* not ordered after the provider's stream: waiting on it here would never
   * return while a held sample keeps that stream blocked */
  return rc != 0 ? rc : (cudaStreamSynchronize(own) == cudaSuccess ? 0 : 4);
}
}
