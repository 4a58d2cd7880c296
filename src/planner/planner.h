/* The reduction planner: pure C, no GPU. For a row reduction (sum, softmax,
 * rmsnorm, layernorm) over an m x n matrix it enumerates the execution
 * mappings of docs/method.md §7, records every derived fact and every rejection,
 * and picks one by the active cost profile. Every fact can be re-derived from
 * (op, m, n, device limits, variant); the audit does exactly that. */
#ifndef TB_PLANNER_PLANNER_H
#define TB_PLANNER_PLANNER_H

#include <stdbool.h>
#include <stddef.h>

#include "cases/case_params.h"
#include "cases/ops.h"
#include "core/error.h"

#define TB_PLANNER_PROFILE_ANALYTIC "analytic" /* docs/method.md §7 as written */
/* §7's formula with the per-block term 32/p instead of 16/p, measured on the
 * H200 (docs/planner.md); every accepted candidate competes. */
#define TB_PLANNER_PROFILE_CALIBRATED "calibrated"
/* calibrated's score, and two preferences the planner-regret run measured on
 * the H200 (docs/planner.md): whole groups first, and on grids beyond the
 * resident threads, threads that read enough to keep memory busy. The
 * default of `run`, `replay` and `plan`. */
#define TB_PLANNER_PROFILE_CALIBRATED_2 "calibrated-2"
#define TB_PLANNER_PROFILE_DEFAULT TB_PLANNER_PROFILE_CALIBRATED_2
#define TB_PLANNER_CANDIDATES 39 /* s = 1 with p = 1..8, then s = 2..32 with p = 1 */
#define TB_PLANNER_MAX_SUBGROUPS 32
#define TB_PLANNER_MAX_PACKING 8
#define TB_PLANNER_MAX_THREADS 1024
#define TB_PLANNER_MAX_STORAGE 64 /* registers per worker for the cached row */
#define TB_PLANNER_ROWS_PER_WAVE 64
/* Threads one multiprocessor holds at once (compute capability 9.0): a grid
 * of more than this times the multiprocessors runs in several waves. */
#define TB_PLANNER_SM_THREADS 2048
/* calibrated-2: on such a grid, a thread should read at least this many bytes
 * from memory (two 16-byte loads) before its first reduction. */
#define TB_PLANNER_MIN_THREAD_READ 32

/* How a plan maps rows onto the GPU. */
enum tb_mapping {
  TB_MAPPING_REGISTER_ROWS,   /* docs/method.md §7: s warps per row, p rows per block, row in
                                 registers */
  TB_MAPPING_BLOCK_STREAMING, /* one block per row, the row re-read from memory on each pass */
  TB_MAPPING_SPLIT_ROW,       /* each row split over several blocks; partial results combined */
  TB_MAPPING_CLUSTER_ROW,     /* each row split over one thread-block cluster; partials combined in
                                 distributed shared memory, in one launch */
  TB_MAPPING_SUBWARP_ROWS,    /* very short rows: g < 32 lanes a row, 32/g rows a warp, the row in
                                 registers */
  TB_MAPPING_PERSISTENT_ROW,  /* rows too long for a cluster's shared memory: every block resident,
                                 in groups of blocks_per_row, each group taking a row at a time;
                                 chunks in shared memory, partials combined through global memory */
};

const char *tb_mapping_name(enum tb_mapping m);

/* What the planner knows of the device. Unknown limits reject nothing; the
 * multiprocessor count then defaults to the H200's and says so. */
struct tb_device_limits {
  bool known;
  unsigned max_threads_per_block;
  unsigned max_shared_bytes_per_block;
  unsigned multiprocessors;
  const char *source; /* "device", "H200 reference" or "default (H200: 132 SMs)" */
  unsigned max_registers_per_block;
  /* Most thread blocks one cluster may hold (compute capability 9.0 and
   * newer: 16 with non-portable sizes allowed); 0 without clusters. */
  unsigned cluster_blocks;
  /* Shared memory of one multiprocessor (228 KiB at compute capability
   * 9.0); 0: unknown. */
  unsigned shared_bytes_per_multiprocessor;
};

