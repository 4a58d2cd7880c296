#include "results/plan_json.h"

#include "cases/ops.h"
#include "results/json_number.h"

static json_t *candidate_json(const struct tb_candidate *c) {
  json_t *j = json_pack(
      "{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:I, s:o, s:i, s:i, s:o, s:i, s:I}",
      "index", c->index, "subgroups", c->subgroups, "packing", c->packing, "width", c->width,
      "threads", c->threads, "slots", c->slots, "reductions", c->reductions, "rounds", c->rounds,
      "storage", c->storage, "score", tb_json_number(c->score), "waves", (json_int_t)c->waves,
      "kernel_score", tb_json_number(c->kernel_score), "shared_bytes", c->shared_bytes,
      "barrier_sites", c->barrier_sites, "lane_utilisation", tb_json_number(c->lane_utilisation),
      "independent_subgroups", c->independent_subgroups, "thread_blocks",
      (json_int_t)c->thread_blocks);
  json_object_set_new(j, "payload_bytes",
                      json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "program_global_read",
                                (json_int_t)c->program_global_read, "program_global_write",
                                (json_int_t)c->program_global_write, "program_private_read",
                                (json_int_t)c->program_private_read, "program_private_write",
                                (json_int_t)c->program_private_write, "worker_private_read",
                                (json_int_t)c->worker_private_read, "worker_private_write",
                                (json_int_t)c->worker_private_write));
  json_object_set_new(j, "whole_groups", json_boolean(c->whole_groups));
  json_object_set_new(j, "thread_read_bytes", json_integer((json_int_t)c->thread_read_bytes));
  json_object_set_new(j, "grid_threads", json_integer((json_int_t)c->grid_threads));
  json_object_set_new(j, "rejected", json_boolean(c->rejected));
  json_object_set_new(j, "rejection", c->rejected ? json_string(c->rejection) : json_null());
  return j;
}

static json_t *stream_json(const struct tb_plan *plan) {
  if (plan->mapping == TB_MAPPING_REGISTER_ROWS || plan->mapping == TB_MAPPING_SUBWARP_ROWS) {
    return json_null();
  }
  const struct tb_stream_facts *f = &plan->stream;
  return json_pack("{s:i, s:i, s:I, s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "threads_per_block",
                   f->threads_per_block, "blocks_per_row", f->blocks_per_row, "chunk_elements",
                   (json_int_t)f->chunk_elements, "thread_blocks", (json_int_t)f->thread_blocks,
                   "memory_passes", f->memory_passes, "launches", f->launches, "shared_bytes",
                   f->shared_bytes, "barrier_sites", f->barrier_sites, "cluster_blocks",
                   f->cluster_blocks, "cache_shared_bytes", f->cache_shared_bytes, "row_groups",
                   f->row_groups);
}

static json_t *subwarp_json(const struct tb_plan *plan) {
  if (plan->mapping != TB_MAPPING_SUBWARP_ROWS) {
    return json_null();
  }
  const struct tb_subwarp_facts *f = &plan->subwarp;
  json_t *j = json_pack("{s:i, s:i, s:i, s:i, s:i, s:I, s:i, s:i, s:i, s:i}", "lanes", f->lanes,
                        "slots", f->slots, "rows_per_warp", f->rows_per_warp, "threads_per_block",
                        f->threads_per_block, "rows_per_block", f->rows_per_block, "thread_blocks",
                        (json_int_t)f->thread_blocks, "reductions", f->reductions, "shuffle_levels",
                        f->shuffle_levels, "shared_bytes", f->shared_bytes, "barrier_sites",
                        f->barrier_sites);
  json_object_set_new(j, "lane_utilisation", tb_json_number(f->lane_utilisation));
  return j;
}

/* One more of the plan's `constants` (the rules' facts the audit re-derives by). */
static void set_constant(json_t *plan, const char *key, json_t *value) {
  json_object_set_new(json_object_get(plan, "constants"), key, value);
}

