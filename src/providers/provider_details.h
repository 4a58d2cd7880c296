/* What a provider knows of the case it prepared, as typed facts: how the
 * code was built (compilation, kernels, registers), the buffers it rotates,
 * the library or framework it called. The measurement layer keeps them in
 * the case record and results/provider_json.c writes them ("provider_details"
 * of docs/results-schema.md); no provider writes JSON itself. */
#ifndef TB_PROVIDERS_PROVIDER_DETAILS_H
#define TB_PROVIDERS_PROVIDER_DETAILS_H

#include <stdbool.h>
#include <stddef.h>

#define TB_DETAILS_MAX_KERNELS 4
#define TB_DETAILS_MAX_ENV 8

enum tb_details_kind {
  TB_DETAILS_NONE = 0, /* nothing reported (or a zeroed record): null in the results */
  TB_DETAILS_CPU,
  TB_DETAILS_CUDA_NATIVE,
  TB_DETAILS_CUBLAS,
  TB_DETAILS_TORCH,
  TB_DETAILS_USER,
};

/* A fact a worker may leave out or send as null: kept as it came. */
enum tb_fact_state { TB_FACT_ABSENT, TB_FACT_NULL, TB_FACT_SET };

struct tb_text_fact {
  enum tb_fact_state state;
  char *text; /* owned, when set */
};

struct tb_integer_fact {
  enum tb_fact_state state;
  long long value;
};

struct tb_number_fact {
  enum tb_fact_state state;
  double value;
};

struct tb_boolean_fact {
  enum tb_fact_state state;
  bool value;
};

/* The buffer sets a provider rotates through (cold or warm L2). */
struct tb_buffer_facts {
  char policy[128];
  long long sets;
  long long bytes_per_set, total_bytes;
  long long l2_bytes;
  char state[64]; /* "cold", "warm", or a worker's own word */
};

struct tb_cpu_details {
  const char *executes; /* static text */
  unsigned lanes;
};

struct tb_kernel_facts {
  char name[32];
  unsigned threads_per_block;
  unsigned long long blocks;
  unsigned static_shared_bytes, dynamic_shared_bytes;
  int registers, local_bytes; /* as the driver reports them for the loaded function */
};

/* What a device must offer to run the kernels. */
struct tb_capability_contract {
  int min_cc_major, min_cc_minor;
  bool arch_specific;
  unsigned threads_per_block;
  unsigned static_shared_bytes, dynamic_shared_bytes;
};

/* One NVRTC compilation and module load (shared by every case that
 * generates the same source: the module cache's entry). */
struct tb_compile_facts {
  char nvrtc_version[32];
  char options[256];
  double compile_ms, load_ms;
  long long spill_store_bytes, spill_load_bytes, stack_frame_bytes; /* -1: not reported */
  int max_registers;
  char nvrtc_path[512];
};

struct tb_cuda_native_details {
  char source_sha256[65];
  unsigned barrier_sites;
  unsigned kernel_count;
  struct tb_kernel_facts kernels[TB_DETAILS_MAX_KERNELS];
  struct tb_capability_contract contract;
  bool module_cache_hit;
  bool compiled; /* `compile` holds the module's facts */
  struct tb_compile_facts compile;
  struct tb_buffer_facts buffers;
  char device[256];
};

struct tb_cublas_details {
  char library[4096];
  int version;
  const char *call;      /* static text */
  const char *math_mode; /* static text: the cublasMath_t name */
  const char *precision; /* "fp32" or "tf32" */
  bool has_tf32_override;
  char tf32_override[64]; /* $NVIDIA_TF32_OVERRIDE, when set */
  struct tb_buffer_facts buffers;
  char device[256];
};

struct tb_env_fact {
  char *name; /* owned */
  struct tb_text_fact value;
};

/* The worker's handshake: versions, configuration, threads. */
struct tb_torch_worker_facts {
  struct tb_text_fact torch, cuda_version, device, config;
  struct tb_boolean_fact cuda, timing;
  struct tb_integer_fact cudnn, threads, interop_threads;
  bool has_thread_env;
  unsigned env_count;
  struct tb_env_fact thread_env[TB_DETAILS_MAX_ENV];
};

/* The user-python provider's callable: which file ran, and what in it. */
struct tb_python_callable_facts {
  char module_path[4096]; /* the resolved path the worker imported */
  char file_name[256];    /* its last component, as the report labels it */
  char sha256[65];        /* of the bytes the worker executed */
  char function[256];     /* as --kernel named it */
  char qualname[256];     /* the callable's __qualname__ */
};

struct tb_torch_details {
  bool has_worker; /* false: null (the worker never answered) */
  struct tb_torch_worker_facts worker;
  struct tb_text_fact implementation;
  struct tb_number_fact compile_ms;
  bool has_buffers; /* false: null */
  struct tb_buffer_facts buffers;
  bool torch_compile;
  bool has_callable; /* user-python only */
  struct tb_python_callable_facts callable;
};

/* A user's kernel library (include/tilebench/kernel.h): which file ran. */
struct tb_user_details {
  char library[4096];    /* the resolved path that was loaded */
  char file_name[256];   /* its last component, as the report labels it */
  char sha256[65];       /* of the file, read when the provider was created */
  char symbol[64];       /* the function this case called: tb_user_<op> */
  unsigned abi_version;  /* declared, or 1 */
  bool abi_declared;     /* the library exports tb_user_kernel_abi_version */
  bool accepts_strided;  /* TB_KERNEL_ACCEPTS_STRIDED_ROWS was declared */
  char description[256]; /* tb_user_kernel_description(), or empty */
  bool has_buffers;      /* CUDA backend: the buffer sets and the device */
  struct tb_buffer_facts buffers;
  char device[256];
  /* A CUDA source kernel (--kernel X.cu): how NVRTC compiled it (the log cut
   * to its start) and how this case launched it. */
  bool from_source;
  struct tb_compile_facts compile;
  char compile_log[2048];
  char launch[512]; /* the description, as given */
  unsigned grid[3], block[3], dynamic_shared_bytes;
};

struct tb_provider_details {
  enum tb_details_kind kind;
  union {
    struct tb_cpu_details cpu;
    struct tb_cuda_native_details cuda;
    struct tb_cublas_details cublas;
    struct tb_torch_details torch;
    struct tb_user_details user;
  } as;
};

/* The buffer sets the provider rotated (their count, bytes, and whether
 * cold), or NULL where it records none. */
const struct tb_buffer_facts *tb_provider_details_buffers(const struct tb_provider_details *d);

/* Frees the owned texts (torch facts) and leaves kind TB_DETAILS_NONE. */
void tb_provider_details_free(struct tb_provider_details *d);

/* A copy of `text` (NULL stays NULL) for a text fact. */
struct tb_text_fact tb_text_fact_of(const char *text);

#endif
