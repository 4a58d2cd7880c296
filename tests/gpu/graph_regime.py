"""What sets a CUDA-graph replay's regime (issue 18): a timeline in one process.

Replays of a torch or torch.compile function run either at their kernels' summed
time or about 0.3 µs a kernel above it, and which one a process gets has changed
from one case, process and call to the next. This script follows one process
through time with none of tilebench's code: a graph of torch's own softmax
(captured before anything is compiled) and one of the compiled softmax are kept
and replayed again and again, a fresh graph of each is captured and replayed beside
them, and each point records what else the process and the GPU hold then: this
process's children and the processes with a context on the GPU (nvidia-smi). A
regime that changes with time while the graphs stay the same points at the process
or the GPU, not at the graphs; one that follows the compiler's worker processes
(TORCHINDUCTOR_COMPILE_THREADS=1 compiles in this process) points at them. What it
found, with the steps below: a graph captured on torch's own capture stream slows once a
third graph is instantiated or a second stream runs a kernel, one captured on the stream it
is replayed on does not (docs/method.md §2.3, evidence/2026-12-06-h100-graph-regime).

    python3 graph_regime.py OUT.json [SECONDS]
    python3 graph_regime.py OUT.json STEP[,STEP...]

GRAPH_REGIME_COMPILE=0 first follows the eager graph alone for SECONDS, nothing compiled.
With steps, one graph of torch's softmax is kept and timed after each step, to find the
step after which it replays slower (STEPS below); GRAPH_REGIME_BEFORE=STEP,... runs
steps before that graph is captured; GRAPH_REGIME_STREAM=dedicated runs it all on a stream
of its own instead of the default stream; GRAPH_REGIME_WARMUP=new gives each capture's
warm-up a new side stream (default: one for all); GRAPH_REGIME_CAPTURE=current captures on
the current stream (with GRAPH_REGIME_STREAM=dedicated: a capture can't use the default one).
GRAPH_REGIME_EXPECT=back-to-back exits 1 unless every timing lies within GAP_TOLERANCE_NS a call
of the kernels' time (the GPU tests stage runs the worker's arrangement so).

Each figure is the median per call of REPLAYS replays, each timed by
torch.cuda.Event behind a sleep kernel (the host has queued the replay before the
GPU reaches it). The kernels' summed time a call is taken once at the end with
torch.profiler (after every timed replay: its first use may change the process).
"""
import json
import os
import statistics
import subprocess
import sys
import time

import torch

M, N = 1024, 1024
CALLS = 64
REPLAYS = 15
SLEEP_CYCLES = 200_000


