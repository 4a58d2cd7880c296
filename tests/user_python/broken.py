"""Broken softmax callables for tests/test_user_python.py: each breaks one
rule of the user-python contract (docs/user-kernels.md) and must be caught
for its own reason."""
import torch


def modifies_input(x):
    # softmax is shift-invariant per row, so the output stays right: only
    # the input check can see that x was written
    x.sub_(x.amax(dim=-1, keepdim=True))
    return torch.softmax(x, dim=-1)


def raises(x):
    raise ValueError("deliberate failure in raises()")


def wrong_shape(x):
    return torch.softmax(x, dim=-1)[:, :-1]


_cache = []


def cached_output(x):
    # computes once, then returns the same tensor (same storage) forever
    if not _cache:
        _cache.append(torch.softmax(x, dim=-1))
    return _cache[0]


not_a_function = 42


_first = []


def modifies_other_sets(x):
    # leaves the first buffer set it sees (set 0) alone and writes the
    # others: only a check of every set finds it
    if not _first:
        _first.append(x.data_ptr())
    if x.data_ptr() != _first[0]:
        x.sub_(x.amax(dim=-1, keepdim=True))
    return torch.softmax(x, dim=-1)


def returns_none(x):
    torch.softmax(x, dim=-1)  # computed, never returned


def returns_float64(x):
    return torch.softmax(x.double(), dim=-1)


def exits(x):
    import os
    os._exit(3)  # the worker dies in the call
