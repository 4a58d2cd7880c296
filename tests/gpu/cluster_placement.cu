/* Where the hardware puts a cluster's blocks (issue 21). A cluster row of
 * 16 blocks may land on 16 multiprocessors or fewer, since more than one of
 * its blocks fits on one multiprocessor (the layernorm 8x65536 kernel's 116
 * registers a thread leave room for two blocks of 256); blocks sharing a
 * multiprocessor share its issue slots and load units. For each cluster
 * size, scheduling policy (default, spread, load balancing) and room on a
 * multiprocessor (1 block, 2 blocks, or as many as 256 threads allow, set by
 * dynamic shared memory), launches 128 blocks, each recording its
 * multiprocessor and the global timer at its start and after a cluster
 * barrier, and prints: the clusters the driver says can be resident at once,
 * the multiprocessors used, the most blocks on one, and whether any cluster
 * started after another had finished (a second wave).
 * Writes JSON lines to argv[1] (whole, or not at all); exit 2 on bad
 * arguments or an output it cannot write, 1 when a CUDA call fails. Built by
 * scripts/gpu-pack.sh (nvcc, cudart linked statically); run by
 * scripts/gpu.sh (stage cluster-placement). */
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cg = cooperative_groups;

enum { BLOCKS = 128, THREADS = 256, SPIN_NS = 4000, MAX_SM = 1024 };

static __device__ __forceinline__ unsigned sm_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
static __device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Every block waits SPIN_NS so that the blocks of one launch overlap, then
// meets its cluster at a barrier (as a cluster row does).
__global__ void __launch_bounds__(THREADS) place(unsigned *sm, unsigned long long *start,
                                                 unsigned long long *end) {
  const unsigned long long t0 = global_ns();
  if (threadIdx.x == 0) {
    sm[blockIdx.x] = sm_id();
    start[blockIdx.x] = t0;
  }
  while (global_ns() - t0 < SPIN_NS) {
  }
  cg::this_cluster().sync();
  if (threadIdx.x == 0) end[blockIdx.x] = global_ns();
}

static bool check(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess) {
    fprintf(stderr, "cluster_placement: %s: %s\n", what, cudaGetErrorString(rc));
    return false;
  }
  return true;
}

struct config {
  unsigned cluster;
  cudaClusterSchedulingPolicy policy;
  const char *policy_name;
  unsigned blocks_per_sm; /* 0: as many as the threads allow */
};

/* Dynamic shared memory that leaves room for exactly `per_sm` blocks. */
static size_t shared_for(unsigned per_sm, size_t sm_bytes, size_t block_max) {
  if (per_sm == 0) return 0;
  size_t bytes = sm_bytes / per_sm - 1024 * per_sm; /* the 1 KiB each block reserves */
  size_t floor = sm_bytes / (per_sm + 1) + 1024;    /* one more block must not fit */
  if (bytes > block_max) bytes = block_max;
  return bytes > floor ? bytes : floor;
}