/* Registers a register-rows thread needs beyond its cached floats (the
 * slots): addresses, indices, statistics, the weight/bias/result group of the
 * output pass. Calibrated on ptxas reports for sm_90 (sum ~10 at 40 slots;
 * softmax 30 and rmsnorm 29 at 32 slots; layernorm 34 at 32 slots; rmsnorm 36
 * at 56 slots), rounded up. No kernel the planner accepts may spill (CI). */
unsigned tb_register_overhead(enum tb_op op);

/* Registers one thread can have in a block of `threads` when the block has
 * `per_block`: warps get registers in groups of 4 warps, 8 registers at a
 * time, at most 255 (matches ptxas: 736 threads -> 80). */
unsigned tb_register_budget(unsigned threads, unsigned per_block);

struct tb_device_limits tb_device_limits_default(void);
/* The H200's limits (what CI compiles for when no GPU is present). */
struct tb_device_limits tb_device_limits_h200(void);

/* Bytes each element costs, by operation (the payload model). Global bytes
 * move through device memory; private bytes are register traffic of the
 * cached row. Per program = per element x n; per worker = per element x slots. */
struct tb_payload {
  unsigned global_read;   /* input element, plus weight/bias elements */
  unsigned global_write;  /* output element (0 for sum: one value per row) */
  unsigned private_write; /* values stored per cached element */
  unsigned private_read;  /* reads of cached values over all passes */
};

struct tb_payload tb_payload_for(enum tb_op op);

struct tb_candidate {
  unsigned index; /* position in enumeration order, 0..38 */
  unsigned subgroups, packing;
  unsigned width, threads, slots, reductions, rounds, storage;
  double score;
  unsigned long long waves;
  double kernel_score;
  unsigned shared_bytes, barrier_sites;
  double lane_utilisation;
  unsigned independent_subgroups; /* warps per block that reduce a row alone (s = 1) */
  unsigned long long thread_blocks;
  /* calibrated-2's facts: the row in whole groups (width * slots = n: no
   * lane idle in the last pass), the bytes a thread reads from memory (slots
   * x the payload's global read an element) and the grid's threads */
  bool whole_groups;
  unsigned long long thread_read_bytes, grid_threads;
  /* payload bytes: per program (one row) and per worker (one lane) */
  unsigned long long program_global_read, program_global_write;
  unsigned long long program_private_read, program_private_write;
  unsigned long long worker_private_read, worker_private_write;
  bool rejected;
  char rejection[160]; /* every reason, "; "-separated */
};

/* Facts of the non-register mappings. */
struct tb_stream_facts {
  unsigned threads_per_block;
  unsigned blocks_per_row;           /* 1 for block streaming */
  unsigned long long chunk_elements; /* elements of a row one block handles */
  unsigned long long thread_blocks;  /* of the first (or only) launch */
  unsigned memory_passes;            /* reads of each input element from memory */
  unsigned launches;                 /* kernels per call */
  unsigned shared_bytes;
  unsigned barrier_sites;
  unsigned cluster_blocks; /* blocks per cluster (cluster row: blocks_per_row), else 0 */
  /* cluster row: bytes of dynamic shared memory that hold the block's chunk
   * (read once from memory, the output written from there), else 0 */
  unsigned cache_shared_bytes;
  /* persistent row: groups of blocks_per_row blocks, group g taking rows g,
   * g + row_groups, ...; else 0 */
  unsigned row_groups;
};

/* Facts of subwarp rows (very short rows, docs/planner.md): each row is
 * reduced by `lanes` lanes of a warp, element e of the row by lane e mod
 * lanes, so a warp holds 32/lanes consecutive rows and a block
 * threads_per_block/lanes of them. */
