"""tilebench's inputs regenerated in torch, from their definition in
docs/inputs.md alone, for scripts that check tilebench from outside on the
very inputs it measured (graph_replay_check.py). `values` computes a whole
tensor on any torch device in 64-bit integers (torch has no unsigned 64-bit
arithmetic: shifts are made logical with a mask, and products wrap modulo
2^64 as two's complement does); `value_exact` computes one element with
Python integers, and `verify` compares the two on a sample of elements."""
MASK64 = (1 << 64) - 1


def _signed(c):
    return c - (1 << 64) if c >= 1 << 63 else c


GAMMA, MIX1, MIX2, INDEX = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD1B54A32D192ED03
RANGES = {"weight": (0.5, 1.5), "bias": (-0.5, 0.5)}  # every other role: activations


def value_range(role):
    return RANGES.get(role, (-4.0, 4.0))


def splitmix64(x):
    x = (x + GAMMA) & MASK64
    x = ((x ^ (x >> 30)) * MIX1) & MASK64
    x = ((x ^ (x >> 27)) * MIX2) & MASK64
    return x ^ (x >> 31)


def stream_key(seed, role, m, n):
    h = splitmix64(seed & MASK64)
    for c in role.encode():
        h = splitmix64(h ^ c)
    h = splitmix64(h ^ m)
    return splitmix64(h ^ ((n << 1) & MASK64))


def value_exact(seed, role, m, n, index):
    """Element `index` (row-major logical position) of input `role` of an
    m x n case, as a Python float holding the float32 tilebench makes."""
    import struct
    bits = splitmix64((stream_key(seed, role, m, n) + index * INDEX) & MASK64)
    lo, hi = value_range(role)
    value = lo + (hi - lo) * ((bits >> 40) / float(1 << 24))
    return struct.unpack("f", struct.pack("f", value))[0]


def _lsr(t, s):
    return (t >> s) & ((1 << (64 - s)) - 1)


def _splitmix64(t):
    t = t + _signed(GAMMA)
    t = (t ^ _lsr(t, 30)) * _signed(MIX1)
    t = (t ^ _lsr(t, 27)) * _signed(MIX2)
    return t ^ _lsr(t, 31)


def values(torch, seed, role, m, n, rows, cols, device):
    """Input `role` of an m x n case as a rows x cols float32 tensor (packed:
    the logical elements, no padding)."""
    k = torch.arange(rows * cols, dtype=torch.int64, device=device)
    bits = _splitmix64(k * _signed(INDEX) + _signed(stream_key(seed, role, m, n)))
    unit = _lsr(bits, 40).to(torch.float64) / float(1 << 24)
    lo, hi = value_range(role)
    return (lo + (hi - lo) * unit).to(torch.float32).reshape(rows, cols)


def verify(tensor, seed, role, m, n, samples=257):
    """Raises ValueError unless a spread of the tensor's elements (the first,
    the last and `samples` between) are exactly value_exact's."""
    flat = tensor.reshape(-1)
    count = flat.numel()
    picks = sorted({0, count - 1} | {(i * 7919 * 104729) % count for i in range(samples)})
    got = flat[picks].cpu().tolist()
    for index, value in zip(picks, got):
        want = value_exact(seed, role, m, n, index)
        if value != want:
            raise ValueError(f"input {role} of {m}x{n}, element {index}: {value!r} here, "
                             f"{want!r} by docs/inputs.md")
