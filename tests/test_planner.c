/* The analytic planner (docs/method.md §7). Every expected number below is
 * derived by hand in the comment above it, not read from the planner. */
#include <stdio.h>
#include <string.h>

#include "planner/gemm.h"
#include "planner/planner.h"
#include "test_support.h"

static struct tb_plan plan_of(enum tb_op op, size_t m, size_t n, enum tb_variant v) {
  struct tb_plan plan;
  struct tb_error err = {0};
  struct tb_device_limits limits = tb_device_limits_default();
  assert_int_equal(tb_plan_reduction(op, m, n, v, &limits, "analytic", &plan, &err), TB_OK);
  assert_int_equal(plan.candidate_count, 39);
  return plan;
}

/* Brute force: deal each group of 4 to lane g mod width, count elements. */
static unsigned long long slots_by_dealing(size_t n, unsigned width) {
  static unsigned long long own[1024];
  memset(own, 0, sizeof own);
  for (size_t g = 0; 4 * g < n; ++g) {
    own[g % width] += n - 4 * g < 4 ? n - 4 * g : 4;
  }
  unsigned long long most = 0;
  for (unsigned l = 0; l < width; ++l) {
    most = own[l] > most ? own[l] : most;
  }
  return most;
}

static void slots_formula_matches_dealing(void **state) {
  for (size_t n = 1; n <= 5000; n += (n < 300 ? 1 : 37)) {
    for (unsigned s = 1; s <= 32; ++s) {
      assert_int_equal(tb_slots(n, 32 * s), slots_by_dealing(n, 32 * s));
    }
  }
}

static void enumeration_order(void **state) {
  struct tb_plan plan = plan_of(TB_OP_SUM, 10, 100, TB_VARIANT_AUTOMATIC);
  /* s = 1 with p = 1..8 first, then s = 2..32 with p = 1 */
  assert_int_equal(plan.candidates[0].subgroups, 1);
  assert_int_equal(plan.candidates[7].packing, 8);
  assert_int_equal(plan.candidates[8].subgroups, 2);
  assert_int_equal(plan.candidates[8].packing, 1);
  assert_int_equal(plan.candidates[38].subgroups, 32);
}

/* softmax 129x3000: 750 groups of 4; reductions 2, rounds 5*slots, storage 2*slots.
 * s=1: 750 = 23*32 + 14 -> slots 96, storage 192 > 64: all eight rejected.
 * s=2: 750 = 11*64 + 46 -> slots 48, storage 96: rejected. s=3: slots 32, storage 64: kept.
 * s = 12..23 (width <= 750 < 2*width): slots 8, score = 40 + 4s + 16, least at s=12: 104.
 * s = 11: slots 12 -> 60 + 44 + 16 = 120; s >= 24: slots 4 -> 20 + 4s + 16 >= 132.
 * waves = ceil(129/64) = 3 -> kernel score 312; index of s=12 is 8 + 10 = 18.
 * shared = 2*12*1*4 = 96 B; barriers 2; utilisation 3000/(384*8) = 0.9765625. */
static void softmax_129x3000(void **state) {
  struct tb_plan plan = plan_of(TB_OP_SOFTMAX, 129, 3000, TB_VARIANT_AUTOMATIC);
  assert_int_equal(plan.rejected_count, 9);
  assert_true(plan.candidates[0].rejected);
  assert_non_null(strstr(plan.candidates[0].rejection, "storage 192 > 64"));
  assert_false(plan.candidates[9].rejected);
  assert_int_equal(plan.mapping, TB_MAPPING_REGISTER_ROWS);
  assert_int_equal(plan.chosen, 18);
  const struct tb_candidate *c = &plan.selected;
  assert_int_equal(c->subgroups, 12);
  assert_int_equal(c->slots, 8);
  assert_int_equal(c->rounds, 40);
  assert_int_equal(c->storage, 16);
  assert_double_equal(c->score, 104.0, 0.0);
  assert_int_equal(c->waves, 3);
  assert_double_equal(c->kernel_score, 312.0, 0.0);
  assert_int_equal(c->shared_bytes, 96);
  assert_int_equal(c->barrier_sites, 2);
  assert_double_equal(c->lane_utilisation, 0.9765625, 0.0);
  assert_int_equal(c->thread_blocks, 129);
  assert_int_equal(c->independent_subgroups, 0);
}

/* rmsnorm 64x257 (n % 4 = 1): 65 groups, the last with 1 element.
 * s=1: 65 = 2*32 + 1 -> lane 0 owns 3 groups, the last partial: slots 4*2 + 1 = 9;
 * rounds 27; score = 27 + 2 + 16/p, least at p = 8: 31.
 * s=2: 65 = 1*64 + 1 -> slots 5: 15 + 4 + 16 = 35; s=3: slots 4: 12 + 6 + 16 = 34.
 * waves = ceil(64/64) = 1. Chosen (s 1, p 8) = index 7, kernel score 31,
 * threads 256, 8 independent warps, ceil(64/8) = 8 blocks, no shared memory,
 * utilisation 257/(32*9) = 0.892361..., payload: 257*8 B read, 257*4 written. */
static void rmsnorm_n_not_multiple_of_4(void **state) {
  struct tb_plan plan = plan_of(TB_OP_RMSNORM, 64, 257, TB_VARIANT_AUTOMATIC);
  assert_int_equal(plan.chosen, 7);
  const struct tb_candidate *c = &plan.selected;
  assert_int_equal(c->slots, 9);
  assert_int_equal(plan.candidates[8].slots, 5);
  assert_int_equal(plan.candidates[9].slots, 4);
  assert_double_equal(c->kernel_score, 31.0, 0.0);
  assert_int_equal(c->threads, 256);
  assert_int_equal(c->independent_subgroups, 8);
  assert_int_equal(c->thread_blocks, 8);
  assert_int_equal(c->shared_bytes, 0);
  assert_int_equal(c->barrier_sites, 0);
  assert_double_equal(c->lane_utilisation, 257.0 / 288.0, 1e-15);
  assert_int_equal(c->program_global_read, 257 * 8);
  assert_int_equal(c->program_global_write, 257 * 4);
  assert_int_equal(c->worker_private_read, 9 * 8);
}

/* sum 1x1 (m = 1, n = 1): one group of 1 element, so every width has slots 1,
 * rounds 3, storage 1; score = 3 + 2s + 16/p, least (s 1, p 8) = 3 + 2 + 2 = 7.
 * Nothing is rejected (s=32 has exactly 1024 threads). Utilisation 1/32. The
 * candidates are still scored and recorded, but n <= 32 runs subwarp rows:
 * one lane a row (1 * 8 >= 1), 256 rows a block, one block, no shuffle. */
static void sum_1x1(void **state) {
  struct tb_plan plan = plan_of(TB_OP_SUM, 1, 1, TB_VARIANT_AUTOMATIC);
  assert_int_equal(plan.rejected_count, 0);
  assert_int_equal(plan.best_register, 7);
  const struct tb_candidate *best = &plan.candidates[7];
  assert_double_equal(best->kernel_score, 7.0, 0.0);
  assert_int_equal(best->thread_blocks, 1);
  assert_double_equal(best->lane_utilisation, 1.0 / 32.0, 0.0);
  assert_int_equal(plan.candidates[38].threads, 1024);
  assert_false(plan.candidates[38].rejected);
  assert_int_equal(plan.mapping, TB_MAPPING_SUBWARP_ROWS);
  assert_int_equal(plan.chosen, -1);
  assert_int_equal(plan.subwarp.lanes, 1);
  assert_int_equal(plan.subwarp.shuffle_levels, 0);
  assert_int_equal(plan.subwarp.rows_per_block, 256);
  assert_int_equal(plan.subwarp.thread_blocks, 1);
}

/* layernorm 5x3 (n < 4): slots 3, rounds 15, storage 6; score 15 + 4s + 16/p,
 * least (s 1, p 8): 15 + 4 + 2 = 21; shared 0; 1 block (ceil(5/8)). What
 * runs is subwarp rows: 1 lane a row caching all 3 elements, utilisation 1. */
static void layernorm_n_below_4(void **state) {
  struct tb_plan plan = plan_of(TB_OP_LAYERNORM, 5, 3, TB_VARIANT_AUTOMATIC);
  assert_int_equal(plan.best_register, 7);
  assert_int_equal(plan.candidates[7].slots, 3);
  assert_double_equal(plan.candidates[7].kernel_score, 21.0, 0.0);
  assert_int_equal(plan.candidates[7].thread_blocks, 1);
  assert_int_equal(plan.mapping, TB_MAPPING_SUBWARP_ROWS);
  assert_int_equal(plan.subwarp.lanes, 1);
  assert_int_equal(plan.subwarp.slots, 3);
  assert_double_equal(plan.subwarp.lane_utilisation, 1.0, 0.0);
}

/* Subwarp rows (n <= 32, automatic): lanes = the least power of two with
 * 8 * lanes >= n, slots = ceil(n / lanes), 32 / lanes rows a warp, 256 / lanes
 * rows a block of 256 threads, ceil(m / rows) blocks, log2(lanes) shuffles a
 * reduction, no shared memory, no barriers.
 * softmax 65536x17: 2 * 8 = 16 < 17 <= 4 * 8 -> 4 lanes,
 *   slots ceil(17/4) = 5, 8 rows a warp, 64 a block, 65536/64 = 1024 blocks,
 *   2 levels, 2 reductions, utilisation 17/20 = 0.85.
 * rmsnorm 4096x17: the same lanes, 4096/64 = 64 blocks, 1 reduction.
 * sum 100x1: 1 lane, 256 rows a block -> 1 block, 0 levels.
 * layernorm 37x32: 32 <= 4 * 8 -> 4 lanes, slots 8, 1 block, utilisation 1.
 * n = 8 -> 1 lane (8 slots); n = 9 -> 2 lanes (5 slots); n = 16 -> 2 lanes
 * (8); m = 65537 -> one more block for the tail row. */
