#include "planner/planner.h"

#include <stdio.h>
#include <string.h>

const char *tb_mapping_name(enum tb_mapping m) {
  switch (m) {
  case TB_MAPPING_REGISTER_ROWS: return "register_rows";
  case TB_MAPPING_BLOCK_STREAMING: return "block_streaming";
  case TB_MAPPING_CLUSTER_ROW: return "cluster_row";
  case TB_MAPPING_SUBWARP_ROWS: return "subwarp_rows";
  case TB_MAPPING_PERSISTENT_ROW: return "persistent_row";
  default: return "split_row";
  }
}

struct tb_device_limits tb_device_limits_default(void) {
  struct tb_device_limits d = {false, 0, 0, 132, "default (H200: 132 SMs)", 0, 0, 0};
  return d;
}

struct tb_device_limits tb_device_limits_h200(void) {
  struct tb_device_limits d = {true, 1024, 48 * 1024, 132, "H200 reference", 65536, 16, 228 * 1024};
  return d;
}

struct tb_payload tb_payload_for(enum tb_op op) {
  switch (op) {
  case TB_OP_SUM: return (struct tb_payload){4, 0, 4, 4};     /* one pass: sum */
  case TB_OP_RMSNORM: return (struct tb_payload){8, 4, 4, 8}; /* x, weight; sum x^2, scale */
  case TB_OP_SOFTMAX:
    return (struct tb_payload){4, 4, 8, 12}; /* x and exp(x - max); max, sum, scale */
  case TB_OP_LAYERNORM:
    return (struct tb_payload){12, 4, 8, 12}; /* x, weight, bias; mean, var, scale */
  default: return (struct tb_payload){0, 0, 0, 0};
  }
}

/* Groups of 4 dealt round-robin: with G groups, q = G / width full rounds and
 * r = G % width extra groups for lanes 0..r-1. The last group (lane r-1, or
 * lane width-1 when r = 0) may hold fewer than 4 elements. */
unsigned long long tb_slots(size_t n, unsigned width) {
  unsigned long long groups = (n + 3) / 4, q = groups / width, r = groups % width;
  unsigned long long tail = n % 4 ? n % 4 : 4; /* elements in the last group */
  if (r == 0) {
    return 4 * q; /* lane 0 owns q full groups (width >= 2 always) */
  }
  if (r >= 2) {
    return 4 * (q + 1); /* lane 0 owns q + 1 full groups */
  }
  return 4 * q + tail; /* only lane 0 owns q + 1 groups, the last among them */
}

static unsigned reductions_of(enum tb_op op) {
  return (op == TB_OP_SOFTMAX || op == TB_OP_LAYERNORM) ? 2 : 1;
}

/* Registers beyond the cached floats, calibrated on ptxas -v for sm_90 over
 * n = 8192..65536 and every s (docs/results-schema.md): the least room with
 * which no candidate spilled, rounded up. rmsnorm spilled with 32. */
unsigned tb_register_overhead(enum tb_op op) {
  switch (op) {
  case TB_OP_SUM: return 24;
  case TB_OP_RMSNORM: return 36;
  default: return 32; /* softmax, layernorm */
  }
}

unsigned tb_register_budget(unsigned threads, unsigned per_block) {
  unsigned warps = (threads + 31) / 32;
  unsigned allocated_warps = (warps + 3) / 4 * 4;
  unsigned per_thread = per_block / (allocated_warps * 32) / 8 * 8;
  return per_thread > 255 ? 255 : per_thread;
}

static void reject(struct tb_candidate *c, const char *fmt, unsigned long long value,
                   unsigned long long limit) {
  size_t used = strlen(c->rejection);
  snprintf(c->rejection + used, sizeof c->rejection - used, "%s", used ? "; " : "");
  used = strlen(c->rejection);
  snprintf(c->rejection + used, sizeof c->rejection - used, fmt, value, limit);
  c->rejected = true;
}

