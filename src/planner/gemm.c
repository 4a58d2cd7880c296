#include "planner/gemm.h"

#include <stdio.h>
#include <string.h>

#include "planner/gemv.h"

static void take_user_block(struct tb_gemm_plan *p, struct tb_gemm_block user) {
  p->block_m = user.m;
  p->block_n = user.n;
  p->block_k = user.k;
  p->block_from_user = true;
}

/* Blocks of a bm x bn tiling of the output. */
static unsigned long long grid_of(const struct tb_gemm_plan *p, unsigned bm, unsigned bn) {
  return ((p->m + bm - 1) / bm) * ((p->n + bn - 1) / bn);
}

/* Small k: the output's stores, not the multiply-adds, are most of the work
 * (4096 x 4096 x 13 writes 67 MB and reads 0.4 MB), so a kernel needs other
 * blocks' loads and products on the SM while one block stores: no one-block-
 * an-SM tile (simt 128x256) and, for tensor, mma.sync's two blocks an SM
 * rather than wgmma's 128x256 (docs/gemm.md). */
#define TB_GEMM_SIMT_SMALL_K 64
#define TB_GEMM_TENSOR_SMALL_K 48

/* The k step of a small-k simt tile: of 32, 16 and 8, the one that pads k
 * least (a step past k multiplies zeros), the larger on a tie (fewer
 * barriers), among those whose loads are whole float4s for the tile. */
static unsigned small_k_step(size_t k, unsigned block_m, unsigned block_n) {
  static const unsigned steps[] = {32, 16, 8};
  unsigned best = 0;
  size_t best_padded = 0;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i) {
    unsigned s = steps[i];
    size_t padded = (k + s - 1) / s * s;
    if (block_m * s >= 1024 && block_n * s >= 1024 && (best == 0 || padded < best_padded)) {
      best = s;
      best_padded = padded;
    }
  }
  return best;
}

/* simt: 256 threads, each (block_m/16) x (block_n/16) outputs; a tile side
 * is 32, 64 or 128 and the k step 8, 16 or 32, with at least 4 floats of A
 * and of B per thread and step (block_m * block_k and block_n * block_k of
 * 1024 or more) so the loads are whole float4s. */
static enum tb_status simt_shape(struct tb_gemm_plan *p, struct tb_gemm_block user,
                                 struct tb_error *err) {
  if (user.m != 0) {
    bool side_m = user.m == 32 || user.m == 64 || user.m == 128;
    /* 128 x 256: 8 x 16 outputs a thread, one block an SM */
    bool side_n = user.n == 32 || user.n == 64 || user.n == 128 || (user.n == 256 && user.m == 128);
    bool step = user.k == 8 || user.k == 16 || user.k == 32;
    if (!side_m || !side_n || !step || user.m * user.k < 1024 || user.n * user.k < 1024) {
      return tb_fail(err, TB_ERR_USAGE,
                     "--gemm-block for simt: M and N of 32, 64 or 128 (or 128 and 256), K of 8, "
                     "16 or 32, with M*K and N*K at least 1024 (got %u,%u,%u)",
                     user.m, user.n, user.k);
    }
    take_user_block(p, user);
  } else {
    /* 128x256x32 (8 x 16 outputs a thread, one block an SM) when k > 64 and
     * its blocks fill at least 90 % of its waves: measured faster than 128x128x32 where
     * they do (4096^3, 2048^3, 4096^2 x 1024, 8192^2 x 512), slower where its
     * last wave is a quarter full (3072^3, 1999 x 2999 x 37) since 128x128
     * blocks, two an SM, spread a partial wave more finely (docs/gemm.md).
     * Else the first tile whose grid still fills every multiprocessor. */
    static const unsigned tiles[][3] = {
        {128, 256, 32}, {128, 128, 32}, {128, 64, 32}, {64, 64, 16}, {32, 32, 32}};
    unsigned long long wide = grid_of(p, 128, 256), sms = p->multiprocessors;
    bool small_k = p->k <= TB_GEMM_SIMT_SMALL_K;
    size_t t = !small_k && 10 * wide >= 9 * ((wide + sms - 1) / sms) * sms ? 0 : 1;
    while (t > 0 && t < 4 && grid_of(p, tiles[t][0], tiles[t][1]) < sms) {
      ++t;
    }
    p->block_m = tiles[t][0];
    p->block_n = tiles[t][1];
    p->block_k = small_k ? small_k_step(p->k, p->block_m, p->block_n) : tiles[t][2];
    p->rule = "simt: 128x256x32 when k > 64 and its blocks fill at least 90 % of its waves (one "
              "block per multiprocessor), else the first of 128x128x32, 128x64x32, 64x64x16, "
              "32x32x32 whose grid has at least one block per multiprocessor (else 32x32x32); "
              "small k (k <= 64): the k step of 32, 16, 8 that pads k least (the larger on a "
              "tie) with whole float4 loads; 256 threads, (tile m/16) x (tile n/16) outputs "
              "each; 3 stages of cp.async";
  }
  p->thread_m = p->block_m / 16;
  p->thread_n = p->block_n / 16;
  p->threads = 256;
  /* two 256-thread blocks leave 128 registers a thread, room for 64
   * accumulators, 32 A values (4 k of 8 rows) and 8 B values with 32-bit tile
   * offsets (ptxas: 128, no spill); 128 accumulators (128 x 256) need one
   * block's 255 */
  p->blocks_per_multiprocessor = p->thread_m * p->thread_n > 64 ? 1 : 2;
  p->stages = 3;
  snprintf(p->instruction, sizeof p->instruction, "fma");
  p->barrier_sites = 1; /* one per k tile, before the next stage is issued */
  /* A as [block_m][block_k + 4], B as [block_k][block_n + 4], per stage */
  p->shared_bytes = 4 * p->stages * (p->block_m * (p->block_k + 4) + p->block_k * (p->block_n + 4));
  return TB_OK;
}