static void subwarp_rows_rule(void **state) {
  struct tb_plan p = plan_of(TB_OP_SOFTMAX, 65536, 17, TB_VARIANT_AUTOMATIC);
  assert_int_equal(p.mapping, TB_MAPPING_SUBWARP_ROWS);
  assert_int_equal(p.chosen, -1);
  assert_non_null(strstr(p.rule, "very short rows"));
  assert_int_equal(p.subwarp.lanes, 4);
  assert_int_equal(p.subwarp.slots, 5);
  assert_int_equal(p.subwarp.rows_per_warp, 8);
  assert_int_equal(p.subwarp.threads_per_block, 256);
  assert_int_equal(p.subwarp.rows_per_block, 64);
  assert_int_equal(p.subwarp.thread_blocks, 1024);
  assert_int_equal(p.subwarp.reductions, 2);
  assert_int_equal(p.subwarp.shuffle_levels, 2);
  assert_int_equal(p.subwarp.shared_bytes, 0);
  assert_int_equal(p.subwarp.barrier_sites, 0);
  assert_double_equal(p.subwarp.lane_utilisation, 0.85, 1e-15);
  struct tb_plan r = plan_of(TB_OP_RMSNORM, 4096, 17, TB_VARIANT_AUTOMATIC);
  assert_int_equal(r.subwarp.lanes, 4);
  assert_int_equal(r.subwarp.thread_blocks, 64);
  assert_int_equal(r.subwarp.reductions, 1);
  struct tb_plan one = plan_of(TB_OP_SUM, 100, 1, TB_VARIANT_AUTOMATIC);
  assert_int_equal(one.subwarp.lanes, 1);
  assert_int_equal(one.subwarp.rows_per_block, 256);
  assert_int_equal(one.subwarp.thread_blocks, 1);
  assert_int_equal(one.subwarp.shuffle_levels, 0);
  struct tb_plan full = plan_of(TB_OP_LAYERNORM, 37, 32, TB_VARIANT_AUTOMATIC);
  assert_int_equal(full.subwarp.lanes, 4);
  assert_int_equal(full.subwarp.slots, 8);
  assert_int_equal(full.subwarp.thread_blocks, 1);
  assert_double_equal(full.subwarp.lane_utilisation, 1.0, 0.0);
  const size_t lengths[][3] = {{8, 1, 8}, {9, 2, 5}, {16, 2, 8}, {24, 4, 6}};
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
    struct tb_plan q = plan_of(TB_OP_SUM, 1000, lengths[i][0], TB_VARIANT_AUTOMATIC);
    assert_int_equal(q.subwarp.lanes, lengths[i][1]);
    assert_int_equal(q.subwarp.slots, lengths[i][2]);
  }
  assert_int_equal(plan_of(TB_OP_SUM, 65537, 17, TB_VARIANT_AUTOMATIC).subwarp.thread_blocks, 1025);
}

/* n = 33 keeps register rows (the choice for n > 32 is unchanged), and so do
 * the fixed variants at any n: reference is (s 1, p 8) at n = 17 too. */
static void subwarp_rows_bounds(void **state) {
  struct tb_plan longer = plan_of(TB_OP_SOFTMAX, 65536, 33, TB_VARIANT_AUTOMATIC);
  assert_int_equal(longer.mapping, TB_MAPPING_REGISTER_ROWS);
  assert_int_equal(longer.chosen, longer.best_register);
  struct tb_plan ref = plan_of(TB_OP_SOFTMAX, 65536, 17, TB_VARIANT_REFERENCE);
  assert_int_equal(ref.mapping, TB_MAPPING_REGISTER_ROWS);
  assert_int_equal(ref.selected.subgroups, 1);
  assert_int_equal(ref.selected.packing, 8);
  struct tb_plan cand = plan_of(TB_OP_RMSNORM, 5, 3, TB_VARIANT_CANDIDATE);
  assert_int_equal(cand.mapping, TB_MAPPING_REGISTER_ROWS);
  assert_string_equal(tb_mapping_name(TB_MAPPING_SUBWARP_ROWS), "subwarp_rows");
}

/* sum 64x258: 65 groups, the last with 2 elements.
 * (s 1, p 8): 65 = 2*32 + 1 -> slots 8 + 2 = 10: 30 + 2 + 2 = 34.
 * (s 3, p 1): 65 < 96 -> slots 4: 12 + 6 + 16 = 34. A tie: the first (index 7) wins. */
static void tie_goes_to_the_first(void **state) {
  struct tb_plan plan = plan_of(TB_OP_SUM, 64, 258, TB_VARIANT_AUTOMATIC);
  assert_double_equal(plan.candidates[7].kernel_score, 34.0, 0.0);
  assert_double_equal(plan.candidates[9].kernel_score, 34.0, 0.0);
  assert_int_equal(plan.chosen, 7);
}

static struct tb_plan plan_under(const char *profile, enum tb_op op, size_t m, size_t n) {
  struct tb_plan plan;
  struct tb_error err = {0};
  struct tb_device_limits limits = tb_device_limits_h200();
  assert_int_equal(tb_plan_reduction(op, m, n, TB_VARIANT_AUTOMATIC, &limits, profile, &plan, &err),
                   TB_OK);
  return plan;
}

/* calibrated-2, whole groups first. softmax 64x4096 (1024 groups, reductions 2,
 * rounds 5*slots, B = 32, one wave): s=11 (width 352): 1024 = 2*352 + 320 ->
 * slots 12, 60 + 44 + 32 = 136, but 352*12 = 4224 != 4096; s=16 (width 512):
 * slots 8, 40 + 64 + 32 = 136 too, and 512*8 = 4096. calibrated takes the first
 * of the tie, s=11 (index 8 + 9 = 17); calibrated-2 the whole groups' least,
 * s=16 (s=8: 80 + 32 + 32 = 144; s=32: slots 4, 20 + 128 + 32 = 180), index 22. */
static void whole_groups_first(void **state) {
  struct tb_plan old = plan_under(TB_PLANNER_PROFILE_CALIBRATED, TB_OP_SOFTMAX, 64, 4096);
  assert_int_equal(old.chosen, 17);
  struct tb_plan plan = plan_under(TB_PLANNER_PROFILE_CALIBRATED_2, TB_OP_SOFTMAX, 64, 4096);
  assert_false(plan.candidates[17].whole_groups);
  assert_true(plan.candidates[22].whole_groups);
  assert_int_equal(plan.chosen, 22);
  assert_int_equal(plan.selected.subgroups, 16);
  /* n = 257 (odd): no candidate is of whole groups, so the preference holds nowhere and
   * the plan is calibrated's */
  struct tb_plan odd = plan_under(TB_PLANNER_PROFILE_CALIBRATED_2, TB_OP_SOFTMAX, 16384, 257);
  struct tb_plan odd_old = plan_under(TB_PLANNER_PROFILE_CALIBRATED, TB_OP_SOFTMAX, 16384, 257);
  assert_int_equal(odd.chosen, odd_old.chosen);
}

/* calibrated-2, fed threads. softmax 4096x1024 (256 groups; 132 SMs x 2048 =
 * 270336 resident threads): s=8 (width 256) has slots 4, 20 + 32 + 32 = 84, and
 * reads 4 x 4 = 16 B a thread over 4096 x 256 = 1048576 threads: starved. s=4:
 * slots 8, 40 + 16 + 32 = 88, 32 B: fed, the least of the rest (s=2: 80 + 8 +
 * 32 = 120; s=1, p=8: 160 + 4 + 4 = 168), index 8 + 2 = 10. At 1024x1024 s=8's
 * grid is 1024 x 256 = 262144 threads, within one wave: s=8 stays (index 14).
 * rmsnorm 4096x1024 reads x and the weight, 4 x 8 = 32 B at s=8: s=8 stays. */
static void fed_threads(void **state) {
  struct tb_plan plan = plan_under(TB_PLANNER_PROFILE_CALIBRATED_2, TB_OP_SOFTMAX, 4096, 1024);
  assert_int_equal(plan.candidates[14].thread_read_bytes, 16);
  assert_int_equal(plan.candidates[14].grid_threads, 1048576);
  assert_int_equal(plan.chosen, 10);
  assert_int_equal(plan_under(TB_PLANNER_PROFILE_CALIBRATED, TB_OP_SOFTMAX, 4096, 1024).chosen, 14);
  assert_int_equal(plan_under(TB_PLANNER_PROFILE_CALIBRATED_2, TB_OP_SOFTMAX, 1024, 1024).chosen,
                   14);
  struct tb_plan rms = plan_under(TB_PLANNER_PROFILE_CALIBRATED_2, TB_OP_RMSNORM, 4096, 1024);
  assert_int_equal(rms.candidates[14].thread_read_bytes, 32);
  assert_int_equal(rms.chosen, 14);
  /* the default profile is calibrated-2 */
  assert_string_equal(TB_PLANNER_PROFILE_DEFAULT, "calibrated-2");
}

/* calibrated-2 where neither preference holds: sum 65536x64. 16 groups of 4: every s
 * deals them one a lane (32s lanes, 4 slots), so 32s * 4 >= 128 > 64 lanes' worth: no
 * candidate is of whole groups. Every thread reads 4 x 4 = 16 B and every grid outnumbers
 * the 270336 resident threads (s=1, p=8: 8192 blocks x 256 = 2097152): every candidate is
 * starved, so the preference is dropped and the pick is calibrated's: s=1, p=8, 12 + 2 +
 * 32/8 = 18 (s=2: 12 + 4 + 32 = 48), index 7. */
static void preferences_that_hold_nowhere(void **state) {
  struct tb_plan plan = plan_under(TB_PLANNER_PROFILE_CALIBRATED_2, TB_OP_SUM, 65536, 64);
  for (unsigned k = 0; k < plan.candidate_count; ++k) {
    assert_false(plan.candidates[k].whole_groups);
    assert_int_equal(plan.candidates[k].thread_read_bytes, 16);
  }
  assert_int_equal(plan.candidates[7].grid_threads, 2097152);
  assert_int_equal(plan.chosen, 7);
  assert_int_equal(plan_under(TB_PLANNER_PROFILE_CALIBRATED, TB_OP_SUM, 65536, 64).chosen, 7);
}

