"""Where the calls of one captured CUDA graph put their outputs and read their inputs
(issue 18's diagnostics): the facts the torch worker (TILEBENCH_TORCH_GRAPH_DUMP) and
tests/gpu/graph_replay_check.py record per graph, for tests/gpu/graph_dot_summary.py to
set side by side. Standard library only; addresses are plain integers."""


def output_address_facts(outputs):
    """Where the outputs of one captured graph's calls lie (issue 18): `outputs` is a
    list of (address, bytes), one per call in call order. Distinct start addresses,
    the bytes of their union, how many calls write bytes another call of the same
    graph writes (overlap, not only equal addresses), and the fewest calls between
    two writes of one address (None when no address is written twice)."""
    spans = sorted((a, a + n, k) for k, (a, n) in enumerate(outputs))
    shared, union, reach = set(), 0, None  # reach: the furthest end of the spans before
    for i, (start, end, k) in enumerate(spans):
        if reach is not None and start < reach:
            shared.add(k)  # an earlier span reaches past this one's start
        if i + 1 < len(spans) and spans[i + 1][0] < end:
            shared.add(k)  # the next span starts inside this one
        union += max(0, end - max(start, reach if reach is not None else start))
        reach = end if reach is None else max(reach, end)
    last, gap = {}, None
    for k, (a, _) in enumerate(outputs):
        if a in last:
            gap = k - last[a] if gap is None else min(gap, k - last[a])
        last[a] = k
    return {"calls": len(outputs), "distinct_output_addresses": len({a for a, _ in outputs}),
            "distinct_output_bytes": union, "calls_sharing_output_bytes": len(shared),
            "fewest_calls_between_writes_of_one_address": gap,
            "output_alignment_bytes": alignment([a for a, _ in outputs])}


def alignment(addresses):
    """The largest power of two, up to 1 GiB, dividing every address (None for none)."""
    if not addresses:
        return None
    a = 1 << 30
    for x in addresses:
        while x % a:
            a >>= 1
    return a


def input_address_facts(inputs):
    """`inputs`: per call, the addresses of the tensors it reads."""
    flat = [a for call in inputs for a in call]
    return {"distinct_input_addresses": len(set(flat)), "input_alignment_bytes": alignment(flat)}
