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


def writes_past_input(x):
    # writes the last element of x's allocation: past the end of its storage
    # (rows and padding), where the worker keeps a guard zone; x itself, and
    # the output, stay right
    out = torch.softmax(x, dim=-1)
    torch.as_strided(x, (1,), (1,), x.storage().size() - 1).fill_(0.0)
    return out


def slows_the_clock(x):
    # makes the worker's own clock run at a hundredth of the time (it calls
    # time.clock_gettime_ns around each host sample): every output is right,
    # only the harness's clock around the requests disagrees. A hundredth,
    # not a tenth: the batch is sized from single calls, dearer than a batch's
    # calls, so a sample's true length is a fraction of what the slowed clock
    # asked for, and at a tenth it came within the rule's slack on a fast CPU
    import time
    if not getattr(time, "_tilebench_test_slowed", False):
        real = time.clock_gettime_ns
        time.clock_gettime_ns = lambda clock: real(clock) // 100
        time._tilebench_test_slowed = True
    return torch.softmax(x, dim=-1)


_first_set = {}


def only_first_set(x):
    # right on the first buffer set it sees of each case (where the validation
    # calls land) and zeros on the others: only the outputs the timed calls
    # left on every set, and the fresh inputs' call (made on set 1), show it
    first = _first_set.setdefault((tuple(x.shape), x.stride()), x.data_ptr())
    out = torch.softmax(x, dim=-1)
    return out if x.data_ptr() == first else torch.zeros_like(out)