/* softmax 200x40000: s=32 (width 1024): 10000 groups = 9*1024 + 784 -> slots 40,
 * storage 80 > 64. Narrower widths own more. Every candidate is rejected; with
 * 200 rows (>= 132 SMs) one 512-thread block streams each row: 200 blocks,
 * two memory passes (online max+sum, then output). */
static void long_rows_every_candidate_rejected(void **state) {
  struct tb_plan plan = plan_of(TB_OP_SOFTMAX, 200, 40000, TB_VARIANT_AUTOMATIC);
  assert_int_equal(plan.rejected_count, 39);
  assert_int_equal(plan.best_register, -1);
  assert_int_equal(plan.candidates[38].slots, 40);
  assert_int_equal(plan.mapping, TB_MAPPING_BLOCK_STREAMING);
  assert_int_equal(plan.chosen, -1);
  assert_non_null(strstr(plan.rule, "every register candidate rejected"));
  assert_int_equal(plan.stream.thread_blocks, 200);
  assert_int_equal(plan.stream.memory_passes, 2);
  /* a fixed variant that is rejected falls back the same way and says so */
  struct tb_plan ref = plan_of(TB_OP_SOFTMAX, 200, 40000, TB_VARIANT_REFERENCE);
  assert_int_equal(ref.mapping, TB_MAPPING_BLOCK_STREAMING);
  assert_true(ref.fixed.rejected);
  assert_non_null(strstr(ref.rule, "rejected"));
}

/* sum 8x65536: s=32 is feasible (slots 64, storage 64), but 8 rows < 132 SMs
 * and n >= 8192, so the automatic plan splits rows: k = min(ceil(2*132/8) = 33,
 * 65536/2048 = 32) = 32 chunks of 2048, 8*32 = 256 blocks. One value a row:
 * one launch, whose last block of a row merges it (two block combines of 8
 * warps' sums, 32 B each, and the verdict's word: 68 B, ptxas's figure; three
 * barriers). A row output (softmax) keeps two launches and one barrier. */
static void few_long_rows_split(void **state) {
  struct tb_plan plan = plan_of(TB_OP_SUM, 8, 65536, TB_VARIANT_AUTOMATIC);
  assert_int_equal(plan.best_register, 38);
  assert_int_equal(plan.mapping, TB_MAPPING_SPLIT_ROW);
  assert_int_equal(plan.stream.blocks_per_row, 32);
  assert_int_equal(plan.stream.chunk_elements, 2048);
  assert_int_equal(plan.stream.thread_blocks, 256);
  assert_int_equal(plan.stream.launches, 1);
  assert_int_equal(plan.stream.shared_bytes, 68);
  assert_int_equal(plan.stream.barrier_sites, 3);
  assert_non_null(strstr(plan.rule, "few long rows"));
  struct tb_plan rows = plan_of(TB_OP_SOFTMAX, 8, 65536, TB_VARIANT_AUTOMATIC);
  assert_int_equal(rows.mapping, TB_MAPPING_SPLIT_ROW);
  assert_int_equal(rows.stream.launches, 2);
  assert_int_equal(rows.stream.shared_bytes, 64);
  assert_int_equal(rows.stream.barrier_sites, 1);
}

static struct tb_plan plan_on_h200(enum tb_op op, size_t m, size_t n) {
  struct tb_plan plan;
  struct tb_error err = {0};
  struct tb_device_limits h200 = tb_device_limits_h200();
  assert_int_equal(
      tb_plan_reduction(op, m, n, TB_VARIANT_AUTOMATIC, &h200, "analytic", &plan, &err), TB_OK);
  return plan;
}

/* A cluster row of `per_row` blocks whose chunks of `chunk` floats stay in
 * `cache` bytes of shared memory (0: not there), read `passes` times. */
static void assert_cluster_chunks(const struct tb_plan *plan, unsigned per_row,
                                  unsigned long long chunk, unsigned cache, unsigned passes) {
  assert_int_equal(plan->mapping, TB_MAPPING_CLUSTER_ROW);
  assert_int_equal(plan->stream.blocks_per_row, per_row);
  assert_int_equal(plan->stream.cluster_blocks, per_row);
  assert_int_equal(plan->stream.chunk_elements, chunk);
  assert_int_equal(plan->stream.cache_shared_bytes, cache);
  assert_int_equal(plan->stream.memory_passes, passes);
}

/* With clusters (the H200: up to 16 blocks), few long rows that fill half the
 * SMs take one launch. softmax 8x65536: k = min(16, ceil(264/8) = 33, 32) = 16
 * blocks of 4096 elements, 8*16 = 128 >= 132/2; shared = 2 words x 8 warps
 * x 4 B + the mbarrier's 8 + the row's 16 x 2 pushed = 64 + 8 + 128 = 200 B;
 * one barrier, the block's (the row's statistics come counted on the
 * mbarrier). 100x8195: k = min(16, 3, 4) = 3, chunks
 * of ceil(8195/3) = 2732 -> 2732 (a multiple of 4), 300 blocks. Two rows of
 * a million fill only 32 SMs with clusters: split, 132 chunks each. */
static void few_long_rows_clusters(void **state) {
  struct tb_plan plan = plan_on_h200(TB_OP_SOFTMAX, 8, 65536);
  assert_int_equal(plan.mapping, TB_MAPPING_CLUSTER_ROW);
  assert_int_equal(plan.stream.blocks_per_row, 16);
  assert_int_equal(plan.stream.cluster_blocks, 16);
  assert_int_equal(plan.stream.chunk_elements, 4096);
  assert_int_equal(plan.stream.thread_blocks, 128);
  assert_int_equal(plan.stream.launches, 1);
  assert_int_equal(plan.stream.memory_passes, 1); /* 16 floats a thread: in registers */
  assert_int_equal(plan.stream.shared_bytes, 200);
  assert_int_equal(plan.stream.barrier_sites, 1);
  assert_non_null(strstr(plan.rule, "cluster"));
  /* one word a row (rmsnorm): 32 + 8 + 16 x 4 = 104 B, three (layernorm): 96 + 8 + 192 = 296 B,
   * ptxas's figures for these kernels */
  assert_int_equal(plan_on_h200(TB_OP_RMSNORM, 8, 65536).stream.shared_bytes, 104);
  assert_int_equal(plan_on_h200(TB_OP_LAYERNORM, 8, 65536).stream.shared_bytes, 296);
  struct tb_plan odd = plan_on_h200(TB_OP_LAYERNORM, 100, 8195);
  assert_int_equal(odd.mapping, TB_MAPPING_CLUSTER_ROW);
  assert_int_equal(odd.stream.cluster_blocks, 3);
  assert_int_equal(odd.stream.chunk_elements, 2732);
  assert_int_equal(odd.stream.thread_blocks, 300);
  /* sum of ten rows of 500000 (no row output): k = 16, chunks of 31252 > 32 floats x 256
   * threads, streamed once (persistent_rows takes the other operations' rows) */
  struct tb_plan ten = plan_on_h200(TB_OP_SUM, 10, 500000);
  assert_cluster_chunks(&ten, 16, 31252, 0, 1);
  struct tb_plan two = plan_on_h200(TB_OP_SUM, 2, 1000000);
  assert_int_equal(two.mapping, TB_MAPPING_SPLIT_ROW);
  assert_int_equal(two.stream.blocks_per_row, 132);
  assert_int_equal(two.stream.cluster_blocks, 0);
  assert_int_equal(two.stream.launches, 1);
  /* without clusters (unknown device) the same rows split in two launches */
  assert_int_equal(plan_of(TB_OP_SOFTMAX, 8, 65536, TB_VARIANT_AUTOMATIC).mapping,
                   TB_MAPPING_SPLIT_ROW);
}

/* Rows no register candidate holds, on the H200 (clusters of up to 16): the
 * fewest blocks a row, at least 2, whose chunks of whole groups of 4 take at
 * most 96 KiB of shared memory. softmax 4096x393216: 16 chunks of 24576
 * floats (98304 B, exactly the cache), 65536 blocks in clusters of 16, one
 * memory pass. softmax 200x40000: 2 chunks of 20000 (80000 B). The norms
 * from 3 chunks (TB_CLUSTER_SHARED_WEIGHT_MIN_BLOCKS): 1024x65536 in 3 of
 * 21848 floats; their rows of 2 chunks (200x40000) stream. A row one group
 * longer than 16 such chunks (393220) and sum (one pass anyway) stream in one
 * block a row; so does every row on a device without clusters. Few long rows keep their rule and
 * cache a chunk in shared memory where it fits: layernorm 8x262144, 16 chunks
 * of 16384 (65536 B); rows too long for 16 such chunks take persistent rows
 * (few_very_long_rows_persistent). */
