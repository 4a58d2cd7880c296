"""A softmax for tilebench's user-python provider (docs/user-kernels.md):

    tilebench run --ops softmax --providers native,torch,user-python \
        --kernel examples/user-kernel-python/softmax.py:softmax

The worker imports this file by its path and calls softmax(x) on the case's
tensor: x is float32, (m, n), on the worker's device (CUDA when PyTorch sees
a GPU), and may be a strided view (rows n+3 apart, NaN in the padding). It
returns a new (m, n) float32 tensor on the same device and leaves x as it
was. Plain PyTorch ops, written out rather than torch.softmax, so there is
something of yours to measure.

A Triton kernel is wrapped the same way: allocate the output, launch on
the current stream (Triton's default) and return it, without synchronising:

    @triton.jit
    def _softmax_kernel(out_ptr, x_ptr, x_stride, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * x_stride + cols, mask=cols < n, other=-float("inf"))
        e = tl.exp(v - tl.max(v, axis=0))
        tl.store(out_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)

    def softmax(x):
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        _softmax_kernel[(x.shape[0],)](out, x, x.stride(0), x.shape[1],
                                       BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
"""
import torch


def softmax(x):
    # the row maximum subtracted first, so exp never overflows
    shifted = x - x.amax(dim=-1, keepdim=True)
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)
