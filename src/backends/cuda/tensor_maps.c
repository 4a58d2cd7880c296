#include "backends/cuda/tensor_maps.h"

#include <stdlib.h>
#include <string.h>

static enum tb_status encode_one(const struct tb_cuda *cu, const struct tb_tensor_map_spec *spec,
                                 CUdeviceptr base, CUtensorMap *map, struct tb_error *err) {
  const cuuint64_t dims[2] = {spec->inner, spec->rows};
  const cuuint64_t strides[1] = {spec->row_stride * sizeof(float)}; /* bytes, row to row */
  const cuuint32_t box[2] = {spec->box_inner, spec->box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  CUresult rc = cu->cuTensorMapEncodeTiled(
      map, spec->tf32 ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
      (void *)(uintptr_t)base, dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      spec->swizzle_128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return rc == CUDA_SUCCESS
             ? TB_OK
             : tb_cuda_fail(
                   err, spec->of_y ? "cuTensorMapEncodeTiled (B)" : "cuTensorMapEncodeTiled (A)",
                   rc);
}

enum tb_status tb_tensor_maps_encode(const struct tb_cuda_device *d, const struct tb_generated *g,
                                     struct tb_tensor_maps *out, struct tb_error *err) {
  tb_tensor_maps_free(out);
  if (g->tensor_map_count == 0) {
    return TB_OK;
  }
  if (d->cu->cuTensorMapEncodeTiled == NULL) {
    return tb_fail(err, TB_ERR_UNAVAILABLE,
                   "the kernels take TMA tensor maps and this driver lacks cuTensorMapEncodeTiled");
  }
  unsigned sets = d->buffers.count;
  out->maps = calloc((size_t)sets * g->tensor_map_count, sizeof *out->maps);
  if (out->maps == NULL) {
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory for %u sets of tensor maps", sets);
  }
  out->sets = sets;
  out->per_set = g->tensor_map_count;
  for (unsigned set = 0; set < sets; ++set) {
    struct tb_case_operands o = tb_cuda_device_operands(d, set);
    for (unsigned i = 0; i < g->tensor_map_count; ++i) {
      const struct tb_tensor_map_spec *spec = &g->tensor_maps[i];
      if (encode_one(d->cu, spec, spec->of_y ? o.y : o.x, &out->maps[set * out->per_set + i],
                     err) != TB_OK) {
        tb_tensor_maps_free(out);
        return err->status;
      }
    }
  }
  return TB_OK;
}

CUtensorMap *tb_tensor_maps_of_set(const struct tb_tensor_maps *m, unsigned set) {
  return m->maps == NULL ? NULL : &m->maps[(size_t)set * m->per_set];
}

void tb_tensor_maps_free(struct tb_tensor_maps *m) {
  free(m->maps);
  memset(m, 0, sizeof *m);
}