static void long_rows_shared_chunks(void **state) {
  struct tb_plan wide = plan_on_h200(TB_OP_SOFTMAX, 4096, 393216);
  assert_cluster_chunks(&wide, 16, 24576, 98304, 1);
  assert_non_null(strstr(wide.rule, "fit shared memory"));
  assert_int_equal(wide.stream.thread_blocks, 4096ULL * 16);
  assert_int_equal(wide.stream.launches, 1);
  assert_int_equal(wide.stream.barrier_sites, 1);
  struct tb_plan two = plan_on_h200(TB_OP_SOFTMAX, 200, 40000);
  assert_cluster_chunks(&two, 2, 20000, 80000, 1);
  /* the norms too, since their output pass loads the weight in batches, from 3 chunks */
  struct tb_plan norm = plan_on_h200(TB_OP_RMSNORM, 1024, 65536);
  assert_cluster_chunks(&norm, 3, 21848, 87392, 1);
  assert_int_equal(plan_on_h200(TB_OP_LAYERNORM, 200, 40000).mapping, TB_MAPPING_BLOCK_STREAMING);
  struct tb_plan wide_norm = plan_on_h200(TB_OP_LAYERNORM, 4096, 393216);
  assert_cluster_chunks(&wide_norm, 16, 24576, 98304, 1);
  struct tb_plan longer = plan_on_h200(TB_OP_SOFTMAX, 4096, 393220);
  assert_int_equal(longer.mapping, TB_MAPPING_BLOCK_STREAMING);
  assert_int_equal(longer.stream.cache_shared_bytes, 0);
  assert_int_equal(longer.stream.memory_passes, 2);
  struct tb_plan sum = plan_on_h200(TB_OP_SUM, 4096, 393216);
  assert_int_equal(sum.mapping, TB_MAPPING_BLOCK_STREAMING);
  assert_int_equal(plan_of(TB_OP_SOFTMAX, 4096, 393216, TB_VARIANT_AUTOMATIC).mapping,
                   TB_MAPPING_BLOCK_STREAMING);
  struct tb_plan few = plan_on_h200(TB_OP_LAYERNORM, 8, 262144);
  assert_cluster_chunks(&few, 16, 16384, 65536, 1);
  assert_non_null(strstr(few.rule, "few long rows"));
  /* a chunk in registers takes no shared cache */
  struct tb_plan registers = plan_on_h200(TB_OP_SOFTMAX, 8, 65536);
  assert_cluster_chunks(&registers, 16, 4096, 0, 1);
}

/* A persistent row of `per_row` blocks a row in `groups` groups, chunks of
 * `chunk` floats in a ring of 27 x 16 B x 256 threads = 110592 B of shared
 * memory: one launch, one memory pass. */
static void assert_persistent(const struct tb_plan *plan, unsigned groups, unsigned per_row,
                              unsigned long long chunk) {
  assert_int_equal(plan->mapping, TB_MAPPING_PERSISTENT_ROW);
  assert_int_equal(plan->stream.row_groups, groups);
  assert_int_equal(plan->stream.blocks_per_row, per_row);
  assert_int_equal(plan->stream.chunk_elements, chunk);
  assert_int_equal(plan->stream.thread_blocks, groups * per_row);
  assert_int_equal(plan->stream.cache_shared_bytes, 110592);
  assert_true(chunk * 4 <= TB_CLUSTER_SHARED_BYTES);
  assert_int_equal(plan->stream.memory_passes, 1);
  assert_int_equal(plan->stream.launches, 1);
  assert_int_equal(plan->stream.cluster_blocks, 0);
  assert_int_equal(plan->stream.barrier_sites, 3);
  assert_non_null(strstr(plan->rule, "resident"));
}

/* Few rows too long for 16 chunks of 96 KiB (n > 393216), on the H200 (264
 * resident blocks of 108 KiB): rmsnorm 16x4194304 needs chunks from 171 blocks
 * (4194304 / 170 > 24576 floats), so one group of all 264 blocks takes the rows
 * in turn, chunks of 15888 floats, shared 2 x 1 word x 8 warps x 4 B = 64;
 * its weight (16 MiB) is read again each turn, layernorm's weight and bias
 * (32 MiB) too many: its 16 rows keep cluster rows, one row of it takes
 * persistent rows (192 B of statistics).
 * softmax 1x1000000: one group, chunks of 3788. rmsnorm 10x500000: 21 blocks
 * at least, 12 groups would fit, 10 rows take 10 groups of 26 (19232 floats).
 * softmax 16x524288: 22 blocks at least, 12 groups, two turns: 8 groups of 33.
 * Sum (one pass anyway), rows a cluster of 16 caches (393216), a device
 * without clusters, and rows longer than 264 chunks (n > 6488064) keep their
 * rules. */
static void few_very_long_rows_persistent(void **state) {
  struct tb_plan big = plan_on_h200(TB_OP_RMSNORM, 16, 4194304);
  assert_persistent(&big, 1, 264, 15888);
  assert_int_equal(big.stream.shared_bytes, 64);
  assert_int_equal(plan_on_h200(TB_OP_LAYERNORM, 16, 4194304).mapping, TB_MAPPING_CLUSTER_ROW);
  struct tb_plan one = plan_on_h200(TB_OP_LAYERNORM, 1, 4194304);
  assert_persistent(&one, 1, 264, 15888);
  assert_int_equal(one.stream.shared_bytes, 192);
  assert_persistent((struct tb_plan[]){plan_on_h200(TB_OP_SOFTMAX, 1, 1000000)}, 1, 264, 3788);
  assert_persistent((struct tb_plan[]){plan_on_h200(TB_OP_RMSNORM, 10, 500000)}, 10, 26, 19232);
  assert_persistent((struct tb_plan[]){plan_on_h200(TB_OP_SOFTMAX, 16, 524288)}, 8, 33, 15888);
  assert_int_equal(plan_on_h200(TB_OP_SUM, 16, 4194304).mapping, TB_MAPPING_CLUSTER_ROW);
  assert_int_equal(plan_on_h200(TB_OP_SOFTMAX, 16, 393216).mapping, TB_MAPPING_CLUSTER_ROW);
  assert_int_equal(plan_of(TB_OP_LAYERNORM, 16, 4194304, TB_VARIANT_AUTOMATIC).mapping,
                   TB_MAPPING_SPLIT_ROW);
  assert_int_not_equal(plan_on_h200(TB_OP_SOFTMAX, 16, 6488068).mapping, TB_MAPPING_PERSISTENT_ROW);
  assert_persistent((struct tb_plan[]){plan_on_h200(TB_OP_SOFTMAX, 1, 6488064)}, 1, 264, 24576);
  /* multiprocessors of 100 KiB (sm_120) hold no two blocks of the ring: cluster rows */
  struct tb_device_limits small = tb_device_limits_h200();
  small.shared_bytes_per_multiprocessor = 100 * 1024;
  struct tb_plan plan;
  struct tb_error err = {0};
  assert_int_equal(tb_plan_reduction(TB_OP_SOFTMAX, 16, 4194304, TB_VARIANT_AUTOMATIC, &small,
                                     "analytic", &plan, &err),
                   TB_OK);
  assert_int_equal(plan.mapping, TB_MAPPING_CLUSTER_ROW);
}

/* Fixed variants. softmax 4096x1024: 256 groups.
 * reference (s 1, p 8): slots 32, rounds 160, score 160 + 4 + 2 = 166; waves 64.
 * candidate (s 2, p 4): slots 16, rounds 80, score 80 + 8 + 4 = 92, kernel 92*64 = 5888,
 * threads 256, shared 2*2*4*4 = 64 B; (2, 4) is not among the 39, so chosen = -1. */
static void fixed_variants(void **state) {
  struct tb_plan ref = plan_of(TB_OP_SOFTMAX, 4096, 1024, TB_VARIANT_REFERENCE);
  assert_int_equal(ref.chosen, 7);
  assert_double_equal(ref.selected.kernel_score, 166.0 * 64, 0.0);
  struct tb_plan cand = plan_of(TB_OP_SOFTMAX, 4096, 1024, TB_VARIANT_CANDIDATE);
  assert_int_equal(cand.mapping, TB_MAPPING_REGISTER_ROWS);
  assert_int_equal(cand.chosen, -1);
  assert_int_equal(cand.selected.subgroups, 2);
  assert_int_equal(cand.selected.packing, 4);
  assert_int_equal(cand.selected.threads, 256);
  assert_double_equal(cand.selected.kernel_score, 5888.0, 0.0);
  assert_int_equal(cand.selected.shared_bytes, 64);
}

static void device_limits_reject(void **state) {
  struct tb_device_limits small = {true, 256, 48, 16, "test", 0, 0, 0};
  struct tb_plan plan;
  struct tb_error err = {0};
  assert_int_equal(tb_plan_reduction(TB_OP_SOFTMAX, 100, 3000, TB_VARIANT_AUTOMATIC, &small,
                                     "analytic", &plan, &err),
                   TB_OK);
  /* s = 12 would need 384 threads > 256: the pick moves to s <= 8 */
  assert_true(plan.candidates[18].rejected);
  assert_non_null(strstr(plan.candidates[18].rejection, "device limit 256"));
  assert_true(plan.selected.threads <= 256);
  /* s = 7: 2*7*4 = 56 B of shared memory > 48 */
  assert_non_null(strstr(plan.candidates[13].rejection, "shared memory 56 B"));
}

/* Register budget (device known), per thread = 65536 / (warps rounded up to
 * a multiple of 4, x 32), in units of 8: 20 warps -> 102 -> 96; 23 or 24
 * warps -> 85 -> 80; 25..28 -> 73 -> 72; 29..32 -> 64.
 * rmsnorm 200x40000 (10000 groups; need slots + 36, rmsnorm's overhead):
 * s <= 19 store more than 64; s = 20: slots 64, 100 > 96; s = 21, 22: slots
 * 60, 96 > 80; s = 23, 24: 56, 92 > 80; s = 25..28: 52 or 48, >= 84 > 72;
 * s = 29..32: 44..40, >= 76 > 64. Every candidate is rejected: the row is
 * streamed (two chunks are too few for the norms' shared chunks). (s = 23
 * compiled with 48 B of spills before this rule.) */
static void register_budget_on_the_h200(void **state) {
  struct tb_device_limits h200 = tb_device_limits_h200();
  struct tb_plan plan;
  struct tb_error err = {0};
  assert_int_equal(tb_plan_reduction(TB_OP_RMSNORM, 200, 40000, TB_VARIANT_AUTOMATIC, &h200,
                                     "analytic", &plan, &err),
                   TB_OK);
  assert_true(plan.candidates[38].rejected);
  assert_non_null(strstr(plan.candidates[38].rejection, "registers 76 per thread > 64"));
  assert_non_null(strstr(plan.candidates[29].rejection, "registers 92 per thread > 80"));
  assert_non_null(strstr(plan.candidates[26].rejection, "registers 100 per thread > 96"));
  assert_int_equal(plan.rejected_count, 39);
  assert_int_equal(plan.mapping, TB_MAPPING_BLOCK_STREAMING);
  assert_int_equal(tb_register_budget(736, 65536), 80);
  assert_int_equal(tb_register_budget(1024, 65536), 64);
  assert_int_equal(tb_register_budget(32, 65536), 255);
  /* without device limits the same case keeps docs/method.md's pick */
  struct tb_plan unknown = plan_of(TB_OP_RMSNORM, 200, 40000, TB_VARIANT_AUTOMATIC);
  assert_int_equal(unknown.chosen, 38);
}

