"""Where the probe's extra time goes on short kernels (issue 18, item 3).

On the H200 the probe's event span of a batch of short kernels exceeds the
control's by hundreds of microseconds a batch, while the kernels' own durations
match the control. This script finds out where that time lies: for eager and
graph batches of torch kernels of several sizes it records each kernel of a
probe session and prints the head (event span minus the kernels' span), the
gaps between kernels (median, max, where the max is) and the kernels' sum,
beside a control session of the same calls; then the same with the batch
queued behind a long sleep kernel (torch.cuda._sleep), which keeps the host's
launch-time costs out of the GPU's view, and with both sessions held by the
timing library (what the device phase does for graph replays). Writes JSON,
prints a table.

    python3 probe_gaps.py LIBTILEBENCH_TIMING OUT.json
"""
import json
import statistics
import sys

import torch

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0] + "/python")
from tilebench import timing  # noqa: E402

CALLS = 64
SAMPLES = 5
SHAPES = ((17, 257), (1024, 1024), (4096, 1024), (32768, 8192))
SLEEP_CYCLES = 4_000_000  # ~2 ms at 1.98 GHz: longer than queueing 64 launches


def batch_sets(m, n):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    count = max(2, min(64, -(-4 * l2 // (2 * m * n * 4))))
    return [(torch.randn(m, n, device="cuda"), torch.empty(m, n, device="cuda"))
            for _ in range(count)]


def calls(sets):
    for i in range(CALLS):
        x, y = sets[i % len(sets)]
        torch.softmax(x, dim=-1, out=y)


def graph_of(sets, stream):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        calls(sets)  # warm
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=stream):
            calls(sets)
    g.replay()
    torch.cuda.synchronize()
    return g


HOLD_NS = 5_000_000_000


def one(lib, stream, work, probe, how):
    hold = HOLD_NS if how == "held" else None
    with torch.cuda.stream(stream):
        session = lib.probe(stream.cuda_stream, 4 * CALLS + 8, records=True, hold_timeout_ns=hold) \
            if probe else lib.control(stream.cuda_stream, hold_timeout_ns=hold)
        with session as t:
            if how == "sleep":
                torch.cuda._sleep(SLEEP_CYCLES)
            work()
            t.declare_calls(CALLS)
    return t.result


def describe(result, how):
    kernels = sorted(result.kernels, key=lambda k: k.start_ns)
    if how == "sleep":
        kernels = kernels[1:]  # the sleep kernel
    starts = [k.start_ns for k in kernels]
    ends = [k.end_ns for k in kernels]
    gaps = [starts[i + 1] - ends[i] for i in range(len(kernels) - 1)]
    span = ends[-1] - starts[0]
    biggest = max(range(len(gaps)), key=lambda i: gaps[i]) if gaps else -1
    return {"event_span_us": result.gpu_elapsed_ns / 1e3, "kernels": len(kernels),
            "kernel_span_us": span / 1e3,
            "kernel_sum_us": sum(e - s for s, e in zip(starts, ends)) / 1e3,
            "gap_median_us": statistics.median(gaps) / 1e3 if gaps else 0.0,
            "gap_max_us": max(gaps) / 1e3 if gaps else 0.0, "gap_max_after_kernel": biggest}


def control_p50(lib, stream, work, samples=9):
    return statistics.median(one(lib, stream, work, False, "plain").gpu_elapsed_ns / 1e3 / CALLS
                             for _ in range(samples))


def residue(lib, stream, m=4096, n=1024):
    """Does a probe session leave graph replays slower after it ends? The
    same graph's control before any probe of this process, after three probe
    sessions of it and three held ones, and a graph instantiated after them;
    eager alike."""
    sets = batch_sets(m, n)
    first = graph_of(sets, stream)
    eager = lambda: calls(sets)  # noqa: E731
    before = {"graph": control_p50(lib, stream, first.replay), "eager": control_p50(lib, stream, eager)}
    for how in ("plain", "plain", "plain", "held", "held", "held"):
        one(lib, stream, first.replay, True, how)
    after = {"graph": control_p50(lib, stream, first.replay), "eager": control_p50(lib, stream, eager)}
    second = graph_of(sets, stream)
    after["new graph"] = control_p50(lib, stream, second.replay)
    row = {"shape": f"{m}x{n}", "before_any_probe_us_per_call": before,
           "after_probes_us_per_call": after}
    print(f"residue {m}x{n}: graph control {before['graph']:.3f} before any probe, "
          f"{after['graph']:.3f} after six, a graph made after them {after['new graph']:.3f}; "
          f"eager {before['eager']:.3f} -> {after['eager']:.3f} us/call", flush=True)
    return row


def main():
    if len(sys.argv) != 3:
        print("usage: python3 probe_gaps.py LIBTILEBENCH_TIMING OUT.json", file=sys.stderr)
        sys.exit(2)
    lib = timing.load(sys.argv[1])
    stream = torch.cuda.Stream()
    first = residue(lib, stream)
    rows = []
    for m, n in SHAPES:
        sets = batch_sets(m, n)
        graph = graph_of(sets, stream)
        for mode, work in (("eager", lambda: calls(sets)), ("graph", graph.replay)):
            for how in ("plain", "sleep", "held"):
                work()
                torch.cuda.synchronize()
                control, probes = [], []
                for _ in range(SAMPLES):
                    control.append(one(lib, stream, work, False, how).gpu_elapsed_ns / 1e3)
                    probes.append(describe(one(lib, stream, work, True, how), how))
                p50 = {k: statistics.median(p[k] for p in probes) for k in probes[0]}
                row = {"shape": f"{m}x{n}", "mode": mode, "sessions": how,
                       "control_span_us": statistics.median(control), "probe": p50,
                       "probe_samples": probes}
                rows.append(row)
                print(f"{m}x{n:<6} {mode:5} {how:5} control {row['control_span_us']:9.1f}"
                      f" probe span {p50['event_span_us']:9.1f} kernels span "
                      f"{p50['kernel_span_us']:9.1f} sum {p50['kernel_sum_us']:9.1f} gap p50 "
                      f"{p50['gap_median_us']:6.2f} max {p50['gap_max_us']:7.1f} "
                      f"(after kernel {p50['gap_max_after_kernel']:.0f}) us; probe/control "
                      f"{p50['event_span_us'] / row['control_span_us']:.3f}", flush=True)
        del graph, sets
    with open(sys.argv[2], "w") as f:
        json.dump({"calls": CALLS, "samples": SAMPLES, "residue": first, "rows": rows}, f, indent=1)
    print(f"probe gaps: {len(rows)} rows")


if __name__ == "__main__":
    main()