def buffer_sets():
    """Cold inputs: sets of one input and its kept output, at least 4x the L2 size."""
    per_set = 2 * M * N * 4
    count = -(-4 * torch.cuda.get_device_properties(0).L2_cache_size // per_set)
    return [{"x": torch.randn(M, N, device="cuda")} for _ in range(count)]


class Rotation:
    """Calls of fn that walk the sets, each result kept until its set's next call."""

    def __init__(self, fn, sets):
        self.fn, self.sets, self.cursor = fn, sets, 0

    def calls(self, count):
        for _ in range(count):
            s = self.sets[self.cursor]
            s["result"] = self.fn(s["x"])
            self.cursor = (self.cursor + 1) % len(self.sets)


def on_side_stream(rotation, side, calls):
    """calls eager calls on stream side, ordered after and before the current stream's work"""
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        rotation.calls(calls)
    torch.cuda.current_stream().wait_stream(side)


# The side stream of every capture's warm-up (GRAPH_REGIME_WARMUP=new: a new one each time,
# as torch's examples and graph_replay_check.py do)
WARMUP_STREAM = []


def warmup_stream():
    if os.environ.get("GRAPH_REGIME_WARMUP") == "new" or not WARMUP_STREAM:
        WARMUP_STREAM[:] = [torch.cuda.Stream()]
    return WARMUP_STREAM[0]


def capture(rotation, replay=True, warmup=True):
    if warmup:  # off the capture, on a side stream, as torch.cuda.graph asks
        on_side_stream(rotation, warmup_stream(), 3)
    graph = torch.cuda.CUDAGraph()
    # GRAPH_REGIME_CAPTURE=current: captured on the stream it is replayed on, as the native
    # backend and graph_regime_cupy.py do (default: torch's own capture stream)
    on = torch.cuda.current_stream() if os.environ.get("GRAPH_REGIME_CAPTURE") == "current" else None
    with torch.cuda.graph(graph, stream=on):
        rotation.calls(CALLS)
    if replay:
        graph.replay()
    torch.cuda.synchronize()
    return graph


def per_call_ns(graph):
    times = []
    for _ in range(REPLAYS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e6 / CALLS)
    return statistics.median(times)


def children():
    """This process's child processes (pid, command), from /proc."""
    me, found = os.getpid(), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == me:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    found.append([int(pid), f.read().replace(b"\0", b" ").decode(errors="replace")[:120]])
        except OSError:
            continue
    return found


def gpu_processes():
    """The processes with a context on the GPU, as nvidia-smi lists them (None if it cannot)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [line.strip() for line in out.splitlines() if line.strip()]


def kernel_sum_per_call_ns(graph):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        graph.replay()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return sum(e.time_range.elapsed_us() for e in kernels) * 1e3 / CALLS, len(kernels) / CALLS


def point(t0, label, kept, rotations):
    """One point of the timeline: the kept graphs replayed, a fresh graph of each function."""
    row = {"t_s": round(time.monotonic() - t0, 2), "label": label}
    for name, graph in kept.items():
        row[f"{name}_kept_ns"] = per_call_ns(graph)
    for name, rotation in rotations.items():
        fresh = capture(rotation)
        row[f"{name}_fresh_ns"] = per_call_ns(fresh)
        del fresh
    row["children"] = children()
    row["gpu_processes"] = gpu_processes()
    figures = " ".join(f"{k[:-3]} {v:.0f}" for k, v in row.items() if k.endswith("_ns"))
    print(f"{row['t_s']:6.1f} s {label:18} {figures} | children {len(row['children'])}, "
          f"GPU processes {len(row['gpu_processes'] or [])}", flush=True)
    return row


class Steps:
    """What a process may do between two timings of its kept graph."""

    def __init__(self, rotation):
        self.rotation, self.held, self.second, self.kept = rotation, [], None, None

    def again(self):
        """nothing: the kept graph timed again"""

    def stream(self):
        """a new torch.cuda.Stream, nothing run on it"""
        self.held.append(torch.cuda.Stream())

    def side(self):
        """three eager calls on a new side stream"""
        on_side_stream(self.rotation, torch.cuda.Stream(), 3)
        torch.cuda.synchronize()

    def side_same(self):
        """three eager calls on the side stream of the captures' warm-up"""
        on_side_stream(self.rotation, warmup_stream(), 3)
        torch.cuda.synchronize()

    def side_nowait(self):
        """three eager calls on a new side stream, no event between the streams"""
        side = torch.cuda.Stream()
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            self.rotation.calls(3)
        torch.cuda.synchronize()

    def wait_only(self):
        """events between the current stream and a new idle stream, both ways, no kernel"""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()

    def recapture(self):
        """the kept graph destroyed and captured again, warmed up on the current stream"""
        self.kept = None
        self.rotation.calls(3)
        self.kept = capture(self.rotation, warmup=False)

    def recapture_side(self):
        """the kept graph destroyed and captured again, warmed up on a side stream"""
        self.kept = None
        self.kept = capture(self.rotation)

    def eager(self):
        """CALLS eager calls on the current stream"""
        self.rotation.calls(CALLS)
        torch.cuda.synchronize()

    def empty(self):
        """what torch.cuda.graph does before a capture: synchronize, gc.collect, empty_cache"""
        torch.cuda.synchronize()
        import gc
        gc.collect()
        torch.cuda.empty_cache()

    def alloc(self):
        """256 MiB more device memory, kept"""
        self.held.append(torch.ones(2**26, device="cuda"))
        torch.cuda.synchronize()

    def frag(self):
        """512 blocks of 2 MiB allocated, every other one freed, the cache emptied"""
        blocks = [torch.empty(2**19, device="cuda") for _ in range(512)]
        self.held.extend(blocks[::2])
        del blocks
        self.empty()

    def capture2(self):
        """a second graph of the same calls captured (not replayed), kept"""
        self.second = capture(self.rotation, replay=False)

    def capture2_nowarm(self):
        """a second graph of the same calls captured (not replayed), kept, with no warm-up"""
        self.second = capture(self.rotation, replay=False, warmup=False)

    def capture16_nowarm(self):
        """sixteen more graphs of the same calls captured (not replayed), kept, no warm-up"""
        self.held.extend(capture(self.rotation, replay=False, warmup=False) for _ in range(16))

    def replay16(self):
        """each of those sixteen graphs replayed once"""
        for graph in self.held:
            if isinstance(graph, torch.cuda.CUDAGraph):
                graph.replay()
        torch.cuda.synchronize()

    def recycle2(self):
        """the second graph destroyed, then captured again with no warm-up (never three alive)"""
        self.del2()
        self.capture2_nowarm()

    def replay2(self):
        """the second graph replayed once"""
        self.second.replay()
        torch.cuda.synchronize()

    def del2(self):
        """the second graph destroyed"""
        self.second = None
        import gc
        gc.collect()
        torch.cuda.synchronize()

    @classmethod
    def names(cls):
        return [n for n, f in vars(cls).items() if callable(f) and not n.startswith("_") and n != "names"]


def steps_run(out, steps):
    before = list(filter(None, os.environ.get("GRAPH_REGIME_BEFORE", "").split(",")))
    unknown = [s for s in steps + before if s not in Steps.names()]
    if unknown:
        print(f"unknown step(s) {', '.join(unknown)}: give {', '.join(Steps.names())}", file=sys.stderr)
        return 2
    if os.environ.get("GRAPH_REGIME_STREAM") == "dedicated":
        with torch.cuda.stream(torch.cuda.Stream()):
            return timed_steps(out, steps, before)
    return timed_steps(out, steps, before)


def timed_steps(out, steps, before):
    rotation = Rotation(lambda x: torch.softmax(x, dim=-1), buffer_sets())
    actions = Steps(rotation)
    for name in before:
        getattr(actions, name)()
    actions.kept = capture(rotation)
    rows = [{"step": "captured", "kept_ns": per_call_ns(actions.kept)}]
    for name in steps:
        getattr(actions, name)()
        rows.append({"step": name, "kept_ns": per_call_ns(actions.kept)})
    total, kernels = kernel_sum_per_call_ns(actions.kept)
    for row in rows:
        print(f"{row['step']:9} {row['kept_ns']:7.0f} ns a call, {row['kept_ns'] - total:5.0f} above "
              f"the kernel sum", flush=True)
    print(f"(before the capture: {','.join(before) or 'nothing'}; kernel sum {total:.0f} ns a call, "
          f"{kernels:g} kernels)")
    with open(out + ".partial", "w") as f:
        json.dump({"calls": CALLS, "replays": REPLAYS, "shape": [M, N], "before": before,
                   "environment": {k: v for k, v in os.environ.items()
                                   if k.startswith(("GRAPH_REGIME_", "CUDA_"))},
                   "kernel_sum_per_call_ns": total, "steps": rows,
                   "step_meanings": {n: getattr(Steps, n).__doc__ for n in Steps.names()}}, f, indent=1)
    os.replace(out + ".partial", out)
    return gaps_verdict(rows, total) if os.environ.get("GRAPH_REGIME_EXPECT") == "back-to-back" else 0


# How far above its kernels' time a replay may lie and still count as back to back: the
# slow regime is ~340 ns a kernel above (evidence/2026-12-06-h100-graph-regime)
GAP_TOLERANCE_NS = 100


def gaps_verdict(rows, kernel_ns):
    """GRAPH_REGIME_EXPECT=back-to-back: 0 if every timing of the kept graph lies within
    GAP_TOLERANCE_NS a call of its kernels' time (one kernel a call), else 1, saying where."""
    slow = [r for r in rows if r["kept_ns"] - kernel_ns > GAP_TOLERANCE_NS]
    for r in slow:
        print(f"FAIL after {r['step']}: {r['kept_ns']:.0f} ns a call, {r['kept_ns'] - kernel_ns:.0f} "
              f"above the kernels' {kernel_ns:.0f}")
    print(("PASS" if not slow else "FAIL") + f": the kept graph back to back after every step "
          f"(within {GAP_TOLERANCE_NS} ns a call of its kernels)")
    return 1 if slow else 0


# The settings read from the environment and the values each takes (unset: the default)
SETTINGS = {"GRAPH_REGIME_COMPILE": ("0", "1"), "GRAPH_REGIME_STREAM": ("dedicated",),
            "GRAPH_REGIME_WARMUP": ("new",), "GRAPH_REGIME_CAPTURE": ("current",),
            "GRAPH_REGIME_EXPECT": ("back-to-back",)}


def settings_error():
    """A message for the first setting set to a value it does not take, or None."""
    for name, values in SETTINGS.items():
        value = os.environ.get(name)
        if value is not None and value not in values:
            return f"{name}={value!r}: give {' or '.join(values)}, or leave it unset"
    return None


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: python3 graph_regime.py OUT.json [SECONDS | STEP[,STEP...]]", file=sys.stderr)
        return 2
    error = settings_error()
    if error:
        print(error, file=sys.stderr)
        return 2
    if len(argv) == 3 and not argv[2].isdigit():
        return steps_run(argv[1], argv[2].split(","))
    out, seconds = argv[1], int(argv[2]) if len(argv) == 3 else 30
    t0 = time.monotonic()
    sets = buffer_sets()
    eager = Rotation(lambda x: torch.softmax(x, dim=-1), sets)
    kept, rotations, rows = {"eager": capture(eager)}, {"eager": eager}, []
    for i in range(3):
        rows.append(point(t0, f"before compile {i}", kept, rotations))
    if os.environ.get("GRAPH_REGIME_COMPILE", "1") == "0":  # time alone, nothing compiled
        while time.monotonic() - t0 < seconds:
            time.sleep(1.0)
            rows.append(point(t0, "nothing compiled", kept, rotations))
        seconds = 0
    compiled = Rotation(torch.compile(lambda x: torch.softmax(x, dim=-1), dynamic=False), sets)
    compiled.calls(1)
    torch.cuda.synchronize()
    kept["compiled"], rotations["compiled"] = capture(compiled), compiled
    rows.append(point(t0, "just compiled", kept, rotations))
    while time.monotonic() - t0 < seconds:
        time.sleep(1.0)
        rows.append(point(t0, "after compile", kept, rotations))
    sums = {name: kernel_sum_per_call_ns(graph) for name, graph in kept.items()}
    for name, (ns, kernels) in sums.items():
        print(f"{name}: kernel sum {ns:.0f} ns a call ({kernels:g} kernels)", flush=True)
    with open(out + ".partial", "w") as f:
        json.dump({"calls": CALLS, "replays": REPLAYS, "shape": [M, N],
                   "compile_threads": os.environ.get("TORCHINDUCTOR_COMPILE_THREADS"),
                   "kernel_sum_per_call_ns": {k: v[0] for k, v in sums.items()}, "points": rows},
                  f, indent=1)
    os.replace(out + ".partial", out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