/* Fixed candidates sSpP, by the same path as reference and candidate.
 * softmax 4096x1024 (256 groups), analytic (16/p), 64 waves:
 * s4p2: width 128, 256 = 2*128 -> slots 8, rounds 40, storage 16,
 *   score 40 + 2*2*4 + 16/2 = 64, kernel 64*64 = 4096, threads 256,
 *   shared 2*4*2*4 = 64 B, 2 barrier sites, 4096/2 = 2048 blocks; off the list.
 * s1p4: the enumeration's index 3, the very facts of candidates[3].
 * s8p1: index 8 + 8 - 2 = 14.
 * s4p32: 4096 threads > 1024, rejected: one block streams each row, as a
 *   rejected reference does. */
static void fixed_candidates(void **state) {
  enum tb_variant v;
  struct tb_error err = {0};
  assert_int_equal(tb_variant_parse("s4p2", &v, &err), TB_OK);
  struct tb_plan plan = plan_of(TB_OP_SOFTMAX, 4096, 1024, v);
  assert_int_equal(plan.mapping, TB_MAPPING_REGISTER_ROWS);
  assert_int_equal(plan.chosen, -1);
  assert_false(plan.fixed.rejected);
  assert_int_equal(plan.selected.subgroups, 4);
  assert_int_equal(plan.selected.packing, 2);
  assert_int_equal(plan.selected.slots, 8);
  assert_int_equal(plan.selected.rounds, 40);
  assert_int_equal(plan.selected.storage, 16);
  assert_double_equal(plan.selected.score, 64.0, 0.0);
  assert_double_equal(plan.selected.kernel_score, 4096.0, 0.0);
  assert_int_equal(plan.selected.threads, 256);
  assert_int_equal(plan.selected.shared_bytes, 64);
  assert_int_equal(plan.selected.barrier_sites, 2);
  assert_int_equal(plan.selected.thread_blocks, 2048);
  assert_int_equal(plan.fixed.subgroups, 4);
  assert_double_equal(plan.fixed.kernel_score, plan.selected.kernel_score, 0.0);
  assert_non_null(strstr(plan.rule, "fixed variant"));
  /* the automatic plan of the same shape is untouched by the fixed path */
  struct tb_plan automatic = plan_of(TB_OP_SOFTMAX, 4096, 1024, TB_VARIANT_AUTOMATIC);
  assert_int_equal(automatic.chosen, automatic.best_register);

  struct tb_plan listed = plan_of(TB_OP_SOFTMAX, 4096, 1024, tb_variant_fixed(1, 4));
  assert_int_equal(listed.chosen, 3);
  assert_double_equal(listed.selected.kernel_score, listed.candidates[3].kernel_score, 0.0);
  assert_int_equal(listed.fixed.index, 3);
  struct tb_plan wide = plan_of(TB_OP_SOFTMAX, 4096, 1024, tb_variant_fixed(8, 1));
  assert_int_equal(wide.chosen, 14);
  assert_int_equal(wide.candidates[14].subgroups, 8);

  /* s1p8 and s2p4 are reference and candidate themselves */
  assert_int_equal(tb_variant_fixed(1, 8), TB_VARIANT_REFERENCE);
  assert_int_equal(tb_variant_fixed(2, 4), TB_VARIANT_CANDIDATE);

  struct tb_plan big = plan_of(TB_OP_SOFTMAX, 4096, 1024, tb_variant_fixed(4, 32));
  assert_true(big.fixed.rejected);
  assert_non_null(strstr(big.fixed.rejection, "threads 4096 > 1024"));
  assert_int_equal(big.mapping, TB_MAPPING_BLOCK_STREAMING);
  assert_int_equal(big.chosen, -1);
  assert_string_equal(big.rule, "fixed variant's candidate rejected; one block streams each row");
  assert_int_equal(big.stream.thread_blocks, 4096);
  /* too much storage: softmax 200x40000 (every candidate rejected), s2p1 */
  struct tb_plan stored = plan_of(TB_OP_SOFTMAX, 200, 40000, tb_variant_fixed(2, 1));
  assert_true(stored.fixed.rejected);
  assert_non_null(strstr(stored.fixed.rejection, "storage"));
  assert_int_equal(stored.mapping, TB_MAPPING_BLOCK_STREAMING);
  struct tb_plan ref = plan_of(TB_OP_SOFTMAX, 200, 40000, TB_VARIANT_REFERENCE);
  assert_memory_equal(&stored.stream, &ref.stream, sizeof ref.stream);
  assert_string_equal(stored.rule, ref.rule);
}

/* Variant names: the three named ones and sSpP with S, P 1..32, no leading zeros. */
static void variant_names(void **state) {
  enum tb_variant v;
  struct tb_error err = {0};
  unsigned s = 0, p = 0;
  const char *named[] = {"reference", "candidate", "automatic"};
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(tb_variant_parse(named[i], &v, &err), TB_OK);
    assert_int_equal(v, (enum tb_variant)i);
    assert_string_equal(tb_variant_name(v), named[i]);
  }
  assert_false(tb_variant_fixed_shape(TB_VARIANT_AUTOMATIC, &s, &p));
  assert_true(tb_variant_fixed_shape(TB_VARIANT_REFERENCE, &s, &p));
  assert_true(s == 1 && p == 8);
  assert_true(tb_variant_fixed_shape(TB_VARIANT_CANDIDATE, &s, &p));
  assert_true(s == 2 && p == 4);
  assert_int_equal(tb_variant_parse("s4p2", &v, &err), TB_OK);
  assert_string_equal(tb_variant_name(v), "s4p2");
  assert_true(tb_variant_fixed_shape(v, &s, &p));
  assert_true(s == 4 && p == 2);
  assert_int_equal(tb_variant_parse("s1p8", &v, &err), TB_OK);
  assert_int_equal(v, TB_VARIANT_REFERENCE);
  assert_int_equal(tb_variant_parse("s2p4", &v, &err), TB_OK);
  assert_int_equal(v, TB_VARIANT_CANDIDATE);
  for (unsigned ss = 1; ss <= TB_VARIANT_FIXED_MAX; ++ss) {
    for (unsigned pp = 1; pp <= TB_VARIANT_FIXED_MAX; ++pp) {
      char text[16];
      snprintf(text, sizeof text, "s%up%u", ss, pp);
      assert_int_equal(tb_variant_parse(text, &v, &err), TB_OK);
      assert_int_equal(v, tb_variant_fixed(ss, pp));
      assert_true(tb_variant_fixed_shape(v, &s, &p));
      assert_true(s == ss && p == pp);
      if (v >= TB_VARIANT_COUNT) {
        assert_string_equal(tb_variant_name(v), text);
      }
    }
  }
  const char *bad[] = {"s0p1",
                       "s1p0",
                       "s4",
                       "x4p2",
                       "s4p2q",
                       "s33p1",
                       "s1p33",
                       "s01p2",
                       "s1p02",
                       "s",
                       "sp",
                       "s4p",
                       "p2",
                       "S4P2",
                       "s-1p2",
                       "s+1p2",
                       " s4p2",
                       "s4p2 ",
                       "",
                       "s4294967297p1",
                       "s1p99999999999999999999999",
                       "s4p2,s1p1",
                       "Reference",
                       "auto"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    tb_error_clear(&err);
    assert_int_equal(tb_variant_parse(bad[i], &v, &err), TB_ERR_USAGE);
    assert_non_null(strstr(err.message, "sSpP"));
  }
  tb_error_clear(&err);
  assert_int_equal(tb_variant_parse("s0p1", &v, &err), TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "1..32"));
}

static void refusals(void **state) {
  struct tb_plan plan;
  struct tb_error err = {0};
  assert_int_equal(
      tb_plan_reduction(TB_OP_ADD, 4, 4, TB_VARIANT_AUTOMATIC, NULL, NULL, &plan, &err),
      TB_ERR_USAGE);
  tb_error_clear(&err);
  assert_int_equal(
      tb_plan_reduction(TB_OP_SUM, 4, 4, TB_VARIANT_AUTOMATIC, NULL, "learned", &plan, &err),
      TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "unknown planner profile"));
}

/* GEMM tile rules, expectations worked out by hand from docs/gemm.md for
 * 132 multiprocessors, on a device with wgmma (the H200) or without. */
static struct tb_gemm_plan gemm_plan_for(size_t m, size_t n, size_t k, enum tb_realization r,
                                         bool warpgroup_mma) {
  struct tb_gemm_plan p;
  struct tb_error err = {0};
  struct tb_gemm_block rule = {0, 0, 0};
  struct tb_gemm_target target = {132, warpgroup_mma, false};
  assert_int_equal(tb_plan_gemm(m, n, k, r, rule, target, TB_GEMM_ALIGNED, &p, &err), TB_OK);
  return p;
}

static struct tb_gemm_plan gemm_plan(size_t m, size_t n, size_t k, enum tb_realization r) {
  return gemm_plan_for(m, n, k, r, true);
}