static json_t *reduction_plan_json(const struct tb_plan *plan) {
  json_t *candidates = json_array();
  for (unsigned i = 0; i < plan->candidate_count; ++i) {
    json_array_append_new(candidates, candidate_json(&plan->candidates[i]));
  }
  const struct tb_device_limits *d = &plan->limits;
  struct tb_payload pay = tb_payload_for(plan->op);
  json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:s}", "kind", "row_reduction", "op",
                        tb_op_info(plan->op)->name, "m", (json_int_t)plan->m, "n",
                        (json_int_t)plan->n, "variant", tb_variant_name(plan->variant), "profile",
                        plan->profile, "cost_basis", plan->cost_basis);
  json_object_set_new(
      j, "device_limits",
      json_pack("{s:b, s:i, s:i, s:i, s:i, s:i, s:s, s:i}", "known", d->known,
                "max_threads_per_block", d->max_threads_per_block, "max_shared_bytes_per_block",
                d->max_shared_bytes_per_block, "max_registers_per_block",
                d->max_registers_per_block, "cluster_blocks", d->cluster_blocks, "multiprocessors",
                d->multiprocessors, "source", d->source, "shared_bytes_per_multiprocessor",
                d->shared_bytes_per_multiprocessor));
  json_object_set_new(
      j, "constants",
      json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "register_overhead",
                tb_register_overhead(plan->op), "max_threads", TB_PLANNER_MAX_THREADS,
                "max_storage", TB_PLANNER_MAX_STORAGE, "rows_per_wave", TB_PLANNER_ROWS_PER_WAVE,
                "split_min_row", TB_SPLIT_MIN_ROW, "split_min_chunk", TB_SPLIT_MIN_CHUNK,
                "stream_threads", TB_STREAM_THREADS, "split_threads", TB_SPLIT_THREADS,
                "cluster_min_fill", TB_CLUSTER_MIN_FILL, "block_weight", plan->block_weight));
  set_constant(j, "subwarp_max_row", json_integer(TB_SUBWARP_MAX_ROW));
  set_constant(j, "subwarp_slots", json_integer(TB_SUBWARP_SLOTS));
  set_constant(j, "subwarp_threads", json_integer(TB_SUBWARP_THREADS));
  set_constant(j, "whole_groups_first", json_boolean(plan->whole_groups_first));
  set_constant(j, "min_thread_read", json_integer(plan->min_thread_read));
  set_constant(j, "sm_threads", json_integer(TB_PLANNER_SM_THREADS));
  set_constant(j, "cluster_shared_bytes", json_integer(TB_CLUSTER_SHARED_BYTES));
  set_constant(j, "cluster_shared_with_weight", json_boolean(TB_CLUSTER_SHARED_WITH_WEIGHT));
  set_constant(j, "cluster_shared_weight_min_blocks",
               json_integer(TB_CLUSTER_SHARED_WEIGHT_MIN_BLOCKS));
  set_constant(j, "split_last_block_merges", json_boolean(TB_SPLIT_LAST_BLOCK_MERGES));
  set_constant(j, "persistent_blocks_per_sm", json_integer(TB_PERSISTENT_BLOCKS_PER_SM));
  set_constant(j, "persistent_shared_bytes", json_integer(TB_PERSISTENT_SHARED_BYTES));
  set_constant(j, "persistent_param_bytes", json_integer((json_int_t)TB_PERSISTENT_PARAM_BYTES));
  json_object_set_new(j, "payload_per_element",
                      json_pack("{s:i, s:i, s:i, s:i}", "global_read", pay.global_read,
                                "global_write", pay.global_write, "private_write",
                                pay.private_write, "private_read", pay.private_read));
  json_object_set_new(j, "candidates", candidates);
  json_object_set_new(j, "candidates_considered", json_integer(plan->candidate_count));
  json_object_set_new(j, "candidates_rejected", json_integer(plan->rejected_count));
  json_object_set_new(j, "best_register_candidate",
                      plan->best_register >= 0 ? json_integer(plan->best_register) : json_null());
  json_object_set_new(j, "mapping", json_string(tb_mapping_name(plan->mapping)));
  json_object_set_new(j, "chosen_candidate",
                      plan->chosen >= 0 ? json_integer(plan->chosen) : json_null());
  json_object_set_new(j, "selected",
                      plan->mapping == TB_MAPPING_REGISTER_ROWS ? candidate_json(&plan->selected)
                                                                : json_null());
  json_object_set_new(j, "fixed_variant",
                      plan->variant != TB_VARIANT_AUTOMATIC ? candidate_json(&plan->fixed)
                                                            : json_null());
  json_object_set_new(j, "rule", json_string(plan->rule));
  json_object_set_new(j, "stream", stream_json(plan));
  json_object_set_new(j, "subwarp", subwarp_json(plan));
  return j;
}