void tb_candidate_evaluate(enum tb_op op, size_t m, size_t n, unsigned s, unsigned p,
                           unsigned block_weight, const struct tb_device_limits *limits,
                           struct tb_candidate *c) {
  memset(c, 0, sizeof *c);
  c->subgroups = s;
  c->packing = p;
  c->width = 32 * s;
  c->threads = c->width * p;
  c->slots = (unsigned)tb_slots(n, c->width);
  c->reductions = reductions_of(op);
  unsigned heavy = c->reductions == 2;
  c->rounds = c->slots * (heavy ? 5 : 3);
  c->storage = c->slots * (heavy ? 2 : 1);
  c->score = (double)c->rounds + 2.0 * c->reductions * s + (double)block_weight / p;
  c->waves = m > TB_PLANNER_ROWS_PER_WAVE
                 ? (m + TB_PLANNER_ROWS_PER_WAVE - 1) / TB_PLANNER_ROWS_PER_WAVE
                 : 1;
  c->kernel_score = c->score * (double)c->waves;
  c->shared_bytes = s == 1 ? 0 : c->reductions * s * p * 4;
  c->barrier_sites = s == 1 ? 0 : c->reductions;
  c->lane_utilisation = (double)n / ((double)c->width * (double)c->slots);
  c->independent_subgroups = s == 1 ? p : 0;
  c->thread_blocks = (m + p - 1) / p;
  struct tb_payload pay = tb_payload_for(op);
  c->whole_groups = (unsigned long long)c->width * c->slots == n;
  c->thread_read_bytes = (unsigned long long)c->slots * pay.global_read;
  c->grid_threads = c->thread_blocks * c->threads;
  c->program_global_read = (unsigned long long)pay.global_read * n;
  c->program_global_write = op == TB_OP_SUM ? 4 : (unsigned long long)pay.global_write * n;
  c->program_private_read = (unsigned long long)pay.private_read * n;
  c->program_private_write = (unsigned long long)pay.private_write * n;
  c->worker_private_read = (unsigned long long)pay.private_read * c->slots;
  c->worker_private_write = (unsigned long long)pay.private_write * c->slots;

  if (c->threads > TB_PLANNER_MAX_THREADS) {
    reject(c, "threads %llu > %llu", c->threads, TB_PLANNER_MAX_THREADS);
  }
  if (c->storage > TB_PLANNER_MAX_STORAGE) {
    reject(c, "storage %llu > %llu registers", c->storage, TB_PLANNER_MAX_STORAGE);
  }
  if (limits->known && c->threads > limits->max_threads_per_block) {
    reject(c, "threads %llu > device limit %llu", c->threads, limits->max_threads_per_block);
  }
  unsigned registers = c->slots + tb_register_overhead(op);
  if (limits->known && limits->max_registers_per_block > 0 && c->threads <= 1024 &&
      registers > tb_register_budget(c->threads, limits->max_registers_per_block)) {
    reject(c, "registers %llu per thread > %llu the register file allows at this block size",
           registers, tb_register_budget(c->threads, limits->max_registers_per_block));
  }
  if (limits->known && c->shared_bytes > limits->max_shared_bytes_per_block) {
    reject(c, "shared memory %llu B > device limit %llu B", c->shared_bytes,
           limits->max_shared_bytes_per_block);
  }
}

/* A thread of `c` reads too little to keep memory busy: its grid runs in
 * several waves (more threads than the multiprocessors hold at once), where
 * the bytes in flight set the pace, and it reads fewer than the profile's
 * minimum before its first reduction (calibrated-2; docs/planner.md). */
static bool starved(const struct tb_plan *plan, const struct tb_candidate *c) {
  unsigned long long resident =
      (unsigned long long)TB_PLANNER_SM_THREADS * plan->limits.multiprocessors;
  return plan->min_thread_read > 0 && c->grid_threads > resident &&
         c->thread_read_bytes < plan->min_thread_read;
}

/* The first least kernel score among the accepted candidates that pass the
 * filters asked for, or -1. */
static int least_score(const struct tb_plan *plan, bool whole, bool fed) {
  int best = -1;
  for (unsigned k = 0; k < plan->candidate_count; ++k) {
    const struct tb_candidate *c = &plan->candidates[k];
    if (c->rejected || (whole && !c->whole_groups) || (fed && starved(plan, c))) {
      continue;
    }
    /* strict < keeps the first candidate among equal kernel scores */
    if (best < 0 || c->kernel_score < plan->candidates[best].kernel_score) {
      best = (int)k;
    }
  }
  return best;
}

