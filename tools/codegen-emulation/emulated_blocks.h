// What a persistent-row kernel (src/codegen/kernels/persistent_row.cuh) uses
// beyond emulated_cuda.h: block barriers, shared memory, global atomics and
// fences, cache-hinted loads and stores. A block is a process of its own
// (run_persistent.cpp forks one per block, every block resident at once, as
// the cooperative launch makes them), so a function-local `static` is the
// block's shared memory; global memory is a shared mapping made before the
// fork, where atomics work across processes. Checks arithmetic, indexing, masks,
// the ring's slots and the grid barrier's counting. Not ordering: cp.async
// copies land as they are issued (the earliest the hardware may), so a missing
// wait goes unseen, and a block's statistics slot rewritten before a slower
// block has read it went unseen in a planted test (compute-sanitizer's
// racecheck on the GPU is what covers those).
#include <atomic>
#include <sched.h>
#include <unistd.h>

#include "emulated_cuda.h"

#define __shared__ static

static std::barrier<> *tb_emulated_block_barrier;  // THREADS arrivals, per block process
static inline void __syncthreads() { tb_emulated_block_barrier->arrive_and_wait(); }

// extern __shared__ (dynamic shared memory), per block process: as much as a
// multiprocessor has
alignas(16) static float4 tb_emulated_dynamic[228 * 1024 / sizeof(float4)];

#define __expf(x) std::exp((float)(x))  // glibc declares __expf but does not export it
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
static inline float __fdividef(float a, float b) { return a / b; }

static_assert(std::atomic_ref<unsigned>::is_always_lock_free &&
                  std::atomic_ref<float>::is_always_lock_free,
              "atomics across the block processes need lock-free atomics");

template <class T> static inline T __ldcg(const T *p) {
  return std::atomic_ref<T>(*const_cast<T *>(p)).load(std::memory_order_relaxed);
}
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline void __stwb(T *p, T v) { *p = v; }
static inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <class T> static inline T atomicAdd(T *p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v, std::memory_order_acq_rel);
}
[[noreturn]] static inline void __trap() { std::abort(); }

// What persistent_source.py puts where the kernel has inline PTX.
template <class T> static inline T tb_emulated_load_acquire(const T *p) {
  sched_yield();  // a poller on 2 cores leaves the blocks it waits for room to arrive
  return std::atomic_ref<T>(*const_cast<T *>(p)).load(std::memory_order_acquire);
}
template <class T> static inline T tb_emulated_load_relaxed(const T *p) {
  return std::atomic_ref<T>(*const_cast<T *>(p)).load(std::memory_order_relaxed);
}
// A shared-memory address as cp.async takes it: here the offset into the
// block's dynamic shared memory (the only shared memory the copies write).
static inline unsigned long long __cvta_generic_to_shared(const void *p) {
  return (unsigned long long)(static_cast<const char *>(p) -
                              reinterpret_cast<const char *>(tb_emulated_dynamic));
}
// cp.async of `bytes` (0 to size) from src to shared address d, the rest of
// `size` bytes zero: landed at once.
static inline void tb_emulated_copy_async(unsigned d, const void *src, unsigned bytes,
                                          unsigned size) {
  char *dst = reinterpret_cast<char *>(tb_emulated_dynamic) + d;
  std::memset(dst, 0, size);
  if (bytes) std::memcpy(dst, src, bytes);
}