/* mma.sync m16n8k8 TF32 (tensor without wgmma, and tensor-3xtf32): 2 x
 * (block_n == 128 ? 4 : 2) warps, each a (block_m/2) x (block_n/warps_n)
 * tile; 3 stages of cp.async. */
static void mma_sync_shape(struct tb_gemm_plan *p) {
  p->warps_m = 2;
  p->warps_n = p->block_n == 128 ? 4 : 2;
  p->thread_m = p->block_m / p->warps_m; /* the warp tile */
  p->thread_n = p->block_n / p->warps_n;
  p->threads = 32 * p->warps_m * p->warps_n;
  /* two blocks an SM (128 registers a thread at 256 threads: TF32 needs 122
   * with 32-bit tile offsets); the 3xTF32 split's remainders and partial sums
   * need 220 at 256 threads: then one */
  p->blocks_per_multiprocessor =
      p->realization == TB_REALIZATION_TENSOR_3XTF32 && p->threads == 256 ? 1 : 2;
  p->stages = 3;
  /* A as [block_m][block_k + 4], B as [block_k][block_n + 8]: conflict-free fragments */
  p->shared_bytes = 4 * p->stages * (p->block_m * (p->block_k + 4) + p->block_k * (p->block_n + 8));
  snprintf(p->instruction, sizeof p->instruction, "mma.sync.m16n8k8");
  p->barrier_sites = 1;
}

/* wgmma (tensor on a device with warpgroup MMA): a packing launch rounds A
 * and B to TF32 into the workspace, in stage-sized chunks already in the
 * shared-memory layout (B transposed); then 2 warpgroups, each a 64 x
 * block_n slice with wgmma.m64n{block_n}k8, the k step of 32 TF32 values one
 * 128-byte swizzled row, stages filled by bulk copies: 4 for 128 x 256 (one
 * block an SM: 154 registers), 3 for 128 x 128 so that two blocks share an
 * SM (90 registers; 2 x 99 KB of shared memory), one's k loop covering the
 * other's start and end. Shared memory: the stages, 1024 bytes of slack to
 * align them to the swizzle's 1024-byte period, an 8-byte mbarrier a stage. */
