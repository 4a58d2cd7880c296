"""An independent check of tilebench's graph scope for torch.compile (issue 18).

For every torch-compile case of the tilebench results given, this script
compiles the same function itself, on the very inputs tilebench measured
(regenerated from docs/inputs.md by tilebench_inputs.py, with the run's seed,
and verified element by element on a sample), rotates over its own cold
buffer sets of them (at least 4x the L2 size, as the worker does), captures the same number of calls
into torch.cuda.CUDAGraphs and times each replay with torch.cuda.Event
behind a sleep kernel of its own (torch.cuda._sleep, ~100 µs: the host has
queued the start event, the replay and the stop event before the GPU reaches
them, so the interval holds the graph's work alone, as tilebench's hold
does), with none of tilebench's code. Each call's result is kept with its buffer set
until the set's next call, as the worker keeps it; the same replay with each
result dropped at once (the allocator then reuses one block for every
output) is printed beside it, and the same replay after one eager pass over
every set (a result kept in each before the capture, as the worker's eager
samples leave them), and the kernels' summed GPU time from one profiled replay
beside tilebench's graph probe (torch.profiler only after every case's timed
replays, so that no timed replay follows the profiler's first use). It prints, per case, tilebench's graph figure,
this one and their ratio (PASS within 5 %), and writes them as JSON. Per mode (kept, dropped,
prefilled) and graph, where its calls' outputs lie (recorded during the capture: distinct
addresses, their bytes, calls writing bytes another call of the graph writes, the fewest calls
between two writes of one address) goes in the JSON row and a clause of the printed line; with
TB_CHECK_GRAPH_DUMP=DIR the first graph of each is also written there as Graphviz text and
<name>-addresses.json (tests/gpu/graph_dot_summary.py sets them beside the worker's). Also
printed: an "offset" replay, the inputs placed 4 KiB into larger allocations as the worker's
guard zones place them. TB_CHECK_TIMING_LIB=PATH (libtilebench_timing) times the kept graphs
again behind tilebench's hold; with it, TB_CHECK_PROBE_FIRST opens probe sessions (CUPTI), as the
worker's process has them: 1, one before anything is timed; capture, that one and one before
each graph mode's capture; replay, that one and one after each mode's capture, just before its
timed replays.
TB_CHECK_CASES=ID[,ID...] checks only those cases (one a process, to tell a case's figure from
what the process did before it); TB_CHECK_BALLAST_GIB=N first allocates N GiB of device memory,
written once and kept, untouched after (does a process's footprint set the replays' regime?).

    python3 graph_replay_check.py OUT.json RESULTS_DIR...
"""
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the address facts of the diagnostics only: every timed figure here uses none of tilebench's code
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from tilebench.graph_addresses import input_address_facts, output_address_facts  # noqa: E402
from results_io import load_results  # noqa: E402 (tests/, beside this folder)
import tilebench_inputs  # noqa: E402

import torch
import torch.nn.functional as F

TOLERANCE = 0.05
REPLAYS = 15


def whole_number(name, default, positive=False):
    """The environment variable `name` as a whole number; anything else exits 2 with a message."""
    text = os.environ.get(name, default)
    if not text.isdigit() or (positive and int(text) == 0):
        print(f"{name}={text!r}: give a {'positive ' if positive else ''}whole number",
              file=sys.stderr)
        sys.exit(2)
    return int(text)


# ~100 µs at the H200's 1.98 GHz: longer than queueing a replay, short enough
# that the GPU does not idle down its clocks first (TB_CHECK_SLEEP_CYCLES)
def sleep_cycles():
    return whole_number("TB_CHECK_SLEEP_CYCLES", "200000", positive=True)


def load(directory):
    try:
        return load_results(directory)
    except FileNotFoundError as e:
        raise SystemExit(str(e)) from None


def function(op, n):
    if op == "softmax":
        return lambda s: torch.softmax(s["x"], dim=-1)
    if op == "rmsnorm":
        return lambda s: F.rms_norm(s["x"], (n,), s["weight"], 1e-6)
    if op == "layernorm":
        return lambda s: F.layer_norm(s["x"], (n,), s["weight"], s["bias"], 1e-5)
    if op == "gelu_add":
        return lambda s: F.gelu(s["x"] + s["b"], approximate="none")
    return None


