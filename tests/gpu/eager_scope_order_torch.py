"""Why a torch provider's eager GPU control can run slower per call than its
host end-to-end time (issue 18, "scope order"): tests/gpu/eager_scope_order.c
for torch calls. Each case is a callable over buffer sets rotated over 4x L2,
its result kept with its set as the worker keeps it; per sample every
condition runs once, in a rotating order, with a host timestamp before each
call:
    host R          R calls + torch.cuda.synchronize, host clock (the host phase)
    events R        the same calls inside a control session of the timing library
    events after X  the same, right after a probe session, a held graph replay
                    or two NVML reads (what precedes a device-phase sample)
    host after probe
Writes JSON, prints a table (ns a call, medians).

    python3 eager_scope_order_torch.py LIBTILEBENCH_TIMING OUT.json
"""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0] + "/python")
from tilebench import timing  # noqa: E402

CALLS = 64
SAMPLES = 21
HOLD_NS = 1_000_000_000
CONDITIONS = ("host 64", "host large", "events 64", "events large", "events after probe",
              "events after graph", "events after nvml", "host after probe")


def layernorm(s):
    return torch.nn.functional.layer_norm(s["x"], s["x"].shape[-1:], s["w"], s["b"])


def softmax(s):
    return torch.softmax(s["x"], dim=-1)


def cases():
    """(name, function, m, n, large batch): the cases the scope-order flag named."""
    return (("torch.compile layernorm 64x128", torch.compile(layernorm), 64, 128, 99),
            ("torch softmax 65536x17", softmax, 65536, 17, 256),
            ("torch.compile add 32x16384", torch.compile(lambda s: s["x"] + s["w"]), 32, 16384,
             111))


class Case:
    def __init__(self, fn, m, n):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        count = max(2, min(256, -(-4 * l2 // (m * n * 4))))
        self.sets = [{"x": torch.randn(m, n, device="cuda"),
                      "w": torch.randn(m, n, device="cuda") if n >= 16384 else
                      torch.randn(n, device="cuda"),
                      "b": torch.randn(n, device="cuda")} for _ in range(count)]
        self.fn = fn
        self.cursor = 0

    def calls(self, count, stamps=None):
        for _ in range(count):
            if stamps is not None:
                stamps.append(time.monotonic_ns())
            s = self.sets[self.cursor]
            self.cursor = (self.cursor + 1) % len(self.sets)
            s["result"] = self.fn(s)
        if stamps is not None:
            stamps.append(time.monotonic_ns())


def batch(lib, stream, case, events, calls):
    stamps = []
    gpu = None
    if events:
        with lib.control(stream.cuda_stream) as t:
            case.calls(calls, stamps)
            t.declare_calls(calls)
        gpu = t.result.gpu_elapsed_ns / calls
    else:
        case.calls(calls, stamps)
        torch.cuda.synchronize()
    end = time.monotonic_ns()
    gaps = [b - a for a, b in zip(stamps[:-2], stamps[1:-1])]
    return {"gpu": gpu, "host": (end - stamps[0]) / calls,
            "issue": (stamps[-1] - stamps[0]) / calls, "gap_p50": statistics.median(gaps),
            "head_gap": statistics.median(gaps[:8]), "first_call": stamps[1] - stamps[0]}


def probe_session(lib, stream, case):
    with lib.probe(stream.cuda_stream, 4 * CALLS + 16) as t:
        case.calls(CALLS)
        t.declare_calls(CALLS)


def held_graph_replay(lib, stream, graph):
    with lib.control(stream.cuda_stream, hold_timeout_ns=HOLD_NS) as t:
        graph.replay()
        t.declare_calls(CALLS)


def run(lib, stream, case, graph, condition, large):
    if condition.endswith("after probe"):
        probe_session(lib, stream, case)
    elif condition == "events after graph":
        held_graph_replay(lib, stream, graph)
    elif condition == "events after nvml":
        lib.gpu_state()
        lib.gpu_state()
    calls = large if condition.endswith("large") else CALLS
    return batch(lib, stream, case, condition.startswith("events"), calls)


def capture(case, stream):
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        case.calls(CALLS)
    graph.replay()
    torch.cuda.synchronize()
    return graph


def measure(lib, stream, name, fn, m, n, large):
    case = Case(fn, m, n)
    with torch.cuda.stream(stream):
        case.calls(3 * CALLS)  # compiles, warms the allocator
        torch.cuda.synchronize()
        graph = capture(case, stream)
        for c in CONDITIONS:
            run(lib, stream, case, graph, c, large)
        samples = {c: [] for c in CONDITIONS}
        for i in range(SAMPLES):
            for k in range(len(CONDITIONS)):
                c = CONDITIONS[(k + i) % len(CONDITIONS)]
                samples[c].append(run(lib, stream, case, graph, c, large))
    row = {"case": name, "large_batch": large, "conditions": {}}
    print(f"{name} (large = {large} calls)")
    print(f"  {'condition':20} {'gpu':>8} {'host':>8} {'issue':>8} {'gap p50':>8} {'head gap':>8} "
          f"{'first call':>10}")
    for c in CONDITIONS:
        s = samples[c]
        p50 = {k: statistics.median(x[k] for x in s) if s[0][k] is not None else None
               for k in s[0]}
        row["conditions"][c] = {"p50": p50, "samples": s}
        gpu = f"{p50['gpu']:8.0f}" if p50["gpu"] is not None else f"{'-':>8}"
        print(f"  {c:20} {gpu} {p50['host']:8.0f} {p50['issue']:8.0f} {p50['gap_p50']:8.0f} "
              f"{p50['head_gap']:8.0f} {p50['first_call']:10.0f}", flush=True)
    return row


def main():
    if len(sys.argv) != 3:
        print("usage: python3 eager_scope_order_torch.py LIBTILEBENCH_TIMING OUT.json",
              file=sys.stderr)
        sys.exit(2)
    lib = timing.load(sys.argv[1])
    stream = torch.cuda.Stream()
    rows = [measure(lib, stream, *c) for c in cases()]
    # written whole, then renamed: an interrupted write leaves no file that looks complete
    with open(sys.argv[2] + ".partial", "w") as f:
        json.dump({"tool": "eager_scope_order_torch", "calls": CALLS, "samples": SAMPLES,
                   "device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
    os.replace(sys.argv[2] + ".partial", sys.argv[2])


if __name__ == "__main__":
    main()