struct tb_subwarp_facts {
  unsigned lanes;                       /* g: a power of two, 1..16 */
  unsigned slots;                       /* elements a lane caches: ceil(n/g) */
  unsigned rows_per_warp;               /* 32/g */
  unsigned threads_per_block;           /* TB_SUBWARP_THREADS */
  unsigned rows_per_block;              /* threads_per_block/g */
  unsigned long long thread_blocks;     /* ceil(m/rows_per_block) */
  unsigned reductions;                  /* 1 (sum, rmsnorm) or 2 (softmax, layernorm) */
  unsigned shuffle_levels;              /* log2 g a reduction */
  double lane_utilisation;              /* n / (g * slots) */
  unsigned shared_bytes, barrier_sites; /* 0: a row never leaves its warp */
};

struct tb_plan {
  enum tb_op op;
  size_t m, n;
  enum tb_variant variant;
  const char *profile;   /* "analytic", "calibrated" or "calibrated-2" */
  unsigned block_weight; /* the profile's per-block term: score has block_weight / p */
  /* the profile's preferences before the least kernel score (calibrated-2):
   * whole groups where any candidate has them; then, where any has, threads
   * that read at least min_thread_read bytes or whose grid fits in one wave */
  bool whole_groups_first;
  unsigned min_thread_read;
  const char *cost_basis; /* what the score means */
  struct tb_device_limits limits;
  struct tb_candidate candidates[TB_PLANNER_CANDIDATES];
  unsigned candidate_count, rejected_count;
  int best_register; /* least kernel score among accepted (and preferred), or -1 */
  enum tb_mapping mapping;
  /* For register rows: the selected (s, p) with all its facts. A fixed
   * variant is evaluated by the same formulas even when it is not among the
   * 39 enumerated candidates (candidate = (s 2, p 4) is not). */
  struct tb_candidate selected;
  int chosen; /* enumeration index of `selected`, or -1 (off-list or not register rows) */
  struct tb_candidate fixed; /* fixed variants (reference, candidate, sSpP): their own evaluation,
                                accepted or not; rejected, the plan is block streaming */
  const char *rule;          /* which rule chose the mapping */
  struct tb_stream_facts stream;   /* for block streaming, split row and cluster row */
  struct tb_subwarp_facts subwarp; /* for subwarp rows */
};

/* Split-row thresholds: rows shorter than this stay on one block; fewer rows
 * than multiprocessors count as "few". */
#define TB_SPLIT_MIN_ROW 8192
#define TB_SPLIT_MIN_CHUNK 2048
#define TB_STREAM_THREADS 512
#define TB_SPLIT_THREADS 256
/* Split rows of one value a row (sum) take one launch, the row's last block
 * merging its partials: recorded in the plan's constants, so that the audit
 * tells these records from those of the builds before, which took two. */
#define TB_SPLIT_LAST_BLOCK_MERGES true
/* A cluster row needs its clusters to fill at least 1/TB_CLUSTER_MIN_FILL of
 * the multiprocessors; fewer rows take the split row. */
#define TB_CLUSTER_MIN_FILL 2
/* A cluster row keeps its chunk in registers (read once from memory) when a
 * thread's share is at most this many floats; longer chunks go to shared
 * memory (below) where they fit, else stream twice. */
#define TB_CLUSTER_CACHE_FLOATS 32
/* A longer chunk of an operation with a row output stays in dynamic shared
 * memory when it takes at most this many bytes: two such blocks fit one
 * multiprocessor of compute capability 9.0 (228 KiB), and one fits every
 * device with clusters (sm_120 allows 99 KiB a block). Rows that no register
 * candidate holds then take one cluster of the fewest blocks whose chunks fit,
 * instead of one block streaming the row twice. */
#define TB_CLUSTER_SHARED_BYTES (96U * 1024U)
/* Whether that rule takes operations with a weight (rmsnorm, layernorm):
 * since their output pass loads the weight in batches (docs/planner.md). */