# Each operation's inputs: tilebench's role names (src/inputs/tensor.c), as
# (rows, cols) of an m x n case.
def input_shapes(op, m, n):
    if op in ("rmsnorm", "layernorm"):
        return {"x": (m, n), "weight": (1, n)} | ({"bias": (1, n)} if op == "layernorm" else {})
    return {"x": (m, n), "b": (m, n)} if op == "gelu_add" else {"x": (m, n)}


# Diagnostics (issue 18): the worker's inputs lie 4 KiB into allocations
# with guard zones on both sides (python/tilebench/torch_worker.py, GUARD_ELEMS);
# the "offset" replay places this script's the same way.
WORKER_GUARD_BYTES = 4096


def placed(t, offset_bytes):
    """A copy of t, offset_bytes into an allocation that many bytes longer on both
    sides (0: a plain clone)."""
    if offset_bytes == 0:
        return t.clone()
    pad = offset_bytes // t.element_size()
    allocation = torch.empty(t.numel() + 2 * pad, dtype=t.dtype, device=t.device)
    view = allocation[pad:pad + t.numel()].view(t.shape)
    view.copy_(t)
    return view


def buffer_sets(op, m, n, seed, offset_bytes=0):
    """Copies of the case's inputs (tilebench's, seed `seed`) totalling with
    their outputs at least 4x the L2 size, as the worker's sets do; every
    input offset_bytes into a larger allocation (diagnostics)."""
    base = {}
    for role, (rows, cols) in input_shapes(op, m, n).items():
        t = tilebench_inputs.values(torch, seed, role, m, n, rows, cols, "cuda")
        tilebench_inputs.verify(t, seed, role, m, n)
        base[role] = t if rows > 1 else t.reshape(cols)
    per_set = sum(t.numel() for t in base.values()) * 4 + m * n * 4
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    count = max(1, min(4096, -(-4 * l2 // per_set)))
    return [{role: placed(t, offset_bytes) for role, t in base.items()} for _ in range(count)]


def held_per_call_ns(lib, graphs, calls):
    """Diagnostic only (TB_CHECK_TIMING_LIB): the same graphs timed by
    tilebench's timing library behind its hold, to tell a difference of
    timing method from a difference of the graphs themselves."""
    stream = torch.cuda.current_stream().cuda_stream
    times = []
    for i in range(REPLAYS):
        with lib.control(stream, hold_timeout_ns=5_000_000_000) as t:
            graphs[i % len(graphs)].replay()
            t.declare_calls(calls)
        times.append(t.result.gpu_elapsed_ns / calls)
    return statistics.median(times)


def kernel_time_of_replay(graph, calls):
    """Diagnostic: the summed GPU time of the kernels of one replay of graph, per
    call (torch.profiler, outside every timing), to set beside tilebench's graph
    probe: equal sums with unequal replays point at gaps between the kernels,
    unequal sums at the kernels themselves."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        graph.replay()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
    return sum(e.time_range.elapsed_us() for e in kernels) * 1e3 / calls, len(kernels) / calls


def graph_facts(outputs, inputs, calls, sets, first, input_bytes, mode, index):
    """One graph's address facts (output_address_facts, input_address_facts) with the sets
    its calls read."""
    read = {(first + k) % sets for k in range(calls)}
    return {"mode": mode, "graph": index, "calls": calls, "sets": sets, "first_set": first,
            "input_sets_read": len(read), "input_bytes_read": len(read) * input_bytes,
            **output_address_facts(outputs), **input_address_facts(inputs)}


def graph_per_call_ns(fn, sets, calls, cycles, keep=True, lib=None, prefill=False, label="graph",
                      keep_first=False, mode="kept"):
    """Per call of one replay behind a sleep (median of REPLAYS), over as
    many graphs as one pass over the sets takes (at most 64), replayed in
    turn: cold like an eager batch. keep: each result lives until its set's
    next call. prefill: before the capture, one eager pass over every set
    keeps a result in each, as the worker's eager samples leave them.
    keep_first: the first graph is returned, kept for kernel_time_of_replay.
    Also returned: per graph, where its calls' outputs lie (graph_facts), recorded
    during the capture as integers (never a tensor: no output lives longer for it)."""
    cursor = [0]
    recorded = [None]  # during a capture: the list of (address, bytes) it appends to
    read = [None]  # and the list of each call's input addresses

    def run(k):
        for _ in range(k):
            s = sets[cursor[0]]
            result = fn(s)
            if recorded[0] is not None:
                recorded[0].append((result.data_ptr(), result.numel() * result.element_size()))
                read[0].append([t.data_ptr() for role, t in s.items() if role != "result"])
            if keep:
                s["result"] = result
            cursor[0] = (cursor[0] + 1) % len(sets)

    # The warm-up runs on the stream the graphs are captured and replayed on, not on a side
    # stream as torch's examples do: a graph captured after a second stream ran a kernel
    # replays ~0.3 us a kernel slower (docs/method.md §2.3; tests/gpu/graph_regime.py)
    run(len(sets) if prefill else 3)
    torch.cuda.synchronize()
    probe_if("capture")
    graphs, facts = [], []
    input_bytes = sum(t.numel() * t.element_size() for role, t in sets[0].items() if role != "result")
    dump = os.environ.get("TB_CHECK_GRAPH_DUMP")  # diagnostics: the first graph as Graphviz text
    for _ in range(min(64, -(-len(sets) // calls))):
        dumped = dump and not graphs
        # keep_graph: without it the capture is destroyed once instantiated and debug_dump
        # writes nothing
        graph = torch.cuda.CUDAGraph(keep_graph=True) if dumped else torch.cuda.CUDAGraph()
        if dumped:
            graph.enable_debug_mode()
        first, outputs, inputs = cursor[0], [], []
        recorded[0], read[0] = outputs, inputs
        # captured on the stream it is replayed on, as the worker's (docs/method.md §2.3)
        with torch.cuda.graph(graph, stream=torch.cuda.current_stream()):
            run(calls)
        recorded[0] = read[0] = None
        facts.append(graph_facts(outputs, inputs, calls, len(sets), first, input_bytes, mode,
                                 len(graphs)))
        if dumped:
            graph.instantiate()
            graph.debug_dump(os.path.join(dump, f"check-{label}-{calls}.dot"))
            with open(os.path.join(dump, f"check-{label}-{calls}-addresses.json"), "w") as f:
                case = re.match(r"[a-z_]+-\d+x\d+", label)
                json.dump({"tool": "check", "case": case.group(0) if case else label,
                           "l2_bytes": torch.cuda.get_device_properties(0).L2_cache_size,
                           **facts[-1], "outputs": [{"call": k, "set": (first + k) % len(sets),
                                                     "address": a, "bytes": n, "inputs": inputs[k]}
                                                    for k, (a, n) in enumerate(outputs)]},
                          f, indent=1)
        graphs.append(graph)
    probe_if("replay")
    for graph in graphs:
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for i in range(REPLAYS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(cycles)
        start.record()
        graphs[i % len(graphs)].replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e6 / calls)
    held = held_per_call_ns(lib, graphs, calls) if lib is not None else None
    for s in sets:
        s.pop("result", None)
    return statistics.median(times), held, graphs[0] if keep_first else None, facts


def recaptures(fn, sets, calls, cycles, count, label):
    """Diagnostic (TB_CHECK_RECAPTURES=K): the kept-result replay K more times, each from
    a fresh compilation and capture, to show how far one capture of the same function on
    the same sets lies from another."""
    figures = []
    for i in range(count):
        torch._dynamo.reset()
        figures.append(graph_per_call_ns(torch.compile(fn, dynamic=False), sets, calls, cycles,
                                         label=f"{label}-recaptured-{i}", mode=f"recaptured-{i}")[0])
    return figures


def recapture_count():
    return whole_number("TB_CHECK_RECAPTURES", "0")


def kernels_of_one_call(fn, s):
    """The names of the kernels one call of fn launches (torch.profiler, outside
    every timing): to tell a different compiled function from a different timing."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(s)
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
            and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]


def tilebench_kernels_per_call(case):
    """Kernels a call in tilebench's graph probe (its first sample), or None."""
    graph = (case.get("device") or {}).get("throughput", {}).get("batch_modes", {}).get("graph") or {}
    probe = graph.get("probe")
    if not probe or not probe.get("kernels"):
        return None
    return probe["kernels"][0] / probe["calls_per_sample"]


def tilebench_kernel_sum(case):
    """Kernel time a call in tilebench's graph probe (median over samples), or None."""
    graph = (case.get("device") or {}).get("throughput", {}).get("batch_modes", {}).get("graph") or {}
    summary = (graph.get("probe") or {}).get("kernel_per_call_summary_ns") or {}
    return summary.get("p50")


def fmt_us(ns):
    return "n/a" if ns is None else f"{ns / 1e3:.3f} µs"


def tilebench_graph(case):
    modes = (case.get("device") or {}).get("throughput", {}).get("batch_modes", {})
    control = (modes.get("graph") or {}).get("control")
    if not control:
        return None, None
    return control["per_call_summary_ns"]["p50"], control["calls_per_sample"]


def check_case(case, seed, cycles, lib, recapture_times):
    """The timed replays of one torch-compile case: its row (without the profiled figures) and
    what its profiling needs later, or None for a case not checked here."""
    op, m, n = case["op"], case["m"], case["n"]
    theirs, calls = tilebench_graph(case)
    fn = function(op, n)
    if theirs is None or fn is None or case["input_view"]["kind"] != "packed":
        return None
    # a fresh compilation per case, specialised to its shape as the worker's is (a
    # recompilation would otherwise go dynamic)
    torch._dynamo.reset()
    compiled = torch.compile(fn, dynamic=False)
    sets = buffer_sets(op, m, n, seed)  # ValueError: the regenerated inputs are not tilebench's
    label = f"{op}-{m}x{n}"
    mine, held, graph, kept_facts = graph_per_call_ns(compiled, sets, calls, cycles, lib=lib,
                                                      label=f"{label}-kept", keep_first=True)
    dropped, _, _, dropped_facts = graph_per_call_ns(compiled, sets, calls, cycles, keep=False,
                                                     label=f"{label}-dropped", mode="dropped")
    prefilled, _, _, prefilled_facts = graph_per_call_ns(compiled, sets, calls, cycles, prefill=True,
                                                         label=f"{label}-prefilled", mode="prefilled")
    offset_sets = buffer_sets(op, m, n, seed, WORKER_GUARD_BYTES)
    offset, _, _, offset_facts = graph_per_call_ns(compiled, offset_sets, calls, cycles,
                                                   label=f"{label}-offset", mode="offset")
    del offset_sets
    row = {"case": case["id"], "calls": calls, "tilebench_graph_ns": theirs,
           "independent_graph_ns": mine, "ratio": theirs / mine,
           "within_5_percent": abs(theirs / mine - 1.0) <= TOLERANCE,
           "independent_results_dropped_ns": dropped,
           "independent_every_set_prefilled_ns": prefilled,
           "independent_inputs_offset_as_worker_ns": offset,
           "independent_recaptured_ns": recaptures(fn, sets, calls, cycles, recapture_times, label),
           "tilebench_graph_probe_kernel_sum_per_call_ns": tilebench_kernel_sum(case),
           "independent_graphs_timed_by_tilebench_hold_ns": held,
           "tilebench_graph_probe_kernels_per_call": tilebench_kernels_per_call(case),
           # diagnostics (issue 18): per mode, per graph, where its calls' outputs lie
           "independent_output_addresses": {"kept": kept_facts, "dropped": dropped_facts,
                                            "prefilled": prefilled_facts, "offset": offset_facts},
           "l2_bytes": torch.cuda.get_device_properties(0).L2_cache_size}
    # every set stays alive until the profile: the kept graph reads them all when replayed
    return row, (graph, calls, compiled, sets)


def add_profile(row, graph, calls, compiled, sets):
    """The figures torch.profiler gives (CUPTI, so taken after every timed replay of the run: a
    profiler's first use may leave the process changed for what is timed after it)."""
    row["independent_kernel_sum_per_call_ns"], row["independent_profiled_kernels_per_call"] = \
        kernel_time_of_replay(graph, calls)
    names = kernels_of_one_call(compiled, sets[0])
    sets[0].pop("result", None)
    row["independent_kernels_per_call"], row["independent_kernel_names"] = len(names), names


def line(row):
    recaptured, held = row["independent_recaptured_ns"], row["independent_graphs_timed_by_tilebench_hold_ns"]
    return (f"{'PASS' if row['within_5_percent'] else 'FAIL'} {row['case']}: tilebench graph "
            f"{row['tilebench_graph_ns'] / 1e3:.3f} µs, independent {row['independent_graph_ns'] / 1e3:.3f} µs, "
            f"ratio {row['ratio']:.3f} (results dropped at once: "
            f"{row['independent_results_dropped_ns'] / 1e3:.3f} µs; every set prefilled: "
            f"{row['independent_every_set_prefilled_ns'] / 1e3:.3f} µs; inputs 4 KiB into larger "
            f"allocations, as the worker's: {row['independent_inputs_offset_as_worker_ns'] / 1e3:.3f} µs; "
            f"kernel sum a call: here "
            f"{row['independent_kernel_sum_per_call_ns'] / 1e3:.3f} µs "
            f"({row['independent_profiled_kernels_per_call']:g} kernels), tilebench's graph probe "
            f"{fmt_us(row['tilebench_graph_probe_kernel_sum_per_call_ns'])}"
            + (f"; recompiled and recaptured: {', '.join(f'{r / 1e3:.3f}' for r in recaptured)} µs"
               if recaptured else "")
            + (f"; these graphs behind tilebench's hold: {held / 1e3:.3f} µs" if held is not None else "")
            + f"; kernels a call: tilebench {row['tilebench_graph_probe_kernels_per_call']}, "
              f"here {row['independent_kernels_per_call']}"
            + (f"; {addresses_clause(row['independent_output_addresses'])}"
               if row.get("independent_output_addresses") else "")
            + ")")


def addresses_clause(by_mode):
    """'outputs a graph: kept 31 addresses 124.0 MiB, 64 of 64 calls share, rewritten 31 calls
    apart, ...' (the first graph of each mode; the JSON row has every graph)."""
    parts = []
    for mode in ("kept", "dropped", "prefilled"):
        graphs = by_mode.get(mode) or []
        if graphs:
            g = graphs[0]
            gap = g["fewest_calls_between_writes_of_one_address"]
            parts.append(f"{mode} {g['distinct_output_addresses']} addresses "
                         f"{g['distinct_output_bytes'] / 2**20:.1f} MiB, "
                         f"{g['calls_sharing_output_bytes']} of {g['calls']} calls share, "
                         + (f"rewritten {gap} calls apart" if gap is not None else "none rewritten")
                         + (f" ({len(graphs)} graphs)" if len(graphs) > 1 else ""))
    return "outputs a graph: " + ", ".join(parts)


PROBE_FIRST_WHEN = ("1", "capture", "replay")


def probe_when():
    """TB_CHECK_PROBE_FIRST: None (no probe session), or when to open them."""
    text = os.environ.get("TB_CHECK_PROBE_FIRST")
    if text is None or text == "0":
        return None
    if text not in PROBE_FIRST_WHEN:
        print(f"TB_CHECK_PROBE_FIRST={text!r}: give 1, capture or replay", file=sys.stderr)
        sys.exit(2)
    return text


# (library, when) while TB_CHECK_PROBE_FIRST asks for probe sessions in the timed modes
PROBE_AT = [None, None]


def probe_if(moment):
    """One probe session now if TB_CHECK_PROBE_FIRST names this moment (capture or replay)."""
    lib, when = PROBE_AT
    if lib is not None and when == moment:
        probe_first(lib, quiet=True)


def probe_first(lib, quiet=False):
    """Diagnostic (TB_CHECK_PROBE_FIRST, with TB_CHECK_TIMING_LIB): one probe session of
    tilebench's timing library around one small kernel, so that CUPTI is set up in this
    process as it is in the torch worker, whose probe samples run beside its graph samples
    (issue 18: does that set a process's replay regime, and for how long?)."""
    stream = torch.cuda.current_stream().cuda_stream
    x = torch.ones(1024, device="cuda")
    with lib.probe(stream, 16) as t:
        x.add_(1.0)
        t.declare_calls(1)
    torch.cuda.synchronize()
    if not quiet:
        print(f"probe first: CUPTI set up before the timed replays ({t.result.kernels_seen} kernel "
              f"recorded)", flush=True)


def ballast_of(gib):
    """Diagnostic (TB_CHECK_BALLAST_GIB): `gib` GiB in 1 GiB blocks, each written once, kept
    alive for the whole run and never read again."""
    try:
        blocks = [torch.ones(2**28, device="cuda") for _ in range(gib)]
    except torch.cuda.OutOfMemoryError:
        print(f"TB_CHECK_BALLAST_GIB={gib}: more than the GPU's free memory", file=sys.stderr)
        sys.exit(2)
    torch.cuda.synchronize()
    if blocks:
        print(f"ballast: {len(blocks)} GiB kept; {torch.cuda.memory_reserved() / 2**30:.1f} GiB "
              f"reserved", flush=True)
    return blocks


def cases_to_check(runs):
    """The torch-compile cases of the runs, those TB_CHECK_CASES names if set (an id it names
    that no run has exits 2)."""
    cases = [(case, run["run"]["seed"]) for run in runs for case in run["cases"]
             if case.get("provider") == "torch-compile"]
    only = set(filter(None, os.environ.get("TB_CHECK_CASES", "").split(",")))
    unknown = only - {case["id"] for case, _ in cases}
    if unknown:
        print(f"TB_CHECK_CASES: no torch-compile case {', '.join(sorted(unknown))} in the runs given",
              file=sys.stderr)
        sys.exit(2)
    return [(case, seed) for case, seed in cases if not only or case["id"] in only]


def main(argv):
    if len(argv) < 3:
        print("usage: python3 graph_replay_check.py OUT.json RESULTS_DIR...", file=sys.stderr)
        return 2
    out, dirs = argv[1], argv[2:]
    # every setting checked before anything is loaded or timed
    cycles = sleep_cycles()
    recapture_times = recapture_count()
    ballast_gib = whole_number("TB_CHECK_BALLAST_GIB", "0")
    when = probe_when()
    if when is not None and not os.environ.get("TB_CHECK_TIMING_LIB"):
        print(f"TB_CHECK_PROBE_FIRST={when} needs TB_CHECK_TIMING_LIB", file=sys.stderr)
        return 2
    cases = cases_to_check([load(d) for d in dirs])
    torch.cuda.set_stream(torch.cuda.Stream())  # the worker's arrangement: one stream of its own
    lib = None
    if os.environ.get("TB_CHECK_TIMING_LIB"):
        from tilebench import timing  # python/ is on the path (above)
        lib = timing.load(os.environ["TB_CHECK_TIMING_LIB"])
    if when is not None:
        probe_first(lib)
        PROBE_AT[:] = [lib, when]
        described = {"1": "once, first", "capture": "first and before each mode's capture",
                     "replay": "first and before each mode's timed replays"}
        print(f"probe sessions: {described[when]}", flush=True)
    ballast = ballast_of(ballast_gib)  # noqa: F841 (held until the end, never read)
    checked = []
    for case, seed in cases:
        try:
            result = check_case(case, seed, cycles, lib, recapture_times)
        except ValueError as e:  # the regenerated inputs are not tilebench's
            print(f"FAIL {case['id']}: {e}", file=sys.stderr)
            return 1
        if result is not None:
            checked.append(result)
    rows = []
    while checked:  # each case's sets are let go once its profile is taken
        row, profiled = checked.pop(0)
        add_profile(row, *profiled)
        del profiled
        print(line(row), flush=True)
        rows.append(row)
    failures = sum(not r["within_5_percent"] for r in rows)
    with open(out + ".partial", "w") as f:  # renamed once whole: no half-written OUT.json
        json.dump({"tolerance": TOLERANCE, "replays": REPLAYS, "rows": rows,
                   "inputs": "tilebench's own (docs/inputs.md, each run's seed), verified on a sample"},
                  f, indent=2)
    os.replace(out + ".partial", out)
    print(f"{len(rows) - failures} passed, {failures} failed")
    return 0 if failures == 0 and rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