static void gemm_simt_rule(void **state) {
  /* 4096^2: 32 x 16 = 512 blocks of 128x256 >= 132 */
  struct tb_gemm_plan p = gemm_plan(4096, 4096, 4096, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_m, 128);
  assert_int_equal(p.block_n, 256);
  assert_int_equal(p.block_k, 32);
  assert_int_equal(p.thread_m * 100 + p.thread_n, 816);
  assert_int_equal(p.blocks, 512);
  assert_int_equal(p.waves, 4);
  assert_int_equal(p.shared_bytes, 4 * 3 * (128 * 36 + 32 * 260)); /* 155136 */
  /* 2048 x 2048: 16 x 8 = 128 blocks of 128x256 fill 128 of one wave's 132
   * (97 %); 3072 x 3072: 24 x 12 = 288 fill 288 of three waves' 396 (73 %), so
   * 128x128 (576 blocks >= 132) */
  p = gemm_plan(2048, 2048, 128, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_m * 1000 + p.block_n, 128256);
  p = gemm_plan(3072, 3072, 3072, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_m * 1000 + p.block_n, 128128);
  assert_int_equal(p.shared_bytes, 4 * 3 * (128 * 36 + 32 * 132)); /* 105984 */
  /* 2048 x 1024: 16 x 8 = 128 blocks of 128x128 < 132, 16 x 16 = 256 of 128x64 */
  p = gemm_plan(2048, 1024, 64, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 128642);
  /* 1024^2: 128 blocks of 128x64 < 132, 16 x 16 = 256 of 64x64 */
  p = gemm_plan(1024, 1024, 1024, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 64641);
  /* 127x193: 2 x 4 = 8 blocks of 64x64: the smallest tile, 4 x 7 of 32x32 */
  p = gemm_plan(127, 193, 61, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_m, 32);
  assert_int_equal(p.block_k, 32);
  assert_int_equal(p.blocks, 28);
  assert_int_equal(p.thread_m * p.thread_n, 4);
}

/* Small k (simt k <= 64, tensor k <= 48; docs/gemm.md): no one-block-an-SM
 * tile, the k step padding k least, mma.sync where wgmma would be taken. */
static void gemm_small_k_rule(void **state) {
  /* simt 4096^2: 128x128 (1024 blocks, two an SM), not 128x256, up to k = 64 */
  const size_t ks[][2] = {{8, 8},  {13, 16}, {16, 16}, {17, 8}, {32, 32},
                          {37, 8}, {40, 8},  {48, 16}, {64, 32}};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) {
    struct tb_gemm_plan p = gemm_plan(4096, 4096, ks[i][0], TB_REALIZATION_SIMT);
    assert_int_equal(p.block_m * 1000 + p.block_n, 128128);
    assert_int_equal(p.block_k, ks[i][1]);
    assert_int_equal(p.blocks_per_multiprocessor, 2);
    assert_non_null(strstr(p.rule, "small k"));
  }
  struct tb_gemm_plan p = gemm_plan(4096, 4096, 65, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 130562);
  /* 64x64 tiles take steps of 32 or 16 (64 x 8 floats are not whole float4s a thread) */
  p = gemm_plan(1024, 1024, 8, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 64641);
  p = gemm_plan(1024, 1024, 40, TB_REALIZATION_SIMT);
  assert_int_equal(p.block_k, 16);
  /* tensor: mma.sync 128x128x16 up to k = 48 on a device with wgmma, wgmma from 49 */
  p = gemm_plan(4096, 4096, 13, TB_REALIZATION_TENSOR);
  assert_string_equal(p.instruction, "mma.sync.m16n8k8");
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 129281);
  assert_int_equal(p.launches, 1);
  p = gemm_plan(4096, 4096, 48, TB_REALIZATION_TENSOR);
  assert_string_equal(p.instruction, "mma.sync.m16n8k8");
  p = gemm_plan(4096, 4096, 49, TB_REALIZATION_TENSOR);
  assert_string_equal(p.instruction, "wgmma.m64n256k8");
  p = gemm_plan(127, 193, 13, TB_REALIZATION_TENSOR_3XTF32);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 64641);
  assert_int_equal(p.shared_bytes, 4 * 3 * (64 * 20 + 16 * 72));
}

static struct tb_gemm_plan gemm_plan_aligned(size_t m, size_t n, size_t k, enum tb_realization r,
                                             struct tb_gemm_alignment align) {
  struct tb_gemm_plan p;
  struct tb_error err = {0};
  struct tb_gemm_block rule = {0, 0, 0};
  assert_int_equal(tb_plan_gemm(m, n, k, r, rule, tb_gemm_target_h200(), align, &p, &err), TB_OK);
  return p;
}

/* Small k on mma.sync: 64x64 (four warps) where a 128x128 block would be alone on
 * its SM (3xTF32) or load one float at a time; TF32 with float4 loads keeps 128x128. */
static void gemm_small_k_few_warps(void **state) {
  const struct tb_gemm_alignment a_scalar = {false, true}, b_scalar = {true, false};
  struct tb_gemm_plan p = gemm_plan_aligned(4096, 4096, 13, TB_REALIZATION_TENSOR, a_scalar);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 64641);
  assert_int_equal(p.threads, 128);
  assert_string_equal(p.instruction, "mma.sync.m16n8k8");
  assert_non_null(strstr(p.rule, "64x64 with 3xTF32 or a scalar load"));
  p = gemm_plan_aligned(4096, 4096, 32, TB_REALIZATION_TENSOR, b_scalar);
  assert_int_equal(p.block_m * 1000 + p.block_n, 64064);
  p = gemm_plan_aligned(1999, 2999, 37, TB_REALIZATION_TENSOR, TB_GEMM_UNALIGNED);
  assert_int_equal(p.block_m * 1000 + p.block_n, 64064);
  /* 2999 columns: B's rows are not float4s even where the flag says aligned */
  p = gemm_plan_aligned(1999, 2999, 37, TB_REALIZATION_TENSOR, TB_GEMM_ALIGNED);
  assert_int_equal(p.block_m * 1000 + p.block_n, 64064);
  p = gemm_plan_aligned(4096, 4096, 32, TB_REALIZATION_TENSOR, TB_GEMM_ALIGNED);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 129281);
  assert_int_equal(p.threads, 256);
  /* 3xTF32: 64x64 at k <= 48 whatever the widths, two blocks an SM at 128 threads */
  p = gemm_plan_aligned(4096, 4096, 48, TB_REALIZATION_TENSOR_3XTF32, TB_GEMM_ALIGNED);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 64641);
  assert_int_equal(p.blocks_per_multiprocessor, 2);
  /* past small k, as before: 3xTF32 128x128x32 one block an SM, TF32 wgmma */
  p = gemm_plan_aligned(4096, 4096, 49, TB_REALIZATION_TENSOR_3XTF32, TB_GEMM_UNALIGNED);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 129282);
  assert_int_equal(p.blocks_per_multiprocessor, 1);
  p = gemm_plan_aligned(4096, 4096, 49, TB_REALIZATION_TENSOR, TB_GEMM_UNALIGNED);
  assert_string_equal(p.instruction, "wgmma.m64n256k8");
  /* the same on a device without wgmma; a user's block is taken as given */
  struct tb_error err = {0};
  struct tb_gemm_target ampere = {108, false, false};
  assert_int_equal(tb_plan_gemm(4096, 4096, 13, TB_REALIZATION_TENSOR, (struct tb_gemm_block){0},
                                ampere, a_scalar, &p, &err),
                   TB_OK);
  assert_int_equal(p.block_m * 1000 + p.block_n * 10 + p.block_k / 16, 64641);
  assert_int_equal(tb_plan_gemm(4096, 4096, 13, TB_REALIZATION_TENSOR_3XTF32,
                                (struct tb_gemm_block){128, 128, 16}, tb_gemm_target_h200(),
                                a_scalar, &p, &err),
                   TB_OK);
  assert_int_equal(p.block_m * 1000 + p.block_n, 128128);
  assert_true(p.block_from_user);
}

/* Each operand at its own width: A's rows unaligned (k = 13) leave B's loads
 * and the output's stores 4 floats wide. */
static void gemm_operand_widths(void **state) {
  struct tb_gemm_plan p;
  struct tb_error err = {0};
  struct tb_gemm_block rule = {0, 0, 0};
  const struct tb_gemm_alignment cases[] = {
      {false, true}, {true, false}, {true, true}, {false, false}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    assert_int_equal(tb_plan_gemm(4096, 4096, 13, TB_REALIZATION_SIMT, rule, tb_gemm_target_h200(),
                                  cases[i], &p, &err),
                     TB_OK);
    assert_int_equal(p.a_vector_width, cases[i].a_rows ? 4 : 1);
    assert_int_equal(p.vector_width, cases[i].b_rows ? 4 : 1);
  }
  /* n not a multiple of 4: B's tile rows are not float4s, whatever the flag says */
  assert_int_equal(tb_plan_gemm(64, 6, 64, TB_REALIZATION_TENSOR, rule, tb_gemm_target_h200(),
                                TB_GEMM_ALIGNED, &p, &err),
                   TB_OK);
  assert_int_equal(p.vector_width, 1);
  assert_int_equal(p.a_vector_width, 4);
}

