#include "backends/cuda/cublas_provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cublas.h"
#include "backends/cuda/cuda_device.h"

/* cuBLAS's own workspace (its default on Hopper is 32 MiB). */
#define CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20)

struct cublas_state {
  struct tb_cuda_device dev; /* first: the shared device ops take the state as one */
  struct tb_cublas *blas;
  CUdeviceptr workspace;
  int status; /* cublasStatus_t of the last call */
};

/* cuBLAS chooses its own kernels: nothing to plan. */
static enum tb_status cublas_plan(const struct tb_provider *p, const struct tb_case *c,
                                  struct tb_exec_plan *plan, struct tb_error *err) {
  memset(plan, 0, sizeof *plan);
  plan->kind = TB_PLAN_NONE;
  return TB_OK;
}

static enum tb_status cublas_prepare(struct tb_provider *p, const struct tb_case *c,
                                     const struct tb_case_data *data,
                                     const struct tb_exec_plan *plan, struct tb_error *err) {
  struct cublas_state *s = p->state;
  s->dev.cu->cuCtxSetCurrent(s->dev.context);
  if (!c->op->is_matmul) {
    return tb_fail(err, TB_ERR_UNAVAILABLE, "the cublas provider runs gemm only, not %s",
                   c->op->name);
  }
  if (tb_cublas_set_realization(s->blas, c->realization, err) != TB_OK) {
    return err->status;
  }
  return tb_cuda_device_load_case(&s->dev, c, data, 0, err);
}

static enum tb_status cublas_launch(struct tb_provider *p, unsigned long calls,
                                    struct tb_error *err) {
  struct cublas_state *s = p->state;
  const struct tb_case *c = &s->dev.data->c;
  size_t sa = tb_view_for(c->view.kind, c->shape.k).row_stride;
  size_t sb = tb_view_for(c->view.kind, c->shape.n).row_stride;
  for (unsigned long i = 0; i < calls; ++i) {
    struct tb_case_operands o = tb_cuda_device_next_operands(&s->dev);
    s->status =
        tb_cublas_gemm(s->blas, c->shape.m, c->shape.n, c->shape.k, o.x, sa, o.y, sb, o.out);
    if (s->status != 0) {
      return tb_fail(err, TB_ERR_RUN, "cublasSgemm failed: status %d", s->status);
    }
  }
  return TB_OK;
}

/* An upper bound for the probe's capacity: split-k adds a kernel. */
static unsigned cublas_launches_per_call(const struct tb_provider *p) {
  return 4;
}

static void cublas_details(const struct tb_provider *p, struct tb_provider_details *out) {
  const struct cublas_state *s = p->state;
  memset(out, 0, sizeof *out);
  out->kind = TB_DETAILS_CUBLAS;
  tb_cublas_facts(s->blas, &out->as.cublas);
  tb_cuda_device_buffer_facts(&s->dev, &out->as.cublas.buffers);
  snprintf(out->as.cublas.device, sizeof out->as.cublas.device, "%s", s->dev.info.name);
}

static void cublas_release(struct tb_provider *p) {
  struct cublas_state *s = p->state;
  tb_cuda_device_unload_case(&s->dev);
}

static void cublas_destroy(struct tb_provider *p) {
  struct cublas_state *s = p->state;
  cublas_release(p);
  tb_cublas_close(s->blas); /* before the stream it is bound to */
  if (s->workspace != 0) {
    s->dev.cu->cuMemFree(s->workspace);
  }
  tb_cuda_device_close(&s->dev);
  free(s);
  free(p);
}

static enum tb_status set_workspace(struct cublas_state *s, struct tb_error *err) {
  CUresult rc = s->dev.cu->cuMemAlloc(&s->workspace, CUBLAS_WORKSPACE_BYTES);
  if (rc != CUDA_SUCCESS) {
    s->workspace = 0;
    return tb_cuda_fail(err, "cuMemAlloc (the cuBLAS workspace)", rc);
  }
  return tb_cublas_set_workspace(s->blas, s->workspace, CUBLAS_WORKSPACE_BYTES, err);
}

static const struct tb_provider_ops cublas_ops = {
    .plan = cublas_plan,
    .prepare = cublas_prepare,
    .launch = cublas_launch,
    TB_CUDA_DEVICE_OPS,
    .launches_per_call = cublas_launches_per_call,
    .details = cublas_details,
    .source = tb_cuda_device_op_no_source,
    .release = cublas_release,
    .destroy = cublas_destroy,
};

enum tb_status tb_cuda_cublas_provider_create(struct tb_provider **out, struct tb_error *err) {
  *out = NULL;
  struct cublas_state *s = calloc(1, sizeof *s);
  /* plans nothing: the variants of row reductions are the native provider's */
  struct tb_provider *p = s ? tb_cuda_provider_new(&cublas_ops, "cublas", false, s) : NULL;
  if (p == NULL) {
    free(s);
    return tb_fail(err, TB_ERR_SYSTEM, "out of memory creating the cublas provider");
  }
  if (tb_cuda_device_open(&s->dev, err) != TB_OK ||
      tb_cublas_open(s->dev.stream, &s->blas, err) != TB_OK || set_workspace(s, err) != TB_OK) {
    cublas_destroy(p);
    return err->status;
  }
  *out = p;
  return TB_OK;
}
