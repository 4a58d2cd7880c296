/* The TMA tensor maps a native case's kernels take (codegen's
 * tb_tensor_map_spec), encoded once per buffer set when the case is
 * prepared: a map holds its operand's address, and the calls rotate over
 * the sets. */
#ifndef TB_BACKENDS_CUDA_TENSOR_MAPS_H
#define TB_BACKENDS_CUDA_TENSOR_MAPS_H

#include "backends/cuda/cuda_device.h"
#include "codegen/codegen.h"

struct tb_tensor_maps {
  CUtensorMap *maps; /* per_set maps of set 0, then set 1's, ... */
  unsigned sets, per_set;
};

/* Encodes g's maps for every buffer set of d's loaded case (none when g has
 * none); TB_ERR_UNAVAILABLE when the driver cannot encode them, TB_ERR_RUN
 * when it refuses one (its message names the operand). */
enum tb_status tb_tensor_maps_encode(const struct tb_cuda_device *d, const struct tb_generated *g,
                                     struct tb_tensor_maps *out, struct tb_error *err);

/* Set `set`'s first map (NULL when there are none). */
CUtensorMap *tb_tensor_maps_of_set(const struct tb_tensor_maps *m, unsigned set);

void tb_tensor_maps_free(struct tb_tensor_maps *m);

#endif
