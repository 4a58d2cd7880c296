/* Every operation of kernel ABI 1, right, over any row stride: the binding
 * of x, y, weight, bias, eps and out is checked for each against the oracle.
 * Plain loops in double; no flags missing, no shortcut. */
#include <math.h>

#include <tilebench/kernel.h>

uint32_t tb_user_kernel_abi_version(void) {
  return TB_KERNEL_ABI_VERSION;
}

uint32_t tb_user_kernel_flags(void) {
  return TB_KERNEL_ACCEPTS_STRIDED_ROWS;
}

const char *tb_user_kernel_description(void) {
  return "every ABI 1 operation as plain loops (tests/user_kernels/every_op.c)";
}

static const float *row(const struct tb_kernel_args *a, const float *base, int64_t i) {
  return base + i * a->row_stride;
}

int tb_user_sum(const struct tb_kernel_args *a) {
  for (int64_t i = 0; i < a->m; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < a->n; ++j) {
      s += row(a, a->x, i)[j];
    }
    a->out[i] = (float)s;
  }
  return 0;
}

int tb_user_softmax(const struct tb_kernel_args *a) {
  for (int64_t i = 0; i < a->m; ++i) {
    const float *x = row(a, a->x, i);
    double max = x[0], s = 0.0;
    for (int64_t j = 1; j < a->n; ++j) {
      max = x[j] > max ? x[j] : max;
    }
    for (int64_t j = 0; j < a->n; ++j) {
      s += exp(x[j] - max);
    }
    for (int64_t j = 0; j < a->n; ++j) {
      a->out[i * a->n + j] = (float)(exp(x[j] - max) / s);
    }
  }
  return 0;
}

int tb_user_rmsnorm(const struct tb_kernel_args *a) {
  for (int64_t i = 0; i < a->m; ++i) {
    const float *x = row(a, a->x, i);
    double s = 0.0;
    for (int64_t j = 0; j < a->n; ++j) {
      s += (double)x[j] * x[j];
    }
    double scale = 1.0 / sqrt(s / (double)a->n + a->eps);
    for (int64_t j = 0; j < a->n; ++j) {
      a->out[i * a->n + j] = (float)(x[j] * scale * a->weight[j]);
    }
  }
  return 0;
}

int tb_user_layernorm(const struct tb_kernel_args *a) {
  for (int64_t i = 0; i < a->m; ++i) {
    const float *x = row(a, a->x, i);
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < a->n; ++j) {
      mean += x[j];
    }
    mean /= (double)a->n;
    for (int64_t j = 0; j < a->n; ++j) {
      var += (x[j] - mean) * (x[j] - mean);
    }
    double scale = 1.0 / sqrt(var / (double)a->n + a->eps);
    for (int64_t j = 0; j < a->n; ++j) {
      a->out[i * a->n + j] = (float)((x[j] - mean) * scale * a->weight[j] + a->bias[j]);
    }
  }
  return 0;
}

int tb_user_add(const struct tb_kernel_args *a) {
  for (int64_t i = 0; i < a->m; ++i) {
    for (int64_t j = 0; j < a->n; ++j) {
      a->out[i * a->n + j] = row(a, a->x, i)[j] + row(a, a->y, i)[j];
    }
  }
  return 0;
}

int tb_user_gelu_add(const struct tb_kernel_args *a) {
  for (int64_t i = 0; i < a->m; ++i) {
    for (int64_t j = 0; j < a->n; ++j) {
      double v = (double)row(a, a->x, i)[j] + row(a, a->y, i)[j];
      a->out[i * a->n + j] = (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
    }
  }
  return 0;
}