static void wgmma_shape(struct tb_gemm_plan *p) {
  p->warpgroups = 2;
  p->thread_m = 64; /* the warpgroup tile */
  p->thread_n = p->block_n;
  p->threads = 256;
  p->blocks_per_multiprocessor = p->block_n == 128 ? 2 : 1;
  p->stages = p->block_n == 128 ? 3 : 4;
  p->shared_bytes = 4 * p->stages * (p->block_m + p->block_n) * p->block_k + 1024 + 8 * p->stages;
  snprintf(p->instruction, sizeof p->instruction, "wgmma.m64n%uk8", p->block_n);
  p->barrier_sites = 3; /* packing B; after the mbarriers' set-up; one per k tile */
}

/* The packed operands (zeros past the edges) and the packing launch: one
 * block per chunk of A (block_m x block_k) and of B (block_n x block_k). */
static void wgmma_packing(struct tb_gemm_plan *p) {
  unsigned long long tiles = (p->k + p->block_k - 1) / p->block_k;
  p->launches = 2;
  p->pack_blocks = (p->grid_m + p->grid_n) * tiles;
  p->workspace_floats = (p->grid_m * p->block_m + p->grid_n * p->block_n) * tiles * p->block_k;
}

/* The single-launch wgmma kernel (TMA, C^T = B^T A^T): a producer
 * warpgroup starts the copies, two consumer warpgroups along n multiply, 64
 * columns each, wgmma's n being the block's m (256 or 128 rows). A stage is
 * A's tile (block_m x 32, swizzled) and B's (32 k rows of block_n + 8
 * floats); one block an SM, 4 stages for 256 x 128 (a consumer's 128
 * accumulators), 6 for 128 x 128. Shared memory: the stages, 1024 bytes to
 * align them to the swizzle's period, two mbarriers a stage (full, empty). */
static void wgmma_tma_shape(struct tb_gemm_plan *p) {
  p->warpgroups = 2; /* those that multiply */
  p->tensor_maps = true;
  p->thread_m = p->block_m; /* a consumer's tile: all the block's rows, 64 columns */
  p->thread_n = 64;
  p->threads = 384;
  p->blocks_per_multiprocessor = 1;
  p->stages = p->block_m == 128 ? 6 : 4;
  p->shared_bytes = 4 * p->stages * (p->block_m * p->block_k + p->block_k * (p->block_n + 8)) +
                    1024 + 16 * p->stages;
  snprintf(p->instruction, sizeof p->instruction, "wgmma.m64n%uk8", p->block_m);
  p->barrier_sites = 1; /* after the mbarriers' set-up */
}

static bool is_wgmma_tile(unsigned m, unsigned n, unsigned k) {
  return m == 128 && (n == 128 || n == 256) && k == 32;
}

static bool is_wgmma_tma_tile(unsigned m, unsigned n, unsigned k) {
  return (m == 256 || m == 128) && n == 128 && k == 32;
}

/* tensor and tensor-3xtf32. A user block runs on the kernel the rule would
 * give its tile, where the device has wgmma and the realization is plain
 * TF32: the single-launch one (256 x 128 x 32 or 128 x 128 x 32) where the
 * driver encodes tensor maps and both operands' rows start on 16 bytes,
 * else the packed one (128 x 128 x 32 or 128 x 256 x 32); any other goes to
 * mma.sync, which takes M and N of 64 or 128 and K of 16 or 32. */