static json_t *elementwise_plan_json(const struct tb_elementwise_plan *plan) {
  json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:s, s:i, s:i, s:I, s:I, s:s}", "kind", "elementwise",
                        "op", tb_op_info(plan->op)->name, "m", (json_int_t)plan->m, "n",
                        (json_int_t)plan->n, "profile", "fixed", "elements_per_thread",
                        plan->elements_per_thread, "threads_per_block", plan->threads_per_block,
                        "threads_per_row", (json_int_t)plan->threads_per_row, "thread_blocks",
                        (json_int_t)plan->thread_blocks, "rule", plan->rule);
  json_object_set_new(j, "flat", json_boolean(plan->flat));
  json_object_set_new(j, "scalar_max_elements", json_integer(TB_ELEMENTWISE_SCALAR_MAX));
  return j;
}

static json_t *gemm_plan_json(const struct tb_gemm_plan *p) {
  json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "kind", "gemm", "op", "gemm",
                        "profile", p->block_from_user ? "user-block" : "rule", "realization",
                        tb_realization_name(p->realization), "m", (json_int_t)p->m, "n",
                        (json_int_t)p->n, "k", (json_int_t)p->k);
  json_object_set_new(j, "tile",
                      json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "block_m", p->block_m,
                                "block_n", p->block_n, "block_k", p->block_k, "thread_m",
                                p->thread_m, "thread_n", p->thread_n, "warps_m", p->warps_m,
                                "warps_n", p->warps_n));
  json_object_set_new(j, "threads", json_integer(p->threads));
  json_object_set_new(j, "stages", json_integer(p->stages));
  json_object_set_new(j, "vector_width", json_integer(p->vector_width));
  if (p->gemv == TB_GEMV_NONE) { /* a tiled kernel loads A at its own width */
    json_object_set_new(j, "a_vector_width", json_integer(p->a_vector_width));
  }
  json_object_set_new(j, "grid_m", json_integer((json_int_t)p->grid_m));
  json_object_set_new(j, "grid_n", json_integer((json_int_t)p->grid_n));
  json_object_set_new(j, "thread_blocks", json_integer((json_int_t)p->blocks));
  json_object_set_new(j, "shared_bytes", json_integer(p->shared_bytes));
  json_object_set_new(j, "multiprocessors", json_integer(p->multiprocessors));
  json_object_set_new(j, "waves", json_integer((json_int_t)p->waves));
  json_object_set_new(j, "instruction", json_string(p->instruction));
  json_object_set_new(j, "warpgroups", json_integer(p->warpgroups));
  json_object_set_new(j, "tensor_maps", json_boolean(p->tensor_maps));
  json_object_set_new(j, "launches", json_integer(p->launches));
  json_object_set_new(j, "blocks_per_multiprocessor", json_integer(p->blocks_per_multiprocessor));
  json_object_set_new(j, "pack_blocks", json_integer((json_int_t)p->pack_blocks));
  json_object_set_new(j, "workspace_floats", json_integer((json_int_t)p->workspace_floats));
  json_object_set_new(j, "barrier_sites", json_integer(p->barrier_sites));
  const char *gemv = tb_gemv_kind_name(p->gemv);
  json_object_set_new(j, "gemv", gemv != NULL ? json_string(gemv) : json_null());
  /* the realizations the matrix-vector rule takes: every one since `tensor` joined (the
   * audit tells the rule's generations apart by it) */
  json_t *gemv_realizations = json_array();
  for (int r = 0; r < TB_REALIZATION_COUNT; ++r) {
    json_array_append_new(gemv_realizations,
                          json_string(tb_realization_name((enum tb_realization)r)));
  }
  json_object_set_new(j, "gemv_realizations", gemv_realizations);
  json_object_set_new(j, "k_splits", json_integer((json_int_t)p->k_splits));
  json_object_set_new(j, "k_chunk", json_integer((json_int_t)p->k_chunk));
  json_object_set_new(j, "combine_blocks", json_integer((json_int_t)p->combine_blocks));
  json_object_set_new(j, "rule", json_string(p->rule));
  return j;
}

json_t *tb_exec_plan_to_json(const struct tb_exec_plan *plan) {
  switch (plan->kind) {
  case TB_PLAN_REDUCTION: return reduction_plan_json(&plan->as.reduction);
  case TB_PLAN_ELEMENTWISE: return elementwise_plan_json(&plan->as.elementwise);
  case TB_PLAN_GEMM: return gemm_plan_json(&plan->as.gemm);
  case TB_PLAN_NONE: break;
  }
  return NULL;
}