/* The profile's pick: each preference holds where some accepted candidate
 * meets it, whole groups before fed threads. */
static int best_register(const struct tb_plan *plan) {
  bool whole = plan->whole_groups_first && least_score(plan, true, false) >= 0;
  bool fed = plan->min_thread_read > 0 && least_score(plan, whole, true) >= 0;
  return least_score(plan, whole, fed);
}

static void enumerate(struct tb_plan *plan) {
  unsigned k = 0;
  for (unsigned s = 1; s <= TB_PLANNER_MAX_SUBGROUPS; ++s) {
    unsigned max_p = s == 1 ? TB_PLANNER_MAX_PACKING : 1;
    for (unsigned p = 1; p <= max_p; ++p, ++k) {
      struct tb_candidate *c = &plan->candidates[k];
      tb_candidate_evaluate(plan->op, plan->m, plan->n, s, p, plan->block_weight, &plan->limits, c);
      c->index = k;
      plan->rejected_count += c->rejected;
    }
  }
  plan->candidate_count = k;
  plan->best_register = best_register(plan);
}

/* Enumeration index of (s, p), or -1 when the enumeration does not hold it. */
static int enumeration_index(unsigned s, unsigned p) {
  if (s == 1 && p >= 1 && p <= TB_PLANNER_MAX_PACKING) {
    return (int)p - 1;
  }
  if (s >= 2 && s <= TB_PLANNER_MAX_SUBGROUPS && p == 1) {
    return (int)(TB_PLANNER_MAX_PACKING + s - 2);
  }
  return -1;
}

static void select_register(struct tb_plan *plan, const struct tb_candidate *c) {
  plan->mapping = TB_MAPPING_REGISTER_ROWS;
  plan->selected = *c;
  plan->chosen = enumeration_index(c->subgroups, c->packing);
  plan->selected.index = plan->chosen >= 0 ? (unsigned)plan->chosen : 0;
}

/* Words of partial statistics a streaming reduction carries: sum 1, rmsnorm
 * 1 (sum of squares), softmax 2 (running max and sum), layernorm 3 (Welford
 * count, mean, M2). All are combined in one block reduction: one barrier. */
unsigned tb_stat_words(enum tb_op op) {
  switch (op) {
  case TB_OP_SOFTMAX: return 2;
  case TB_OP_LAYERNORM: return 3;
  default: return 1;
  }
}

static unsigned memory_passes(enum tb_op op) {
  /* sum: one pass; the others: statistics (online max+sum for softmax,
   * sum and sum of squares for the norms) and then the output pass. */
  return op == TB_OP_SUM ? 1 : 2;
}

static void plan_block_streaming(struct tb_plan *plan) {
  struct tb_stream_facts *f = &plan->stream;
  f->threads_per_block = TB_STREAM_THREADS;
  f->blocks_per_row = 1;
  f->chunk_elements = plan->n;
  f->thread_blocks = plan->m;
  f->memory_passes = memory_passes(plan->op);
  f->launches = 1;
  f->barrier_sites = 1;
  f->shared_bytes = tb_stat_words(plan->op) * (TB_STREAM_THREADS / 32) * 4;
  plan->mapping = TB_MAPPING_BLOCK_STREAMING;
  plan->chosen = -1;
}

/* Blocks per row for the split mappings: about two blocks per multiprocessor
 * busy, but never chunks shorter than TB_SPLIT_MIN_CHUNK, at least 2, and at
 * most `most_blocks` (0: no limit). */
static unsigned long long split_blocks(const struct tb_plan *plan, unsigned most_blocks) {
  unsigned long long target = (2ULL * plan->limits.multiprocessors + plan->m - 1) / plan->m;
  unsigned long long most = plan->n / TB_SPLIT_MIN_CHUNK;
  unsigned long long k = target < most ? target : most;
  if (most_blocks > 0 && k > most_blocks) {
    k = most_blocks;
  }
  return k < 2 ? 2 : k;
}

/* Chunks of whole groups of 4 for k blocks per row; the facts both split
 * mappings share. */
static unsigned long long chunk_of(size_t n, unsigned long long k) {
  return ((n + k - 1) / k + 3) / 4 * 4;
}