static void gemm_tensor_rule(void **state) {
  /* without wgmma: 32 x 32 = 1024 blocks of 128x128: 8 warps (2 x 4) of 64x32 */
  struct tb_gemm_plan p = gemm_plan_for(4096, 4096, 4096, TB_REALIZATION_TENSOR, false);
  assert_int_equal(p.block_m * p.block_n, 128 * 128);
  assert_int_equal(p.threads, 256);
  assert_int_equal(p.thread_m * 100 + p.thread_n, 6432);
  assert_int_equal(p.shared_bytes, 4 * 3 * (128 * 36 + 32 * 136)); /* 107520 */
  assert_string_equal(p.instruction, "mma.sync.m16n8k8");
  assert_int_equal(p.warpgroups, 0);
  assert_int_equal(p.launches, 1);
  /* with wgmma: 32 x 16 = 512 blocks of 128x256 >= 132: 2 warpgroups of 64x256,
   * 4 stages of (128 + 256) rows x 128 bytes, 1024 bytes of alignment slack, 4
   * mbarriers; the packing launch: (32 + 16) x 128 chunks, all of A and B */
  p = gemm_plan(4096, 4096, 4096, TB_REALIZATION_TENSOR);
  assert_int_equal(p.block_m * 1000 + p.block_n, 128256);
  assert_int_equal(p.warpgroups, 2);
  assert_int_equal(p.thread_m * 1000 + p.thread_n, 64256);
  assert_int_equal(p.blocks, 512);
  assert_int_equal(p.waves, 4);
  assert_int_equal(p.shared_bytes, 4 * 384 * 128 + 1024 + 32); /* 197664 */
  assert_int_equal(p.barrier_sites, 3);
  assert_string_equal(p.instruction, "wgmma.m64n256k8");
  assert_int_equal(p.launches, 2);
  assert_int_equal(p.pack_blocks, 48 * 128);
  assert_int_equal(p.workspace_floats, 2 * 4096 * 4096);
  /* 2048 x 1536: 16 x 6 = 96 blocks of 128x256 < 132, 16 x 12 = 192 of 128x128;
   * k 500 packs 16 tiles, zeros past k */
  p = gemm_plan(2048, 1536, 500, TB_REALIZATION_TENSOR);
  assert_string_equal(p.instruction, "wgmma.m64n128k8");
  assert_int_equal(p.stages, 3); /* two blocks an SM */
  assert_int_equal(p.blocks_per_multiprocessor, 2);
  assert_int_equal(p.shared_bytes, 3 * 256 * 128 + 1024 + 24);
  assert_int_equal(p.workspace_floats, (2048 + 1536) * 512);
  /* rows on 16 bytes (tensor maps): 1024^3 has 8 x 8 = 64 blocks of 128x128, under
   * one a multiprocessor: the single-launch wgmma kernel's 128x128 whatever the grid,
   * one block an SM, down to 128x128x1024's one block; on a device without tensor
   * maps (the packing launch) 1024^3 keeps mma.sync 64x64 */
  p = gemm_plan_aligned(1024, 1024, 1024, TB_REALIZATION_TENSOR, TB_GEMM_ALIGNED);
  assert_true(p.tensor_maps);
  assert_int_equal(p.block_m * 1000 + p.block_n, 128128);
  assert_string_equal(p.instruction, "wgmma.m64n128k8");
  assert_non_null(strstr(p.rule, "whatever the grid"));
  /* under a wave, k split, two chunks only of at least 64 k tiles: 1024^3's 64 tiles
   * would take 132 / 64 = 2 chunks of 16 k tiles, so k stays whole, one launch */
  assert_int_equal(p.k_splits * 10000 + p.k_chunk, 11024);
  assert_int_equal(p.blocks * 10 + p.launches, 641);
  assert_int_equal(p.workspace_floats, 0);
  /* 1024x1024x4096: 2 chunks of 64 k tiles (2048), 128 blocks, the partials
   * (2 x 1024^2 floats) added by 4096 blocks of 256 */
  p = gemm_plan_aligned(1024, 1024, 4096, TB_REALIZATION_TENSOR, TB_GEMM_ALIGNED);
  assert_int_equal(p.k_splits * 10000 + p.k_chunk, 22048);
  assert_int_equal(p.blocks * 10 + p.launches, 1282);
  assert_int_equal(p.workspace_floats, 2 * 1024 * 1024);
  assert_int_equal(p.combine_blocks, 4096);
  /* 128x128x1024: one tile, 32 k tiles: at most 32 / 4 = 8 chunks of 4 (128) */
  p = gemm_plan_aligned(128, 128, 1024, TB_REALIZATION_TENSOR, TB_GEMM_ALIGNED);
  assert_string_equal(p.instruction, "wgmma.m64n128k8");
  assert_int_equal(p.k_splits * 1000 + p.k_chunk, 8128);
  assert_int_equal(p.blocks, 8);
  /* 640x640x1024: 25 tiles, 132 / 25 = 5 chunks of ceil(32 / 5) = 7 tiles, the
   * last of 4; 2048x1024x512 (128 tiles) and 128x128x96 (3 k tiles) keep k whole */
  p = gemm_plan_aligned(640, 640, 1024, TB_REALIZATION_TENSOR, TB_GEMM_ALIGNED);
  assert_int_equal(p.k_splits * 1000 + p.k_chunk, 5224);
  assert_int_equal(p.blocks, 125);
  p = gemm_plan_aligned(2048, 1024, 512, TB_REALIZATION_TENSOR, TB_GEMM_ALIGNED);
  assert_int_equal(p.k_splits * 10 + p.launches, 11);
  p = gemm_plan_aligned(128, 128, 96, TB_REALIZATION_TENSOR, TB_GEMM_ALIGNED);
  assert_int_equal(p.k_splits * 100 + p.k_chunk, 196);
  p = gemm_plan(1024, 1024, 1024, TB_REALIZATION_TENSOR);
  assert_string_equal(p.instruction, "mma.sync.m16n8k8");
  /* the 3xTF32 split stays on mma.sync */
  p = gemm_plan(4096, 4096, 4096, TB_REALIZATION_TENSOR_3XTF32);
  assert_string_equal(p.instruction, "mma.sync.m16n8k8");
  /* 1 x 2 blocks of 128x128 < 132: 64x64, 4 warps (2 x 2) of 32x32 */
  p = gemm_plan(127, 193, 61, TB_REALIZATION_TENSOR_3XTF32);
  assert_int_equal(p.block_m * p.block_n, 64 * 64);
  assert_int_equal(p.threads, 128);
  assert_int_equal(p.blocks, 2 * 4);
  assert_int_equal(p.shared_bytes, 4 * 3 * (64 * 36 + 32 * 72));
}

/* Matrix-vector plans (docs/gemm.md): m = 1 or n = 1 under simt and
 * tensor-3xtf32 with the rule; `aligned` as the plan step gives it. */
static struct tb_gemm_plan gemv_plan(size_t m, size_t n, size_t k, enum tb_realization r,
                                     bool aligned) {
  struct tb_gemm_plan p;
  struct tb_error err = {0};
  struct tb_gemm_block rule = {0, 0, 0};
  assert_int_equal(tb_plan_gemm(m, n, k, r, rule, tb_gemm_target_h200(),
                                aligned ? TB_GEMM_ALIGNED : TB_GEMM_UNALIGNED, &p, &err),
                   TB_OK);
  return p;
}

static void gemv_columns_rule(void **state) {
  /* 1x4096x4096, aligned: a thread per 4 columns, 256 threads: 1024 columns
   * a block, 4096 / 1024 = 4 blocks < 132, so k is split: wanted 4 x 132 /
   * 4 = 132 chunks, 4096 / 132 = 31.03 -> 32 rows (a multiple of 4, >= 16),
   * 4096 / 32 = 128 chunks; 4 x 128 = 512 blocks, 512 / 132 -> 4 waves;
   * partials 128 x 4096 = 524288 floats, combined by 4096 / 256 = 16 blocks */
  struct tb_gemm_plan p = gemv_plan(1, 4096, 4096, TB_REALIZATION_SIMT, true);
  assert_int_equal(p.gemv, TB_GEMV_COLUMNS);
  assert_string_equal(p.instruction, "fma");
  assert_int_equal(p.threads, 256);
  assert_int_equal(p.vector_width, 4);
  assert_int_equal(p.block_m * 10000 + p.block_n, 11024);
  assert_int_equal(p.thread_m * 10 + p.thread_n, 14);
  assert_int_equal(p.grid_m * 10 + p.grid_n, 14);
  assert_int_equal(p.k_chunk, 32);
  assert_int_equal(p.block_k, 32);
  assert_int_equal(p.k_splits, 128);
  assert_int_equal(p.blocks, 512);
  assert_int_equal(p.waves, 4);
  assert_int_equal(p.launches, 2);
  assert_int_equal(p.workspace_floats, 524288);
  assert_int_equal(p.combine_blocks, 16);
  assert_int_equal(p.stages + p.shared_bytes + p.barrier_sites, 0);
  assert_int_equal(p.blocks_per_multiprocessor, 4);
  assert_int_equal(p.pack_blocks + p.warpgroups, 0);
  assert_false(p.block_from_user);
  /* the strided view (not aligned): 1 column a thread, 256 a block, 16
   * blocks: wanted 528 / 16 = 33 chunks, 4096 / 33 = 124.1 -> 125 -> 128
   * rows, 32 chunks, 512 blocks */
  p = gemv_plan(1, 4096, 4096, TB_REALIZATION_TENSOR_3XTF32, false);
  assert_int_equal(p.gemv, TB_GEMV_COLUMNS);
  assert_int_equal(p.vector_width, 1);
  assert_int_equal(p.block_n, 256);
  assert_int_equal(p.grid_n, 16);
  assert_int_equal(p.k_chunk * 1000 + p.k_splits, 128032);
  assert_int_equal(p.blocks, 512);
  /* 1x300x257 (k % 4 != 0: not aligned): 2 blocks of 256 columns; wanted
   * 528 / 2 = 264 chunks, 257 / 264 -> 1 -> 4 rows, below the 16 of 4
   * granules: 16 rows, 257 / 16 = 16.06 -> 17 chunks (the last 1 row), 34
   * blocks; partials 17 x 300 = 5100 floats, 300 / 256 -> 2 combine blocks */
  p = gemv_plan(1, 300, 257, TB_REALIZATION_SIMT, false);
  assert_int_equal(p.k_chunk * 1000 + p.k_splits, 16017);
  assert_int_equal(p.blocks, 34);
  assert_int_equal(p.workspace_floats, 5100);
  assert_int_equal(p.combine_blocks, 2);
  /* 1 x 40000 x 8, aligned: 40 blocks of 1024 columns; wanted 528 / 40 = 14
   * chunks, 8 / 14 -> 1 -> 4, at least 16 rows >= k 8: no split, one launch
   * of 40 blocks, no workspace, k_chunk the whole k */
  p = gemv_plan(1, 40000, 8, TB_REALIZATION_SIMT, true);
  assert_int_equal(p.k_chunk * 1000 + p.k_splits, 8001);
  assert_int_equal(p.launches, 1);
  assert_int_equal(p.workspace_floats + p.combine_blocks, 0);
  /* 1 x 140000 x 64, not aligned: 547 blocks of 256 columns >= 132: no split */
  p = gemv_plan(1, 140000, 64, TB_REALIZATION_SIMT, false);
  assert_int_equal(p.blocks, 547);
  assert_int_equal(p.k_splits, 1);
}

