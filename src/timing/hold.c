#include "timing/hold.h"

#include <stddef.h>

/* PTX, not a cubin: the driver compiles it for whatever GPU runs it, so the
 * library needs neither NVRTC nor a build per architecture. One thread spins
 * on words[0] with volatile loads (system-coherent, so the host's store is
 * seen) and gives up after timeout_ns of %globaltimer, marking words[1]. */
static const char hold_ptx[] = ".version 7.0\n"
                               ".target sm_70\n"
                               ".address_size 64\n"
                               ".visible .entry tb_timing_hold(.param .u64 words,"
                               " .param .u64 timeout_ns)\n"
                               "{\n"
                               "  .reg .pred %p<3>;\n"
                               "  .reg .b32 %r<3>;\n"
                               "  .reg .b64 %rd<8>;\n"
                               "  ld.param.u64 %rd1, [words];\n"
                               "  ld.param.u64 %rd2, [timeout_ns];\n"
                               "  cvta.to.global.u64 %rd3, %rd1;\n"
                               "  mov.u64 %rd4, %globaltimer;\n"
                               "$L_spin:\n"
                               "  ld.volatile.global.u32 %r1, [%rd3];\n"
                               "  setp.ne.s32 %p1, %r1, 0;\n"
                               "  @%p1 bra $L_done;\n"
                               "  mov.u64 %rd5, %globaltimer;\n"
                               "  sub.s64 %rd6, %rd5, %rd4;\n"
                               "  setp.lt.u64 %p2, %rd6, %rd2;\n"
                               "  @%p2 bra $L_spin;\n"
                               "  mov.u32 %r2, 1;\n"
                               "  st.volatile.global.u32 [%rd3+4], %r2;\n"
                               "$L_done:\n"
                               "  ret;\n"
                               "}\n";

CUresult tb_hold_prepare(struct tb_hold *h, const struct tb_timing_api *api, CUcontext context,
                         const char **step) {
  if (h->kernel != NULL && h->context == context) {
    return CUDA_SUCCESS;
  }
  /* A new context loads the module again (an earlier one's stays with its
   * context); the words are portable, mapped once for every context. */
  h->kernel = NULL;
  h->context = context;
  CUresult rc = CUDA_SUCCESS;
  if (h->words == NULL) {
    void *words = NULL;
    *step = "cuMemHostAlloc (the hold flag)";
    rc = api->cuMemHostAlloc(&words, 2 * sizeof(uint32_t),
                             CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    h->words = rc == CUDA_SUCCESS ? words : NULL;
  }
  if (rc == CUDA_SUCCESS) {
    *step = "cuMemHostGetDevicePointer (the hold flag)";
    rc = api->cuMemHostGetDevicePointer(&h->device_words, (void *)h->words, 0);
  }
  if (rc == CUDA_SUCCESS) {
    *step = "cuModuleLoadData (the hold kernel)";
    rc = api->cuModuleLoadData(&h->module, hold_ptx);
  }
  if (rc == CUDA_SUCCESS) {
    *step = "cuModuleGetFunction (the hold kernel)";
    rc = api->cuModuleGetFunction(&h->kernel, h->module, "tb_timing_hold");
  }
  if (rc != CUDA_SUCCESS) {
    h->kernel = NULL;
  }
  return rc;
}

CUresult tb_hold_launch(struct tb_hold *h, const struct tb_timing_api *api, CUstream stream,
                        uint64_t timeout_ns) {
  h->words[0] = 0;
  h->words[1] = 0;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  void *params[] = {&h->device_words, &timeout_ns};
  CUresult rc = api->cuLaunchKernel(h->kernel, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL);
  h->armed = rc == CUDA_SUCCESS;
  return rc;
}

void tb_hold_release(struct tb_hold *h) {
  if (h->armed) {
    __atomic_store_n(&h->words[0], 1u, __ATOMIC_SEQ_CST);
    h->armed = 0;
  }
}

int tb_hold_timed_out(const struct tb_hold *h) {
  return __atomic_load_n(&h->words[1], __ATOMIC_SEQ_CST) != 0;
}