static enum tb_status tensor_shape(struct tb_gemm_plan *p, struct tb_gemm_block user,
                                   struct tb_gemm_target target, struct tb_error *err) {
  bool warpgroup_mma = target.warpgroup_mma;
  bool wgmma = warpgroup_mma && p->realization == TB_REALIZATION_TENSOR;
  /* TMA copies rows that start on 16 bytes: both operands' */
  bool tma_ready = wgmma && target.tensor_maps && p->a_vector_width == 4 && p->vector_width == 4;
  bool tma = false;
  if (user.m != 0) {
    bool mma_sync_tile = (user.m == 64 || user.m == 128) && (user.n == 64 || user.n == 128) &&
                         (user.k == 16 || user.k == 32);
    tma = tma_ready && is_wgmma_tma_tile(user.m, user.n, user.k);
    wgmma = wgmma && !tma && is_wgmma_tile(user.m, user.n, user.k);
    if (!tma && !wgmma && !mma_sync_tile) {
      return tb_fail(err, TB_ERR_USAGE,
                     "--gemm-block for %s: M and N of 64 or 128, K of 16 or 32%s (got %u,%u,%u)",
                     tb_realization_name(p->realization),
                     warpgroup_mma && p->realization == TB_REALIZATION_TENSOR
                         ? ", or 128,256,32 (wgmma), or 256,128,32 (wgmma with tensor maps: "
                           "both operands' rows on 16 bytes)"
                         : "",
                     user.m, user.n, user.k);
    }
    take_user_block(p, user);
  } else {
    bool large = grid_of(p, 128, 128) >= p->multiprocessors;
    /* The single-launch wgmma kernel's 128x128 tile takes any grid: its one block an SM
     * outruns the mma.sync 64x64 tiles that fill every SM, at 64 blocks against 256 (1024^3)
     * and 1 against 4 (evidence/2026-12-07-h100-gemm-wgmma-quarter-wave, -any-grid). */
    bool small_k = p->k <= TB_GEMM_TENSOR_SMALL_K;
    /* Small k: 64x64 (four warps, several blocks an SM) where a 128x128 block would be
     * alone on its SM (3xTF32's 256 threads) or issue one copy per float (a scalar load):
     * more blocks in flight then overlap one's stores with another's loads. As user blocks,
     * 64x64 beat the 128x128 there at every shape measured (9-29 % quicker); TF32 with float4
     * loads keeps 128x128, quicker at k of 32 and 48 (docs/gemm.md, "Small k"). */
    bool scalar_load = p->a_vector_width == 1 || p->vector_width == 1;
    bool few_warps = small_k && (p->realization == TB_REALIZATION_TENSOR_3XTF32 || scalar_load);
    wgmma = wgmma && !small_k && (large || tma_ready);
    tma = tma_ready && wgmma;
    bool wide = (large || wgmma) && !few_warps;
    p->block_m = wide ? 128 : 64;
    p->block_n = !wide ? 64 : wgmma && grid_of(p, 128, 256) >= p->multiprocessors ? 256 : 128;
    p->block_k = small_k ? 16 : 32;
    p->rule = wgmma ? "tensor with wgmma: 128x256 tiles when their grid has at least one block "
                      "per multiprocessor, else 128x128 (same test), else mma.sync 64x64; a "
                      "packing launch rounds A and B to TF32 in the stages' layout; k step 32; 2 "
                      "warpgroups of wgmma.m64nNk8 TF32; 4 stages (128x256) or 3 (128x128, two "
                      "blocks an SM) filled by bulk copies; small k (k <= 48): mma.sync, k step 16"
                    : "tensor: 128x128 tiles when their grid has at least one block per "
                      "multiprocessor, else 64x64; k step 32, small k (k <= 48) 16 (and mma.sync "
                      "where wgmma exists), 64x64 with 3xTF32 or a scalar load; warps 2 x (4 for "
                      "128 columns, else 2); 3 stages of cp.async; mma.sync m16n8k8 TF32";
  }
  if (tma && user.m == 0) {
    p->block_m = grid_of(p, 256, 128) >= p->multiprocessors ? 256 : 128;
    p->block_n = 128;
    p->rule = "tensor with wgmma and tensor maps (A's and B's rows on 16 bytes): one launch, "
              "256x128 tiles (m x n) when their grid has at least one block per "
              "multiprocessor, else 128x128 whatever the grid; C^T = B^T A^T "
              "with B's fragments rounded in registers, A's tile converted to TF32 by its TMA "
              "copy; k step 32; a producer warpgroup, 2 consumer warpgroups along n of "
              "wgmma.m64nMk8 TF32; 4 stages (256x128) or 6 (128x128); under a wave, k split "
              "in chunks of whole k tiles (at least 4) as the wave allows, two only of at "
              "least 64, partial tiles added in chunk order by a second launch; small k "
              "(k <= 48): mma.sync, k step 16";
  }
  if (tma) {
    wgmma_tma_shape(p);
  } else if (wgmma) {
    wgmma_shape(p);
  } else {
    mma_sync_shape(p);
  }
  return TB_OK;
}