static bool run(FILE *json, const config &c, const cudaDeviceProp &prop, unsigned *d_sm,
                unsigned long long *d_start, unsigned long long *d_end) {
  size_t smem = shared_for(c.blocks_per_sm, prop.sharedMemPerMultiprocessor,
                           prop.sharedMemPerBlockOptin);
  if (!check(cudaFuncSetAttribute(place, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
             "non-portable clusters") ||
      !check(cudaFuncSetAttribute(place, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
             "dynamic shared memory"))
    return false;
  cudaLaunchAttribute attrs[2];
  attrs[0].id = cudaLaunchAttributeClusterDimension;
  attrs[0].val.clusterDim.x = c.cluster;
  attrs[0].val.clusterDim.y = 1;
  attrs[0].val.clusterDim.z = 1;
  attrs[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
  attrs[1].val.clusterSchedulingPolicyPreference = c.policy;
  cudaLaunchConfig_t launch = {};
  launch.gridDim = dim3(BLOCKS);
  launch.blockDim = dim3(THREADS);
  launch.dynamicSmemBytes = smem;
  launch.attrs = attrs;
  launch.numAttrs = 2;
  int resident = -1;
  if (!check(cudaOccupancyMaxActiveClusters(&resident, place, &launch), "max active clusters"))
    return false;
  enum { REPEATS = 5 };
  unsigned used_min = ~0U, used_max = 0, most_max = 0, waves = 0;
  for (int r = 0; r < REPEATS; ++r) {
    if (!check(cudaLaunchKernelEx(&launch, place, d_sm, d_start, d_end), "launch") ||
        !check(cudaDeviceSynchronize(), "synchronize"))
      return false;
    unsigned sm[BLOCKS];
    unsigned long long start[BLOCKS], end[BLOCKS];
    if (!check(cudaMemcpy(sm, d_sm, sizeof sm, cudaMemcpyDeviceToHost), "copy") ||
        !check(cudaMemcpy(start, d_start, sizeof start, cudaMemcpyDeviceToHost), "copy") ||
        !check(cudaMemcpy(end, d_end, sizeof end, cudaMemcpyDeviceToHost), "copy"))
      return false;
    static unsigned on_sm[MAX_SM];
    memset(on_sm, 0, sizeof on_sm);
    unsigned used = 0, most = 0;
    unsigned long long first_start = ~0ULL, last_start = 0, first_end = ~0ULL;
    for (int b = 0; b < BLOCKS; ++b) {
      unsigned s = sm[b] < MAX_SM ? sm[b] : MAX_SM - 1;
      if (on_sm[s]++ == 0) ++used;
      if (on_sm[s] > most) most = on_sm[s];
      if (start[b] < first_start) first_start = start[b];
      if (start[b] > last_start) last_start = start[b];
      if (end[b] < first_end) first_end = end[b];
    }
    bool second_wave = last_start > first_end;
    used_min = used < used_min ? used : used_min;
    used_max = used > used_max ? used : used_max;
    most_max = most > most_max ? most : most_max;
    waves += second_wave;
    fprintf(json,
            "{\"cluster\": %u, \"policy\": \"%s\", \"blocks_per_sm_room\": %u, "
            "\"dynamic_shared_bytes\": %zu, \"repeat\": %d, \"max_active_clusters\": %d, "
            "\"sms_used\": %u, \"most_blocks_on_one_sm\": %u, \"start_spread_ns\": %llu, "
            "\"second_wave\": %s, \"sm\": [",
            c.cluster, c.policy_name, c.blocks_per_sm, smem, r, resident, used, most,
            last_start - first_start, second_wave ? "true" : "false");
    for (int b = 0; b < BLOCKS; ++b) fprintf(json, "%s%u", b ? ", " : "", sm[b]);
    fprintf(json, "]}\n");
  }
  printf("cluster %2u  %-14s  room %-3s  resident clusters %3d  SMs used %3u-%3u  "
         "most blocks on one SM %u  second waves %u of %d\n",
         c.cluster, c.policy_name,
         c.blocks_per_sm == 0 ? "max" : (c.blocks_per_sm == 1 ? "1" : "2"), resident, used_min,
         used_max, most_max, waves, (int)REPEATS);
  return true;
}

// Every placement into OUT.partial, renamed to OUT only when all ran and were
// written: a failed or cut run leaves no file that looks complete.
static bool place_all(FILE *json) {
  cudaDeviceProp prop;
  if (!check(cudaGetDeviceProperties(&prop, 0), "device properties")) return false;
  printf("%s: %d SMs, %zu B shared memory an SM, %zu B a block at most\n", prop.name,
         prop.multiProcessorCount, prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlockOptin);
  unsigned *d_sm;
  unsigned long long *d_start, *d_end;
  if (!check(cudaMalloc(&d_sm, BLOCKS * sizeof(unsigned)), "malloc") ||
      !check(cudaMalloc(&d_start, BLOCKS * sizeof(unsigned long long)), "malloc") ||
      !check(cudaMalloc(&d_end, BLOCKS * sizeof(unsigned long long)), "malloc"))
    return false;
  const struct {
    cudaClusterSchedulingPolicy policy;
    const char *name;
  } policies[] = {{cudaClusterSchedulingPolicyDefault, "default"},
                  {cudaClusterSchedulingPolicySpread, "spread"},
                  {cudaClusterSchedulingPolicyLoadBalancing, "load-balancing"}};
  const unsigned clusters[] = {16, 8};
  const unsigned rooms[] = {2, 0, 1};
  bool ok = true;
  for (unsigned cluster : clusters)
    for (unsigned room : rooms)
      for (const auto &p : policies)
        ok = ok && run(json, {cluster, p.policy, p.name, room}, prop, d_sm, d_start, d_end);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cluster_placement OUT.jsonl\n");
    return 2;
  }
  char partial[4096];
  if (snprintf(partial, sizeof partial, "%s.partial", argv[1]) >= (int)sizeof partial) {
    fprintf(stderr, "cluster_placement: the output path is too long\n");
    return 2;
  }
  FILE *json = fopen(partial, "w");
  if (!json) {
    perror(partial);
    return 2;
  }
  bool ok = place_all(json);
  ok = fclose(json) == 0 && ok;
  if (!ok || rename(partial, argv[1]) != 0) {
    if (ok) perror(argv[1]);
    remove(partial);
    return 1;
  }
  return 0;
}