static void gemv_rows_rule(void **state) {
  /* 4096x1x4096, aligned (B one contiguous column): a warp per row, 8 a
   * block: 512 blocks >= 132: no split, one launch, 512 / 132 -> 4 waves */
  struct tb_gemm_plan p = gemv_plan(4096, 1, 4096, TB_REALIZATION_SIMT, true);
  assert_int_equal(p.gemv, TB_GEMV_ROWS);
  assert_int_equal(p.vector_width, 4);
  assert_int_equal(p.block_m * 10 + p.block_n, 81);
  assert_int_equal(p.warps_m * 10 + p.warps_n, 81);
  assert_int_equal(p.thread_m + p.thread_n, 0);
  assert_int_equal(p.grid_m * 10 + p.grid_n, 5121);
  assert_int_equal(p.k_chunk * 10 + p.k_splits, 40961);
  assert_int_equal(p.blocks, 512);
  assert_int_equal(p.waves, 4);
  assert_int_equal(p.launches, 1);
  assert_int_equal(p.workspace_floats, 0);
  /* 257x1x300, not aligned: 33 blocks < 132; wanted 528 / 33 = 16 chunks,
   * 300 / 16 -> 19 -> 32 (a granule is 32 x 1 values), below 4 granules:
   * 128, 300 / 128 -> 3 chunks, 99 blocks; partials 3 x 257 = 771 floats,
   * 257 / 256 -> 2 combine blocks */
  p = gemv_plan(257, 1, 300, TB_REALIZATION_TENSOR_3XTF32, false);
  assert_int_equal(p.gemv, TB_GEMV_ROWS);
  assert_int_equal(p.k_chunk * 10 + p.k_splits, 1283);
  assert_int_equal(p.blocks, 99);
  assert_int_equal(p.workspace_floats, 771);
  assert_int_equal(p.combine_blocks, 2);
  /* the same aligned: a granule 32 x 4 = 128, at least 512 >= 300: no split */
  p = gemv_plan(257, 1, 300, TB_REALIZATION_SIMT, true);
  assert_int_equal(p.k_splits, 1);
  assert_int_equal(p.blocks, 33);
  /* 1x1x4096 (both m and n 1: rows), aligned: 1 block; wanted 528 chunks,
   * 4096 / 528 -> 8 -> 128, at least 512: 8 chunks, 8 blocks, 8 partials, 1
   * combine block */
  p = gemv_plan(1, 1, 4096, TB_REALIZATION_SIMT, true);
  assert_int_equal(p.gemv, TB_GEMV_ROWS);
  assert_int_equal(p.k_chunk * 10 + p.k_splits, 5128);
  assert_int_equal(p.workspace_floats * 10 + p.combine_blocks, 81);
  /* 1x1x64: 512 >= 64, one chunk, one block of one launch */
  p = gemv_plan(1, 1, 64, TB_REALIZATION_SIMT, true);
  assert_int_equal(p.k_chunk * 10 + p.k_splits, 641);
  assert_int_equal(p.blocks * 10 + p.launches, 11);
}

/* `tensor` (TF32 allowed, not required) takes the matrix-vector plans too,
 * the same as simt's; what keeps the tiled kernels: a user block and shapes
 * with neither m nor n 1; a tiled n = 1 never loads B as float4s whatever
 * `aligned` says (a row of B is 1 float). */
static void gemv_not_taken(void **state) {
  struct tb_gemm_plan p = gemv_plan(1, 4096, 4096, TB_REALIZATION_TENSOR, true);
  struct tb_gemm_plan simt = gemv_plan(1, 4096, 4096, TB_REALIZATION_SIMT, true);
  assert_int_equal(p.gemv, TB_GEMV_COLUMNS);
  assert_string_equal(p.instruction, "fma");
  simt.realization = TB_REALIZATION_TENSOR;
  assert_memory_equal(&p, &simt, sizeof p);
  p = gemv_plan(4096, 1, 4096, TB_REALIZATION_TENSOR, true);
  assert_int_equal(p.gemv, TB_GEMV_ROWS);
  p = gemv_plan(2, 4096, 4096, TB_REALIZATION_SIMT, true);
  assert_int_equal(p.gemv, TB_GEMV_NONE);
  struct tb_error err = {0};
  struct tb_gemm_block user = {64, 64, 16};
  assert_int_equal(tb_plan_gemm(1, 4096, 4096, TB_REALIZATION_SIMT, user, tb_gemm_target_h200(),
                                TB_GEMM_ALIGNED, &p, &err),
                   TB_OK);
  assert_int_equal(p.gemv, TB_GEMV_NONE);
  assert_true(p.block_from_user);
  assert_int_equal(tb_plan_gemm(64, 1, 64, TB_REALIZATION_SIMT, user, tb_gemm_target_h200(),
                                TB_GEMM_ALIGNED, &p, &err),
                   TB_OK);
  assert_int_equal(p.vector_width, 1);
  assert_int_equal(tb_plan_gemm(64, 1, 64, TB_REALIZATION_TENSOR, user, tb_gemm_target_h200(),
                                TB_GEMM_ALIGNED, &p, &err),
                   TB_OK);
  assert_int_equal(p.gemv, TB_GEMV_NONE);
  assert_int_equal(p.vector_width, 1);
  assert_string_equal(tb_gemv_kind_name(TB_GEMV_ROWS), "rows");
  assert_string_equal(tb_gemv_kind_name(TB_GEMV_COLUMNS), "columns");
  assert_null(tb_gemv_kind_name(TB_GEMV_NONE));
}

static void gemm_refusals(void **state) {
  struct tb_gemm_plan p;
  struct tb_error err = {0};
  struct tb_gemm_block wrong = {96, 128, 32};
  assert_int_equal(tb_plan_gemm(64, 64, 64, TB_REALIZATION_TENSOR, wrong, tb_gemm_target_h200(),
                                TB_GEMM_ALIGNED, &p, &err),
                   TB_ERR_USAGE);
  assert_non_null(strstr(err.message, "--gemm-block for tensor"));
  /* wgmma's 128x256 tile: the H200 takes it, a device without wgmma and the
   * 3xTF32 split (mma.sync) refuse it */
  struct tb_gemm_block wide = {128, 256, 32};
  struct tb_gemm_target ampere = {108, false, false};
  assert_int_equal(tb_plan_gemm(64, 64, 64, TB_REALIZATION_TENSOR, wide, tb_gemm_target_h200(),
                                TB_GEMM_ALIGNED, &p, &err),
                   TB_OK);
  assert_string_equal(p.instruction, "wgmma.m64n256k8");
  assert_int_equal(
      tb_plan_gemm(64, 64, 64, TB_REALIZATION_TENSOR, wide, ampere, TB_GEMM_ALIGNED, &p, &err),
      TB_ERR_USAGE);
  assert_int_equal(tb_plan_gemm(64, 64, 64, TB_REALIZATION_TENSOR_3XTF32, wide,
                                tb_gemm_target_h200(), TB_GEMM_ALIGNED, &p, &err),
                   TB_ERR_USAGE);
  struct tb_gemm_block text;
  assert_int_equal(tb_gemm_block_parse("128,64", &text, &err), TB_ERR_USAGE);
  assert_int_equal(tb_gemm_block_parse("128,64,16x", &text, &err), TB_ERR_USAGE);
  assert_int_equal(tb_gemm_block_parse("0,64,16", &text, &err), TB_ERR_USAGE);
  assert_int_equal(tb_gemm_block_parse("128,64,16", &text, &err), TB_OK);
  enum tb_realization r;
  assert_int_equal(tb_realization_parse("tf32", &r, &err), TB_ERR_USAGE);
  assert_int_equal(tb_realization_parse("tensor-3xtf32", &r, &err), TB_OK);
  assert_int_equal(r, TB_REALIZATION_TENSOR_3XTF32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(slots_formula_matches_dealing),
      cmocka_unit_test(enumeration_order),
      cmocka_unit_test(softmax_129x3000),
      cmocka_unit_test(rmsnorm_n_not_multiple_of_4),
      cmocka_unit_test(sum_1x1),
      cmocka_unit_test(layernorm_n_below_4),
      cmocka_unit_test(subwarp_rows_rule),
      cmocka_unit_test(subwarp_rows_bounds),
      cmocka_unit_test(tie_goes_to_the_first),
      cmocka_unit_test(whole_groups_first),
      cmocka_unit_test(fed_threads),
      cmocka_unit_test(preferences_that_hold_nowhere),
      cmocka_unit_test(long_rows_every_candidate_rejected),
      cmocka_unit_test(few_long_rows_split),
      cmocka_unit_test(few_long_rows_clusters),
      cmocka_unit_test(long_rows_shared_chunks),
      cmocka_unit_test(few_very_long_rows_persistent),
      cmocka_unit_test(fixed_variants),
      cmocka_unit_test(fixed_candidates),
      cmocka_unit_test(variant_names),
      cmocka_unit_test(device_limits_reject),
      cmocka_unit_test(register_budget_on_the_h200),
      cmocka_unit_test(refusals),
      cmocka_unit_test(gemm_simt_rule),
      cmocka_unit_test(gemm_small_k_rule),
      cmocka_unit_test(gemm_small_k_few_warps),
      cmocka_unit_test(gemm_operand_widths),
      cmocka_unit_test(gemm_tensor_rule),
      cmocka_unit_test(gemm_refusals),
      cmocka_unit_test(gemv_columns_rule),
      cmocka_unit_test(gemv_rows_rule),
      cmocka_unit_test(gemv_not_taken),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