static void plan_chunks(struct tb_plan *plan, unsigned long long k) {
  struct tb_stream_facts *f = &plan->stream;
  unsigned long long chunk = chunk_of(plan->n, k);
  f->threads_per_block = TB_SPLIT_THREADS;
  f->chunk_elements = chunk;
  f->blocks_per_row = (unsigned)((plan->n + chunk - 1) / chunk);
  f->thread_blocks = (unsigned long long)plan->m * f->blocks_per_row;
  f->memory_passes = memory_passes(plan->op);
  f->shared_bytes = tb_stat_words(plan->op) * (TB_SPLIT_THREADS / 32) * 4;
  f->barrier_sites = 1; /* the block reduction of the partial statistics */
  plan->chosen = -1;
}

/* Each chunk reduced to partial statistics. A row output: a second launch
 * combines a row's partials and re-reads its chunk to write it. One value a
 * row: the row's last block to finish combines them, in the same launch (a
 * counter a row; one more block combine, and the block's verdict, a word of
 * shared memory and a barrier). */
static void plan_split_row(struct tb_plan *plan) {
  plan_chunks(plan, split_blocks(plan, 0));
  struct tb_stream_facts *f = &plan->stream;
  if (tb_op_info(plan->op)->output_is_vector) {
    f->launches = 1;
    f->shared_bytes = 2 * f->shared_bytes + 4;
    f->barrier_sites = 3;
  } else {
    f->launches = 2;
  }
  plan->mapping = TB_MAPPING_SPLIT_ROW;
}

/* Whether a chunk of `chunk` elements of `op`, too long for registers, fits
 * the shared-memory cache: only a row output reads its chunk twice. */
static bool chunk_fits_shared(enum tb_op op, unsigned long long chunk) {
  return !tb_op_info(op)->output_is_vector && chunk * 4 <= TB_CLUSTER_SHARED_BYTES;
}

/* One cluster per row, one launch: each block reduces its chunk, the blocks
 * exchange their statistics through distributed shared memory, and each
 * writes its chunk: from registers when it fits TB_CLUSTER_CACHE_FLOATS per
 * thread, else from shared memory when it fits TB_CLUSTER_SHARED_BYTES (one
 * memory pass either way), else re-read. */
static void plan_cluster_row(struct tb_plan *plan, unsigned long long k) {
  plan_chunks(plan, k);
  struct tb_stream_facts *f = &plan->stream;
  f->launches = 1;
  f->cluster_blocks = f->blocks_per_row;
  if (tb_cluster_chunk_cached(f)) {
    f->memory_passes = 1;
  } else if (chunk_fits_shared(plan->op, f->chunk_elements)) {
    f->memory_passes = 1;
    f->cache_shared_bytes = (unsigned)(f->chunk_elements * 4);
  }
  /* the row's K statistics, pushed by the cluster's blocks, and the mbarrier
   * that counts their bytes (every thread waits on it: no block barrier) */
  f->shared_bytes += 8 + tb_stat_words(plan->op) * 4 * f->blocks_per_row;
  plan->mapping = TB_MAPPING_CLUSTER_ROW;
}

bool tb_cluster_chunk_cached(const struct tb_stream_facts *f) {
  return f->chunk_elements <= (unsigned long long)TB_CLUSTER_CACHE_FLOATS * f->threads_per_block;
}

/* Blocks per row a cluster row would use, or 0 when it should not: no
 * clusters on the device, or too few rows to fill the machine with them. */
static unsigned long long cluster_row_blocks(const struct tb_plan *plan) {
  if (plan->limits.cluster_blocks < 2) {
    return 0;
  }
  unsigned long long k = split_blocks(plan, plan->limits.cluster_blocks);
  return plan->m * k * TB_CLUSTER_MIN_FILL >= plan->limits.multiprocessors ? k : 0;
}

