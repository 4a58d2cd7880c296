/* The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so one
 * tilebench binary runs on machines with and without a GPU and says plainly
 * which it found. */
#ifndef TB_BACKENDS_CUDA_DRIVER_H
#define TB_BACKENDS_CUDA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#ifdef TB_HAVE_CUDA_HEADERS
#include <cuda.h>

/* Entry points by their exported (versioned) symbol names. */
struct tb_cuda {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuStreamCreate)(CUstream *, unsigned int);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void **);
  /* CUDA graphs of a batch of calls (backends/cuda/graph.h) */
  CUresult (*cuStreamBeginCapture)(CUstream, CUstreamCaptureMode);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  /* optional (NULL when the driver lacks it): the device's UUID, which tells
   * two GPUs of one model apart in the provenance */
  CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
  /* optional: TMA tensor maps (CUDA 12), which the single-launch wgmma gemm
   * takes; without it the planner keeps the packed one */
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                     const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
};

/* The loaded table, or NULL when there is no usable driver. */
const struct tb_cuda *tb_cuda(void);

/* Device 0's primary context, retained and made current on this thread
 * (released with cuDevicePrimaryCtxRelease(dev)). */
CUresult tb_cuda_enter_device0(const struct tb_cuda *cu, CUdevice *dev, CUcontext *ctx);

/* "cuFoo failed: <driver's text>" into err; returns TB_ERR_RUN. */
enum tb_status tb_cuda_fail(struct tb_error *err, const char *call, CUresult rc);

/* Tests: `table` (a fake driver) becomes the loaded table, so the CUDA
 * providers can be built and planned without a GPU. */
void tb_cuda_driver_install(const struct tb_cuda *table);
#endif

/* Loads the driver and calls cuInit. TB_ERR_UNAVAILABLE, with the reason,
 * when there is no driver, no device, or this build lacks CUDA headers. */
enum tb_status tb_cuda_driver_open(struct tb_error *err);

#define TB_MAX_GPUS 64 /* devices described; more are left out */

/* One device as the run's provenance describes it. */
struct tb_gpu_facts {
  int ordinal;
  bool ok; /* false: cuDeviceGet failed, only the ordinal is known */
  char name[256];
  /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi prints it; "" unknown */
  char uuid[48];
  int cc_major, cc_minor, multiprocessors, l2_bytes, max_sm_clock_khz;
  size_t memory_bytes;
};

/* The driver and its devices, or why there is no GPU. */
struct tb_gpu_inventory {
  bool available;
  char reason[1024]; /* when not available */
  char driver_cuda_version[32];
  int count;
  struct tb_gpu_facts devices[TB_MAX_GPUS];
};

/* Driver version and every device's name, UUID (where the driver gives it),
 * compute capability, SM count, L2 size and memory (cli/gpu_json.h writes
 * them); or why not available. */
void tb_cuda_inventory_read(struct tb_gpu_inventory *out);

#endif
