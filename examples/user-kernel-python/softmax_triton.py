"""A softmax for tilebench's user-python provider written in Triton
(docs/user-kernels.md), the GPU twin of softmax.py:

    tilebench run --backend cuda --ops softmax --providers native,torch,user-python \
        --kernel examples/user-kernel-python/softmax_triton.py:softmax

One program per row: the row is loaded once (masked to its n elements, so
the strided view's NaN padding is never read), its maximum subtracted before
exp, and the row written to the packed output. The launch goes on PyTorch's
current stream (Triton's default) and nothing synchronises: the worker's
samples do. Needs a GPU and Triton (scripts/gpu.sh runs it only where
`import triton` works); rows up to 65536 elements, one block each.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(out_ptr, x_ptr, x_row_stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < n
    v = tl.load(x_ptr + row * x_row_stride + cols, mask=inside, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=inside)


def softmax(x):
    m, n = x.shape
    if x.stride(1) != 1:
        raise ValueError(f"rows must be contiguous (stride {x.stride()})")
    out = torch.empty((m, n), device=x.device, dtype=x.dtype)
    _softmax_rows[(m,)](out, x, x.stride(0), n, BLOCK=triton.next_power_of_2(n))
    return out