void tb_subwarp_evaluate(enum tb_op op, size_t m, size_t n, unsigned lanes,
                         struct tb_subwarp_facts *f) {
  memset(f, 0, sizeof *f);
  f->lanes = lanes;
  f->slots = (unsigned)((n + lanes - 1) / lanes);
  f->rows_per_warp = 32 / lanes;
  f->threads_per_block = TB_SUBWARP_THREADS;
  f->rows_per_block = TB_SUBWARP_THREADS / lanes;
  f->thread_blocks = (m + f->rows_per_block - 1) / f->rows_per_block;
  f->reductions = reductions_of(op);
  for (unsigned g = lanes; g > 1; g /= 2) {
    f->shuffle_levels++;
  }
  f->lane_utilisation = (double)n / ((double)lanes * (double)f->slots);
}

/* The least power of two with lanes * TB_SUBWARP_SLOTS >= n, at most 16. */
static unsigned subwarp_lanes(size_t n) {
  unsigned lanes = 1;
  while (lanes < 16 && (size_t)lanes * TB_SUBWARP_SLOTS < n) {
    lanes *= 2;
  }
  return lanes;
}

/* Rows so short that a warp a row leaves most of its lanes idle: groups of
 * a few lanes a row, several rows a warp. */
static void plan_subwarp_rows(struct tb_plan *plan) {
  tb_subwarp_evaluate(plan->op, plan->m, plan->n, subwarp_lanes(plan->n), &plan->subwarp);
  plan->mapping = TB_MAPPING_SUBWARP_ROWS;
  plan->chosen = -1;
}

/* Blocks per row for rows no register candidate holds: the fewest (at least
 * 2) whose chunks fit the shared-memory cache, or 0 when that takes more
 * blocks than a cluster holds, the device has no clusters, the operation
 * reads its row once anyway (sum), or its output reads a weight (rmsnorm,
 * layernorm) and the row takes fewer than TB_CLUSTER_SHARED_WEIGHT_MIN_BLOCKS
 * chunks: at two, one block streaming the row twice was faster for rmsnorm
 * (docs/planner.md). */
static unsigned long long shared_cluster_blocks(const struct tb_plan *plan) {
  bool weight = tb_op_info(plan->op)->has_weight;
  if (plan->limits.cluster_blocks < 2 || (weight && !TB_CLUSTER_SHARED_WITH_WEIGHT)) {
    return 0;
  }
  for (unsigned long long k = 2; k <= plan->limits.cluster_blocks; ++k) {
    unsigned long long chunk = chunk_of(plan->n, k);
    if (chunk > (unsigned long long)TB_CLUSTER_CACHE_FLOATS * TB_SPLIT_THREADS &&
        chunk_fits_shared(plan->op, chunk)) {
      return weight && k < TB_CLUSTER_SHARED_WEIGHT_MIN_BLOCKS ? 0 : k;
    }
  }
  return 0;
}

/* Row groups for persistent rows, or 0 when they do not apply: rows with a
 * row output too long for even the largest cluster's chunks to fit shared
 * memory, on a device with clusters whose multiprocessors hold
 * TB_PERSISTENT_BLOCKS_PER_SM blocks of TB_PERSISTENT_SHARED_BYTES (compute
 * capability 9.0's 228 KiB; not sm_120's 100 KiB). Each group takes at least
 * the fewest blocks whose chunks fit; as many groups as that leaves room
 * for, at most one a row, and no more than it takes to cover the rows in the
 * same number of turns (16 rows over at most 12 groups: 8 groups twice).
 * Not where the groups take more than one turn and the weight and bias
 * exceed TB_PERSISTENT_PARAM_BYTES. */
static unsigned long long persistent_row_groups(const struct tb_plan *plan) {
  const struct tb_device_limits *d = &plan->limits;
  if (d->cluster_blocks < 2 || tb_op_info(plan->op)->output_is_vector ||
      d->shared_bytes_per_multiprocessor <
          TB_PERSISTENT_BLOCKS_PER_SM * (TB_PERSISTENT_SHARED_BYTES + TB_PERSISTENT_BLOCK_EXTRA) ||
      chunk_fits_shared(plan->op, chunk_of(plan->n, d->cluster_blocks))) {
    return 0;
  }
  unsigned long long resident =
      (unsigned long long)TB_PERSISTENT_BLOCKS_PER_SM * d->multiprocessors;
  unsigned long long least = d->cluster_blocks + 1ULL;
  while (least <= resident && !chunk_fits_shared(plan->op, chunk_of(plan->n, least))) {
    ++least;
  }
  if (least > resident) {
    return 0;
  }
  unsigned long long most = resident / least;
  unsigned long long turns = (plan->m + most - 1) / most;
  const struct tb_op_info *op = tb_op_info(plan->op);
  unsigned long long params = 4ULL * plan->n * ((op->has_weight ? 1 : 0) + (op->has_bias ? 1 : 0));
  if (turns > 1 && params > TB_PERSISTENT_PARAM_BYTES) {
    return 0;
  }
  return (plan->m + turns - 1) / turns;
}