#define TB_CLUSTER_SHARED_WITH_WEIGHT true
/* ... for rows of at least this many chunks: at two (rows of at most 2 x 96
 * KiB) rmsnorm 200x40000 ran 1.025x the time of block streaming on an H100
 * (docs/planner.md), so such rows keep streaming. */
#define TB_CLUSTER_SHARED_WEIGHT_MIN_BLOCKS 3
/* Persistent rows: blocks of 256 threads and a chunk of at most
 * TB_CLUSTER_SHARED_BYTES, this many resident on each multiprocessor (the
 * rule asks the device's shared memory for them; the launch is cooperative:
 * the driver refuses a grid that would not all be resident, and the provider
 * refuses it before that). */
#define TB_PERSISTENT_BLOCKS_PER_SM 2
/* ... each with this much dynamic shared memory: a ring of 27 slots of 16
 * bytes a thread, so that a chunk (at most TB_CLUSTER_SHARED_BYTES: 24
 * slots) leaves at least 3 free for the next row's first groups, copied
 * before the row's barrier (two such blocks and their 1 KiB reserves fit the
 * 228 KiB of a compute capability 9.0 multiprocessor). */
#define TB_PERSISTENT_SHARED_BYTES (27U * 16U * TB_SPLIT_THREADS)
/* ... and what else a block takes of a multiprocessor's shared memory: the
 * 1 KiB the hardware reserves and its static statistics, with room to spare.
 * The rule asks the device's multiprocessors for TB_PERSISTENT_BLOCKS_PER_SM
 * times both. */
#define TB_PERSISTENT_BLOCK_EXTRA 2048U
/* Groups that take their rows in more than one turn read the weight and bias
 * again each turn: only while they take at most this many bytes, which L2
 * keeps across turns (on the H100, rmsnorm 16x4194304's 16 MiB weight was;
 * layernorm's 32 MiB weight and bias came from DRAM each row, 1.2x the
 * cluster rows' time: docs/planner.md). */
#define TB_PERSISTENT_PARAM_BYTES (16ULL << 20)

/* Subwarp rows: automatic plans of rows at most this long give each row
 * lanes = the least power of two with lanes * TB_SUBWARP_SLOTS >= n (at
 * most 16) lanes of a warp, in blocks of TB_SUBWARP_THREADS threads. */
#define TB_SUBWARP_MAX_ROW 32
#define TB_SUBWARP_SLOTS 8
#define TB_SUBWARP_THREADS 256

/* The subwarp facts of an m x n row reduction of `op` with `lanes` lanes a
 * row (a power of two, 1..16): what the plan records and the generator
 * writes. */
void tb_subwarp_evaluate(enum tb_op op, size_t m, size_t n, unsigned lanes,
                         struct tb_subwarp_facts *f);

/* Whether a cluster row's chunk stays in registers (see above). */
bool tb_cluster_chunk_cached(const struct tb_stream_facts *f);

/* TB_OK when `profile` names a cost profile, else TB_ERR_USAGE naming them. */
enum tb_status tb_planner_profile_check(const char *profile, struct tb_error *err);

/* Plans a row reduction under `profile` (NULL: analytic). TB_ERR_USAGE for an
 * op the planner does not plan (elementwise ops) or an unknown profile. */
enum tb_status tb_plan_reduction(enum tb_op op, size_t m, size_t n, enum tb_variant variant,
                                 const struct tb_device_limits *limits, const char *profile,
                                 struct tb_plan *plan, struct tb_error *err);

/* Evaluates one candidate's facts (exposed for tests and the plan table). */
void tb_candidate_evaluate(enum tb_op op, size_t m, size_t n, unsigned subgroups, unsigned packing,
                           unsigned block_weight, const struct tb_device_limits *limits,
                           struct tb_candidate *c);

/* The most elements any lane owns when groups of 4 consecutive elements are
 * dealt round-robin to `width` lanes. */
unsigned long long tb_slots(size_t n, unsigned width);

/* Words of partial statistics per thread in the streaming mappings. */
unsigned tb_stat_words(enum tb_op op);

#endif