/* The single-launch wgmma kernel under a wave (one block a multiprocessor):
 * each tile's k cut into chunks of whole k tiles, at least
 * TB_GEMM_SPLIT_MIN_TILES, as many as keep the blocks within one wave (two
 * only of at least TB_GEMM_SPLIT_PAIR_MIN_TILES: halving k saved less than
 * the partials' round trip cost at 1024^3); each block writes its chunk's
 * partial tile to the workspace, and a second launch (the matrix-vector
 * plans' tb_combine) adds an output's partials in chunk order: the same
 * additions every run. A block walked all of k on one
 * multiprocessor: 128x128x1024 took as long as 25 such blocks, 0.42 of
 * cuBLAS's speed (evidence/2026-12-07-h100-gemm-wgmma-any-grid). */
static void split_k(struct tb_gemm_plan *p) {
  unsigned long long tiles = (p->k + p->block_k - 1) / p->block_k;
  unsigned long long wanted = p->multiprocessors / p->blocks;
  unsigned long long most = tiles / TB_GEMM_SPLIT_MIN_TILES;
  unsigned long long splits = wanted < most ? wanted : most;
  if (splits < 2) {
    return;
  }
  unsigned long long chunk_tiles = (tiles + splits - 1) / splits;
  unsigned long long chunks = (tiles + chunk_tiles - 1) / chunk_tiles;
  if (chunks == 2 && chunk_tiles < TB_GEMM_SPLIT_PAIR_MIN_TILES) {
    return;
  }
  p->k_splits = chunks;
  p->k_chunk = chunk_tiles * p->block_k;
  p->blocks *= p->k_splits;
  p->waves = (p->blocks + p->multiprocessors - 1) / p->multiprocessors;
  p->launches = 2;
  p->workspace_floats = p->k_splits * p->m * p->n;
  p->combine_blocks = (p->m * p->n + TB_GEMV_COMBINE_THREADS - 1) / TB_GEMV_COMBINE_THREADS;
}

struct tb_gemm_target tb_gemm_target_h200(void) {
  return (struct tb_gemm_target){132, true, true};
}

enum tb_status tb_plan_gemm(size_t m, size_t n, size_t k, enum tb_realization realization,
                            struct tb_gemm_block user, struct tb_gemm_target target,
                            struct tb_gemm_alignment align, struct tb_gemm_plan *p,
                            struct tb_error *err) {
  memset(p, 0, sizeof *p);
  p->m = m;
  p->n = n;
  p->k = k;
  p->realization = realization;
  p->multiprocessors = target.multiprocessors;
  p->rule = "--gemm-block (given by the user)";
  p->k_splits = 1;
  p->k_chunk = k;
  if (user.m == 0 && tb_gemv_applies(m, n)) {
    tb_plan_gemv(p, align.a_rows && align.b_rows);
    return TB_OK;
  }
  /* a tile's B rows (and the output's) are float4s only where n is a multiple of 4 */
  p->vector_width = align.b_rows && n % 4 == 0 ? 4 : 1;
  p->a_vector_width = align.a_rows ? 4 : 1;
  enum tb_status st = realization == TB_REALIZATION_SIMT ? simt_shape(p, user, err)
                                                         : tensor_shape(p, user, target, err);
  if (st != TB_OK) {
    return st;
  }
  p->grid_m = (m + p->block_m - 1) / p->block_m;
  p->grid_n = (n + p->block_n - 1) / p->block_n;
  p->blocks = p->grid_m * p->grid_n;
  p->waves = (p->blocks + p->multiprocessors - 1) / p->multiprocessors;
  p->launches = 1;
  if (p->warpgroups != 0 && !p->tensor_maps) {
    wgmma_packing(p);
  }
  if (p->tensor_maps && user.m == 0) {
    split_k(p);
  }
  return TB_OK;
}