/* Every resident block, in `groups` groups of the most blocks that share a
 * row (chunks of whole groups of 4, so a group may use fewer), each block's
 * chunk in a ring of shared memory that also takes the next row's first
 * groups: one memory pass, one launch. */
static void plan_persistent_row(struct tb_plan *plan, unsigned long long groups) {
  unsigned long long resident =
      (unsigned long long)TB_PERSISTENT_BLOCKS_PER_SM * plan->limits.multiprocessors;
  plan_chunks(plan, resident / groups);
  struct tb_stream_facts *f = &plan->stream;
  f->row_groups = (unsigned)groups;
  f->thread_blocks = groups * f->blocks_per_row;
  f->launches = 1;
  f->memory_passes = 1;
  f->cache_shared_bytes = TB_PERSISTENT_SHARED_BYTES;
  /* the chunk's statistics, then the row's: one block combine each */
  f->shared_bytes *= 2;
  f->barrier_sites = 3; /* and the group barrier's, before the row's statistics are read */
  plan->mapping = TB_MAPPING_PERSISTENT_ROW;
}

static bool few_long_rows(const struct tb_plan *plan) {
  return plan->m < plan->limits.multiprocessors && plan->n >= TB_SPLIT_MIN_ROW;
}

static void choose(struct tb_plan *plan) {
  if (plan->variant == TB_VARIANT_AUTOMATIC) {
    if (few_long_rows(plan)) {
      unsigned long long groups = persistent_row_groups(plan);
      unsigned long long cluster = groups > 0 ? 0 : cluster_row_blocks(plan);
      if (groups > 0) {
        plan->rule = "few long rows (m < multiprocessors, n >= 8192) too long for a cluster's "
                     "chunks in shared memory: every block resident, a group of blocks a row "
                     "at a time, chunks in shared memory";
        plan_persistent_row(plan, groups);
      } else if (cluster > 0) {
        plan->rule = "few long rows (m < multiprocessors, n >= 8192) whose clusters fill half the "
                     "multiprocessors: one cluster of blocks per row";
        plan_cluster_row(plan, cluster);
      } else {
        plan->rule = "few long rows (m < multiprocessors, n >= 8192): split each row over blocks";
        plan_split_row(plan);
      }
    } else if (plan->n <= TB_SUBWARP_MAX_ROW) {
      plan->rule = "very short rows (n <= 32): the fewest lanes a row (a power of two) that "
                   "cache at most 8 elements a lane, 32/lanes rows a warp";
      plan_subwarp_rows(plan);
    } else if (plan->best_register >= 0) {
      plan->rule = plan->whole_groups_first || plan->min_thread_read > 0
                       ? "first candidate with the least kernel score among those the profile "
                         "prefers (whole groups, then fed threads, where any)"
                       : "first candidate with the least kernel score (the profile's)";
      select_register(plan, &plan->candidates[plan->best_register]);
    } else if (shared_cluster_blocks(plan) > 0) {
      plan->rule = "long rows: every register candidate rejected; one cluster of the fewest "
                   "blocks a row whose chunks fit shared memory, each chunk read once";
      plan_cluster_row(plan, shared_cluster_blocks(plan));
    } else {
      plan->rule = "long rows: every register candidate rejected; one block streams each row";
      plan_block_streaming(plan);
    }
    return;
  }
  /* a fixed variant (reference, candidate, sSpP): its own (s, p), evaluated by
   * the enumeration's formulas whether or not the enumeration holds it */
  unsigned s = 0, p = 0;
  (void)tb_variant_fixed_shape(plan->variant, &s, &p);
  struct tb_candidate *fixed = &plan->fixed;
  tb_candidate_evaluate(plan->op, plan->m, plan->n, s, p, plan->block_weight, &plan->limits, fixed);
  fixed->index = enumeration_index(fixed->subgroups, fixed->packing) >= 0
                     ? (unsigned)enumeration_index(fixed->subgroups, fixed->packing)
                     : 0;
  if (!fixed->rejected) {
    plan->rule = plan->variant == TB_VARIANT_REFERENCE ? "fixed variant reference: (s 1, p 8)"
                 : plan->variant == TB_VARIANT_CANDIDATE
                     ? "fixed variant candidate: (s 2, p 4)"
                     : "fixed variant sSpP: the (s, p) it names";
    select_register(plan, fixed);
  } else {
    plan->rule = "fixed variant's candidate rejected; one block streams each row";
    plan_block_streaming(plan);
  }
}

struct cost_profile {
  const char *name;
  unsigned block_weight; /* score = rounds + 2*reductions*s + block_weight/p */
  bool whole_groups_first;
  unsigned min_thread_read; /* 0: no such preference */
  const char *basis;
};

static const struct cost_profile cost_profiles[] = {
    {TB_PLANNER_PROFILE_ANALYTIC, 16, false, 0,
     "docs/method.md §7: score = rounds + 2*reductions*s + 16/p; kernel score = "
     "score * max(1, ceil(m/64))"},
    {TB_PLANNER_PROFILE_CALIBRATED, 32, false, 0,
     "docs/method.md §7 with the block term 32/p (calibrated on the H200, docs/planner.md): "
     "score = rounds + 2*reductions*s + 32/p; kernel score = score * max(1, ceil(m/64))"},
    {TB_PLANNER_PROFILE_CALIBRATED_2, 32, true, TB_PLANNER_MIN_THREAD_READ,
     "calibrated's score (rounds + 2*reductions*s + 32/p, kernel score = score * max(1, "
     "ceil(m/64))), least among the candidates of whole groups where any, then among those "
     "whose threads read >= 32 B or whose grid fits the resident threads where any "
     "(measured on the H200, docs/planner.md)"},
};

/* The profile named `name` (NULL: analytic), or NULL when there is none. */
static const struct cost_profile *find_profile(const char *name) {
  if (name == NULL) {
    return &cost_profiles[0];
  }
  for (size_t i = 0; i < sizeof cost_profiles / sizeof cost_profiles[0]; ++i) {
    if (strcmp(name, cost_profiles[i].name) == 0) {
      return &cost_profiles[i];
    }
  }
  return NULL;
}

enum tb_status tb_planner_profile_check(const char *profile, struct tb_error *err) {
  if (find_profile(profile) != NULL) {
    return TB_OK;
  }
  return tb_fail(err, TB_ERR_USAGE, "unknown planner profile '%s' (known: %s, %s, %s)", profile,
                 TB_PLANNER_PROFILE_CALIBRATED_2, TB_PLANNER_PROFILE_CALIBRATED,
                 TB_PLANNER_PROFILE_ANALYTIC);
}

enum tb_status tb_plan_reduction(enum tb_op op, size_t m, size_t n, enum tb_variant variant,
                                 const struct tb_device_limits *limits, const char *profile,
                                 struct tb_plan *plan, struct tb_error *err) {
  memset(plan, 0, sizeof *plan);
  if (!tb_op_info(op)->is_row_reduction) {
    return tb_fail(err, TB_ERR_USAGE,
                   "%s is not a row reduction; the planner plans sum, "
                   "softmax, rmsnorm and layernorm",
                   tb_op_info(op)->name);
  }
  const struct cost_profile *cost = find_profile(profile);
  if (cost == NULL) {
    return tb_planner_profile_check(profile, err);
  }
  plan->profile = cost->name;
  plan->block_weight = cost->block_weight;
  plan->whole_groups_first = cost->whole_groups_first;
  plan->min_thread_read = cost->min_thread_read;
  plan->cost_basis = cost->basis;
  plan->op = op;
  plan->m = m;
  plan->n = n;
  plan->variant = variant;
  plan->limits = limits ? *limits : tb_device_limits_default();
  plan->best_register = -1;
  plan->chosen = -1;
  enumerate(plan);
  choose(plan);
  return TB_OK;
}
