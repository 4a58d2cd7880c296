"""tests/gpu/graph_dot_summary.py on Graphviz text in the layout cudaGraphDebugDotPrint writes
(through torch's CUDAGraph.debug_dump: a cluster per graph, a record label per node naming its
type, a kernel's function and launch shape as name\<\<\<grid,block,shared\>\>\>, its topoId and
handles; an excerpt of a real H200 dump below): nodes counted by type, kernels by launch shape, a
call's launch sequence, a worker's and a check's capture of one case compared, the output
addresses both captures record (*-addresses.json) set side by side; bad usage exits 2. Also the
address facts (python/tilebench/graph_addresses.py, which the torch worker and
tests/gpu/graph_replay_check.py import), the check's settings, graph_regime.py's verdict and
settings, and graph_gaps_summary.py, without torch."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "gpu", "graph_dot_summary.py")
CHECK = os.path.join(HERE, "gpu", "graph_replay_check.py")
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from tilebench import graph_addresses, torch_worker  # noqa: E402 (standard library only until main() imports torch)

# The first call (three kernels) of the worker's graph of layernorm/8x65536, 64 calls, from
# scripts/gpu.sh replay-dumps on an H200 (worker-layernorm-8x65536-64-0.dot), verbatim but
# for the 189 nodes cut after these three.
REAL_EXCERPT = r"""digraph dot {
subgraph cluster_10 {
label="graph_10" graph[style="dashed"];
"graph_10_node_0"[style="bold" shape="record" label="{KERNEL
| {ID | 0 (topoId: 191) | triton_red_fused_native_layer_norm_0\<\<\<64,512,192\>\>\>}
| {{node handle | func handle} | {0x000000002C73F958 | 0x000000002CA48AC0}}
| {accessPolicyWindow | {base_ptr | num_bytes | hitRatio | hitProp | missProp} | {0x0000000000000000 | 0 | 0.000000 | N | N}}
| {cooperative | 0}
| {priority | 0}
}"];

"graph_10_node_1"[style="bold" shape="record" label="{KERNEL
| {ID | 1 (topoId: 190) | triton_per_fused_native_layer_norm_1\<\<\<1,64,32\>\>\>}
| {{node handle | func handle} | {0x000000002C73F1F0 | 0x000000002CB91630}}
| {accessPolicyWindow | {base_ptr | num_bytes | hitRatio | hitProp | missProp} | {0x0000000000000000 | 0 | 0.000000 | N | N}}
| {cooperative | 0}
| {priority | 0}
}"];

"graph_10_node_2"[style="bold" shape="record" label="{KERNEL
| {ID | 2 (topoId: 189) | triton_poi_fused_native_layer_norm_2\<\<\<512,128,0\>\>\>}
| {{node handle | func handle} | {0x000000002C73EA88 | 0x000000002D466340}}
| {accessPolicyWindow | {base_ptr | num_bytes | hitRatio | hitProp | missProp} | {0x0000000000000000 | 0 | 0.000000 | N | N}}
| {cooperative | 0}
| {priority | 0}
}"];

"graph_10_node_0" -> "graph_10_node_1" [headlabel=0];
"graph_10_node_1" -> "graph_10_node_2" [headlabel=0];
}
}
"""


def kernel(i, name, grid, block=32, shared=0, graph=1):
    """A kernel node exactly as the runtime writes one (REAL_EXCERPT), topoId counting down."""
    return (f'"graph_{graph}_node_{i}"[style="bold" shape="record" label="{{KERNEL\n'
            f'| {{ID | {i} (topoId: {99 - i}) | {name}\\<\\<\\<{grid},{block},{shared}\\>\\>\\>}}\n'
            f'| {{{{node handle | func handle}} | {{0x{0x1000 + i:016X} | 0x00000000290E8950}}}}\n'
            f'| {{accessPolicyWindow | {{base_ptr | num_bytes | hitRatio | hitProp | missProp}} | '
            f'{{0x0000000000000000 | 0 | 0.000000 | N | N}}}}\n'
            f'| {{cooperative | 0}}\n| {{priority | 0}}\n}}"];\n\n')


def dot(grids, memset=False, names=None):
    names = names or ["triton_red_fused_0"] * len(grids)
    body = "".join(kernel(i, name, grid) for i, (name, grid) in enumerate(zip(names, grids)))
    if memset:
        body += ('"graph_1_node_9"[style="bold" shape="record" label="{MEMSET\n| {ID | 9 (topoId: 90)}\n'
                 '| {{node handle} | {0x0000000000000009}}\n| {value | 0}\n}"];\n\n')
    edges = "".join(f'"graph_1_node_{i}" -> "graph_1_node_{i + 1}" [headlabel=0];\n'
                    for i in range(len(grids) - 1))
    return ('digraph dot {\nsubgraph cluster_1 {\nlabel="graph_1" graph[style="dashed"];\n'
            + body + edges + "}\n}\n")


MIB4 = 4 << 20


def kept_outputs(sets, calls, base=0x7F0000000000):
    """What the caching allocator does with results kept per set in one capture: a fresh block
    for each set's first call, one more, then each call the block the call before freed."""
    blocks, held, free, out = [], {}, [], []
    for k in range(calls):
        s = k % sets
        block = free.pop() if free else base + len(blocks) * MIB4
        if block not in blocks:
            blocks.append(block)
        out.append((block, MIB4))
        if s in held:
            free.append(held[s])
        held[s] = block
    return out


class GraphDotSummaryTest(unittest.TestCase):
    def run_on(self, files):
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in files.items():
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(text)
            return subprocess.run([sys.executable, SCRIPT, tmp], capture_output=True, text=True)

    def test_real_excerpt(self):
        r = self.run_on({"worker-layernorm-8x65536-64-0.dot": REAL_EXCERPT})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("worker-layernorm-8x65536-64-0.dot: 3 nodes (KERNEL 3), 2 edges (a chain), "
                      "topoId 189..191, 3 distinct node handles", r.stdout)
        self.assertIn("1 x triton_red_fused_native_layer_norm_0 grid 64 block 512 shared 192 "
                      "(1 func handle)", r.stdout)
        self.assertIn("1 x triton_per_fused_native_layer_norm_1 grid 1 block 64 shared 32", r.stdout)
        self.assertIn("1 x triton_poi_fused_native_layer_norm_2 grid 512 block 128 shared 0", r.stdout)
        self.assertIn("order: 1 x [triton_red_fused_native_layer_norm_0, "
                      "triton_per_fused_native_layer_norm_1, triton_poi_fused_native_layer_norm_2]",
                      r.stdout)
        self.assertNotIn("None", r.stdout)

    def test_counts_and_comparison(self):
        r = self.run_on({"worker-softmax-8x65536-64-0.dot": dot([8, 8, 32]),
                         "check-softmax-8x65536-kept-64.dot": dot([8, 8, 32], memset=True)})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("worker-softmax-8x65536-64-0.dot: 3 nodes (KERNEL 3), 2 edges (a chain)", r.stdout)
        self.assertIn("check-softmax-8x65536-kept-64.dot: 4 nodes (KERNEL 3, MEMSET 1), 2 edges (not a chain)",
                      r.stdout)
        self.assertIn("2 x triton_red_fused_0 grid 8 block 32 shared 0", r.stdout)
        self.assertIn("softmax-8x65536: node kinds differ, kernels and launch shapes the same", r.stdout)
        self.assertIn("no *-addresses.json beside the graphs", r.stdout)

    def test_other_launch_shapes_or_order_differ(self):
        r = self.run_on({"worker-layernorm-1024x1024-64-0.dot": dot([1024]),
                         "check-layernorm-1024x1024-kept-64.dot": dot([512])})
        self.assertIn("layernorm-1024x1024: node kinds the same, kernels and launch shapes differ",
                      r.stdout)
        r = self.run_on({"worker-softmax-8x65536-64-0.dot": dot([8, 64], names=["a_0", "b_1"]),
                         "check-softmax-8x65536-kept-64.dot": dot([64, 8], names=["b_1", "a_0"])})
        self.assertIn("softmax-8x65536: node kinds the same, kernels and launch shapes the same, "
                      "order differs, edges the same (worker against check, 1 x 1 graphs)", r.stdout)

    def test_launch_shapes_in_three_dimensions(self):
        r = self.run_on({"check-gemm-64x64-kept-1.dot": dot(["(8,2,1)"])})
        self.assertIn("1 x triton_red_fused_0 grid 8,2,1 block 32 shared 0", r.stdout)

    def test_address_facts_side_by_side(self):
        def facts(tool, mode, outputs, sets=30):
            return json.dumps({"tool": tool, "case": "softmax-1024x1024", "mode": mode, "graph": 0,
                               "sets": sets, "first_set": 0, "input_sets_read": min(sets, 64),
                               "input_bytes_read": min(sets, 64) * MIB4, "l2_bytes": 60 << 20,
                               **graph_addresses.output_address_facts(outputs),
                               "outputs": [{"call": k, "address": a, "bytes": n}
                                           for k, (a, n) in enumerate(outputs)]})
        dropped = [(0x1000 + (k % 2) * MIB4, MIB4) for k in range(64)]
        r = self.run_on({"worker-softmax-1024x1024-64-0.dot": dot([1024]),
                         "check-softmax-1024x1024-kept-64.dot": dot([1024]),
                         "worker-softmax-1024x1024-64-0-addresses.json": facts("worker", "worker",
                                                                              kept_outputs(30, 64)),
                         "check-softmax-1024x1024-kept-64-addresses.json": facts("check", "kept",
                                                                                 kept_outputs(30, 64)),
                         "check-softmax-1024x1024-dropped-64-addresses.json": facts("check", "dropped",
                                                                                    dropped)})
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        head = lines.index("softmax-1024x1024 output addresses a graph (L2 60.0 MiB):")
        self.assertEqual(lines[head + 1],
                         "  worker graph 0: 64 calls over 30 of 30 sets (first 0; inputs 120.0 MiB), "
                         "31 distinct output addresses (124.0 MiB), 64 calls write bytes another call "
                         "of the graph writes, fewest calls between two writes of one address 31; "
                         "outputs aligned to 4 MiB")
        self.assertTrue(lines[head + 2].startswith("  check dropped: 64 calls"), lines[head + 2])
        self.assertIn("2 distinct output addresses (8.0 MiB), 64 calls write bytes another call of "
                      "the graph writes, fewest calls between two writes of one address 2", lines[head + 2])
        self.assertIn("check kept: 64 calls over 30 of 30 sets (first 0; inputs 120.0 MiB), 31 distinct",
                      lines[head + 3])

    def test_bad_usage_exits_2(self):
        self.assertEqual(self.run_on({}).returncode, 2)  # a folder without .dot files
        r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("graph_dot_summary.py DOTS_DIR", r.stderr)


class OutputAddressFactsTest(unittest.TestCase):
    """The facts the worker (TILEBENCH_TORCH_GRAPH_DUMP) and the check record per graph
    (python/tilebench/graph_addresses.py, which both import)."""

    def test_kept_dropped_and_distinct(self):
        cases = {
            # 64 calls over 30 sets, results kept per set (softmax/1024x1024 on the H200):
            # 31 blocks, each written twice or three times, 31 calls apart
            "kept": (kept_outputs(30, 64), 31, 31 * MIB4, 64, 31),
            # dropped at once: the call's output freed as the next returns, two blocks in turn
            "dropped": ([(0x1000 + (k % 2) * MIB4, MIB4) for k in range(64)], 2, 2 * MIB4, 64, 2),
            # a preallocated output per set, more sets than calls: nothing written twice
            "distinct": ([(0x1000 + k * MIB4, MIB4) for k in range(8)], 8, 8 * MIB4, 0, None),
            # overlapping, not equal: the second starts inside the first
            "overlap": ([(0, 100), (50, 100), (400, 10)], 3, 160, 2, None),
            "none": ([], 0, 0, 0, None),
        }
        for name, (outputs, distinct, union, sharing, gap) in cases.items():
            with self.subTest(case=name):
                f = graph_addresses.output_address_facts(outputs)
                self.assertEqual(f["calls"], len(outputs))
                self.assertEqual(f["distinct_output_addresses"], distinct)
                self.assertEqual(f["distinct_output_bytes"], union)
                self.assertEqual(f["calls_sharing_output_bytes"], sharing)
                self.assertEqual(f["fewest_calls_between_writes_of_one_address"], gap)
        # the worker and the check take the same function
        self.assertIs(torch_worker.output_address_facts, graph_addresses.output_address_facts)

    def test_alignment(self):
        # an input 4 KiB into its allocation (the worker's guard zone) against one at a block's start
        self.assertEqual(graph_addresses.alignment([0x7F0000200000 + 4096, 0x7F0000600000 + 4096]), 4096)
        self.assertEqual(graph_addresses.alignment([0x7F0000200000, 0x7F0000600000]), 2 << 20)
        self.assertIsNone(graph_addresses.alignment([]))
        self.assertEqual(graph_addresses.input_address_facts([[0x1000, 0x3000], [0x1000, 0x5000]]),
                         {"distinct_input_addresses": 3, "input_alignment_bytes": 4096})

    def test_kept_model_of_the_allocator(self):
        # 8x65536 (60 sets of 2 MiB outputs): 61 blocks, the last 3 calls rewrite 3 of them
        f = graph_addresses.output_address_facts(kept_outputs(60, 64))
        self.assertEqual((f["distinct_output_addresses"], f["calls_sharing_output_bytes"]), (61, 6))


class RecordingTest(unittest.TestCase):
    def test_records_integers_only_and_returns_the_result(self):
        class FakeTensor:
            def __init__(self, address):
                self.address = address

            def data_ptr(self):
                return self.address

            def numel(self):
                return 1024

            def element_size(self):
                return 4

        outputs, results = [], [FakeTensor(0x100), FakeTensor(0x2000)]
        call = torch_worker.recording(lambda s: results[s], outputs)
        self.assertIs(call(1), results[1])
        self.assertIs(call(0), results[0])
        self.assertIsNone(torch_worker.recording(lambda s: None, outputs)(0))  # not a tensor: not recorded
        self.assertEqual(outputs, [(0x2000, 4096), (0x100, 4096)])


class FakeAllocator:
    """A caching allocator's essentials for one block size: a free list per pool, a block back
    on its pool's list the moment its last tensor goes (CPython frees at once); allocations in a
    capture come from the graph's own pool, as torch's private pools do."""
    def __init__(self):
        self.pools = {"eager": ([], [0x10000000]), }
        self.current = "eager"

    def alloc(self, nbytes):
        free, top = self.pools[self.current]
        if free:
            return FakeTensor(self, self.current, free.pop(), nbytes)
        address = top[0]
        top[0] += nbytes
        return FakeTensor(self, self.current, address, nbytes)


class FakeTensor:
    def __init__(self, allocator, pool, address, nbytes):
        self.allocator, self.pool, self.address, self.nbytes = allocator, pool, address, nbytes

    def __del__(self):
        self.allocator.pools[self.pool][0].append(self.address)

    def data_ptr(self):
        return self.address

    def numel(self):
        return self.nbytes // 4

    def element_size(self):
        return 4


class FakeTorch:
    """torch as torch_worker.Worker.graph_of uses it, on no GPU."""
    def __init__(self, allocator):
        torch = self
        self.captures = 0
        self.capture_streams = []  # the stream= each capture was given
        self.current = object()  # the stream current_stream() answers

        class Graph:
            def __init__(self, keep_graph=False):
                self.keep_graph = keep_graph

            def enable_debug_mode(self):
                pass

            def instantiate(self):
                pass

            def debug_dump(self, path):
                with open(path, "w") as f:
                    f.write("digraph dot {\n}\n")

            def replay(self):
                pass

        class GraphContext:
            def __init__(self, graph, stream=None):
                self.pool = f"graph-{torch.captures}"
                torch.captures += 1
                torch.capture_streams.append(stream)

            def __enter__(self):
                allocator.pools[self.pool] = ([], [0x70000000 + 0x10000000 * torch.captures])
                allocator.current = self.pool

            def __exit__(self, *exc):
                allocator.current = "eager"

        class Cuda:
            CUDAGraph = Graph
            graph = GraphContext

            @staticmethod
            def is_available():
                return False

            @staticmethod
            def current_stream():
                return torch.current

        self.cuda = Cuda


class WorkerAddressDumpTest(unittest.TestCase):
    """The worker's graph_of with TILEBENCH_TORCH_GRAPH_DUMP set (torch faked: no GPU here):
    one <dot name>-addresses.json per captured graph; recording keeps no output alive (the
    fake allocator reuses a freed block, so a kept reference would show as more addresses)."""
    def worker(self, sets, out_bytes=MIB4):
        allocator = FakeAllocator()
        w = torch_worker.Worker(FakeTorch(allocator))
        w.label = "softmax-1024x1024"
        w.sets = [{"x": allocator.alloc(MIB4)} for _ in range(sets)]
        w.storages = [{"x": s["x"]} for s in w.sets]
        for s in w.sets:  # the eager samples' results, as the worker's sets hold them
            s["result"] = allocator.alloc(out_bytes)
        w.fn = lambda s: allocator.alloc(out_bytes)
        return w

    def dump(self, sets, calls, cursor=0):
        w = self.worker(sets)
        w.cursor = cursor
        fn = w.fn
        with tempfile.TemporaryDirectory() as tmp:
            saved, torch_worker.GRAPH_DUMP = torch_worker.GRAPH_DUMP, tmp
            try:
                w.graph_of(calls)
            finally:
                torch_worker.GRAPH_DUMP = saved
            self.assertIs(w.fn, fn)  # the recording wrapper is gone after the capture
            names = sorted(os.listdir(tmp))
            facts = {}
            for name in names:
                if name.endswith("-addresses.json"):
                    with open(os.path.join(tmp, name)) as f:
                        facts[name] = json.load(f)
            return names, facts

    def test_graphs_captured_on_the_stream_they_replay_on(self):
        """Every capture names the current stream, the one replays run on: a graph captured on
        torch's own capture stream slows down once a third exists (docs/method.md §2.3)."""
        w = self.worker(300)
        w.graph_of(16)  # as many graphs as a pass over the sets takes
        self.assertGreater(w.torch.captures, 2)
        self.assertEqual(w.torch.capture_streams, [w.torch.current] * w.torch.captures)

    def test_one_graph_of_64_calls_over_30_sets(self):
        names, facts = self.dump(30, 64, cursor=7)
        self.assertEqual(names, ["worker-softmax-1024x1024-64-0-addresses.json",
                                 "worker-softmax-1024x1024-64-0.dot"])
        f = facts["worker-softmax-1024x1024-64-0-addresses.json"]
        self.assertEqual((f["tool"], f["case"], f["graph"], f["calls"], f["sets"], f["first_set"]),
                         ("worker", "softmax-1024x1024", 0, 64, 30, 7))
        self.assertEqual((f["input_sets_read"], f["input_bytes_read"], f["l2_bytes"]), (30, 30 * MIB4, 0))
        self.assertEqual(f["distinct_output_addresses"], 31)
        self.assertEqual(f["distinct_output_bytes"], 31 * MIB4)
        self.assertEqual(f["fewest_calls_between_writes_of_one_address"], 31)
        self.assertEqual([o["set"] for o in f["outputs"][:3]], [7, 8, 9])
        self.assertEqual(f["outputs"][0]["inputs"], [0x10000000 + 7 * MIB4])  # set 7's x
        self.assertEqual((f["distinct_input_addresses"], f["input_alignment_bytes"]), (30, MIB4))
        self.assertEqual(f["output_alignment_bytes"], MIB4)
        self.assertEqual(len(f["outputs"]), 64)

    def test_graphs_that_walk_the_sets(self):
        names, facts = self.dump(5, 2)
        self.assertEqual(len(facts), 3)  # ceil(5 / 2) graphs
        self.assertEqual([facts[f"worker-softmax-1024x1024-2-{i}-addresses.json"]["first_set"]
                          for i in range(3)], [0, 2, 4])
        for f in facts.values():
            self.assertEqual((f["distinct_output_addresses"], f["calls_sharing_output_bytes"]), (2, 0))

    def test_nothing_written_without_the_variable(self):
        w = self.worker(4)
        fn = w.fn
        with tempfile.TemporaryDirectory() as tmp:
            saved, torch_worker.GRAPH_DUMP = torch_worker.GRAPH_DUMP, None
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                w.graph_of(4)
            finally:
                torch_worker.GRAPH_DUMP = saved
                os.chdir(cwd)
            self.assertEqual(os.listdir(tmp), [])
        self.assertIs(w.fn, fn)


def load_check_with(fake):
    """tests/gpu/graph_replay_check.py imported with `fake` as torch (no torch, no GPU here)."""
    import importlib.util
    import types
    modules = {"torch": fake, "torch.nn": types.ModuleType("torch.nn"),
               "torch.nn.functional": types.ModuleType("torch.nn.functional")}
    modules["torch.nn"].functional = modules["torch.nn.functional"]
    fake.nn = modules["torch.nn"]
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        spec = importlib.util.spec_from_file_location("graph_replay_check_under_test", CHECK)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return module


class CheckAddressesTest(unittest.TestCase):
    """graph_replay_check.graph_per_call_ns's address facts in each mode, torch faked: the
    allocator model gives kept and prefilled 31 output blocks (64 calls, 30 sets), dropped 2."""
    def setUp(self):
        import types
        self.allocator = FakeAllocator()
        fake = FakeTorch(self.allocator)
        cuda = fake.cuda

        class Stream:
            def wait_stream(self, other):
                pass

        entered = self.streams_entered = []  # every torch.cuda.stream(s) the check enters

        class Nothing:
            def __init__(self, *args, **kwargs):
                entered.append(args)

            def __enter__(self):
                pass

            def __exit__(self, *exc):
                pass

        class Event:
            def __init__(self, enable_timing=False):
                pass

            def record(self):
                pass

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return 0.25  # ms

        cuda.Stream, cuda.stream, cuda.Event = Stream, Nothing, Event
        current = fake.current = Stream()
        cuda.current_stream = staticmethod(lambda: current)
        cuda.synchronize = staticmethod(lambda: None)
        cuda._sleep = staticmethod(lambda cycles: None)
        cuda.get_device_properties = staticmethod(lambda i: types.SimpleNamespace(L2_cache_size=60 << 20))
        self.check = load_check_with(fake)

    def sets(self, count):
        return [{"x": self.allocator.alloc(MIB4)} for _ in range(count)]

    def test_modes(self):
        fn = lambda s: self.allocator.alloc(MIB4)  # noqa: E731
        sets = self.sets(30)
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["TB_CHECK_GRAPH_DUMP"] = tmp
            try:
                kept = self.check.graph_per_call_ns(fn, sets, 64, 1000, label="softmax-1024x1024-kept")
                dropped = self.check.graph_per_call_ns(fn, sets, 64, 1000, keep=False, mode="dropped",
                                                       label="softmax-1024x1024-dropped")
                prefilled = self.check.graph_per_call_ns(fn, sets, 64, 1000, prefill=True, mode="prefilled",
                                                         label="softmax-1024x1024-prefilled")
            finally:
                del os.environ["TB_CHECK_GRAPH_DUMP"]
            with open(os.path.join(tmp, "check-softmax-1024x1024-dropped-64-addresses.json")) as f:
                dumped = json.load(f)
        self.assertEqual(kept[0], 0.25 * 1e6 / 64)
        # every graph captured on the stream it replays on, no side stream ever entered (its
        # kernels would slow every later replay: docs/method.md §2.3)
        fake = self.check.torch
        self.assertEqual(fake.capture_streams, [fake.current] * fake.captures)
        self.assertEqual(self.streams_entered, [])
        facts = {name: r[3] for name, r in (("kept", kept), ("dropped", dropped), ("prefilled", prefilled))}
        for name, graphs in facts.items():
            self.assertEqual(len(graphs), 1, name)
            self.assertEqual((graphs[0]["mode"], graphs[0]["calls"], graphs[0]["sets"]), (name, 64, 30))
        self.assertEqual(facts["kept"][0]["first_set"], 3)  # after the three warm-up calls
        self.assertEqual(facts["prefilled"][0]["first_set"], 0)  # after one pass over the sets
        self.assertEqual([facts[m][0]["distinct_output_addresses"] for m in ("kept", "dropped", "prefilled")],
                         [31, 2, 31])
        self.assertEqual(facts["dropped"][0]["fewest_calls_between_writes_of_one_address"], 2)
        self.assertEqual((dumped["tool"], dumped["case"], dumped["mode"], dumped["l2_bytes"]),
                         ("check", "softmax-1024x1024", "dropped", 60 << 20))
        self.assertEqual(len(dumped["outputs"]), 64)
        self.assertEqual(dumped["first_set"], 3)
        self.assertEqual(dumped["outputs"][0]["inputs"], [sets[3]["x"].data_ptr()])
        self.assertEqual(dumped["distinct_input_addresses"], 30)
        clause = self.check.addresses_clause(facts)
        self.assertEqual(clause, "outputs a graph: kept 31 addresses 124.0 MiB, 64 of 64 calls share, "
                                 "rewritten 31 calls apart, dropped 2 addresses 8.0 MiB, 64 of 64 calls "
                                 "share, rewritten 2 calls apart, prefilled 31 addresses 124.0 MiB, "
                                 "64 of 64 calls share, rewritten 31 calls apart")

    def test_printed_line(self):
        facts = {"kept": [self.check.output_address_facts([(0, MIB4), (MIB4, MIB4)])]}
        facts["kept"][0]["calls"] = 2
        row = {"case": "softmax/1024x1024/packed/torch-compile", "within_5_percent": False,
               "tilebench_graph_ns": 3936.0, "independent_graph_ns": 4296.0, "ratio": 0.916,
               "independent_results_dropped_ns": 3896.0, "independent_every_set_prefilled_ns": 4291.0,
               "independent_inputs_offset_as_worker_ns": 4300.0,
               "independent_kernel_sum_per_call_ns": 3961.0, "independent_profiled_kernels_per_call": 1.0,
               "tilebench_graph_probe_kernel_sum_per_call_ns": 3915.0, "independent_recaptured_ns": [],
               "independent_graphs_timed_by_tilebench_hold_ns": None,
               "tilebench_graph_probe_kernels_per_call": 1.0, "independent_kernels_per_call": 1,
               "independent_output_addresses": facts}
        text = self.check.line(row)
        self.assertTrue(text.startswith("FAIL softmax/1024x1024/packed/torch-compile: "
                                        "tilebench graph 3.936 µs"), text)
        self.assertIn("; inputs 4 KiB into larger allocations, as the worker's: 4.300 µs;", text)
        self.assertTrue(text.endswith("; outputs a graph: kept 2 addresses 8.0 MiB, 0 of 2 calls share, "
                                      "none rewritten)"), text)



class ProbeFirstTest(unittest.TestCase):
    """TB_CHECK_PROBE_FIRST=1 asks for the timing library: without TB_CHECK_TIMING_LIB the
    check stops before it times anything (exit 2); with a library it opens one probe session
    around one kernel before any case."""

    def setUp(self):
        self.check = load_check_with(FakeTorch(FakeAllocator()))
        self.saved = {k: os.environ.get(k) for k in ("TB_CHECK_PROBE_FIRST", "TB_CHECK_TIMING_LIB")}

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_without_the_library_exits_2(self):
        os.environ["TB_CHECK_PROBE_FIRST"] = "1"
        os.environ.pop("TB_CHECK_TIMING_LIB", None)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "check.json")
            self.assertEqual(self.check.main(["check", out, tmp]), 2)
            self.assertFalse(os.path.exists(out))

    def test_one_probe_session_first(self):
        sessions = []

        class Session:
            def __init__(self, stream, capacity):
                sessions.append(("probe", capacity))
                self.result = type("R", (), {"kernels_seen": 1})()

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                sessions.append("end")

            def declare_calls(self, n):
                sessions.append(("calls", n))

        class Lib:
            def probe(self, stream, capacity):
                return Session(stream, capacity)

        torch = self.check.torch
        torch.ones = lambda n, device=None: type("T", (), {"add_": lambda self, v: sessions.append("kernel")})()
        torch.cuda.current_stream = lambda: type("S", (), {"cuda_stream": 0})()
        torch.cuda.synchronize = lambda: None
        self.check.probe_first(Lib())
        self.assertEqual(sessions, [("probe", 16), "kernel", ("calls", 1), "end"])


class CheckSettingsTest(unittest.TestCase):
    """graph_replay_check's settings from the environment: a value that is not a whole number,
    or a case TB_CHECK_CASES names that no run has, exits 2 before anything is timed, and no
    OUT.json is written; TB_CHECK_CASES keeps the cases it names."""

    def setUp(self):
        self.check = load_check_with(FakeTorch(FakeAllocator()))
        names = ("TB_CHECK_BALLAST_GIB", "TB_CHECK_RECAPTURES", "TB_CHECK_SLEEP_CYCLES",
                 "TB_CHECK_CASES", "TB_CHECK_PROBE_FIRST", "TB_CHECK_TIMING_LIB")
        self.saved = {k: os.environ.pop(k, None) for k in names}

    def tearDown(self):
        for k, v in self.saved.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v

    def test_numbers(self):
        for name, value in (("TB_CHECK_BALLAST_GIB", "x"), ("TB_CHECK_BALLAST_GIB", "-1"),
                            ("TB_CHECK_RECAPTURES", "2.5"), ("TB_CHECK_SLEEP_CYCLES", "0")):
            os.environ[name] = value
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "check.json")
                with self.assertRaises(SystemExit) as stopped:
                    self.check.main(["check", out, tmp])
                self.assertEqual(stopped.exception.code, 2, name)
                self.assertEqual(os.listdir(tmp), [])
            del os.environ[name]
        os.environ["TB_CHECK_BALLAST_GIB"] = "3"
        self.assertEqual(self.check.whole_number("TB_CHECK_BALLAST_GIB", "0"), 3)

    def test_cases(self):
        runs = [{"run": {"seed": 1}, "cases": [
            {"id": "softmax/64x64/packed/torch-compile", "provider": "torch-compile"},
            {"id": "softmax/64x64/packed/torch", "provider": "torch"},
            {"id": "rmsnorm/64x64/packed/torch-compile", "provider": "torch-compile"}]}]
        ids = lambda cases: [c["id"] for c, _ in cases]  # noqa: E731
        self.assertEqual(ids(self.check.cases_to_check(runs)),
                         ["softmax/64x64/packed/torch-compile", "rmsnorm/64x64/packed/torch-compile"])
        os.environ["TB_CHECK_CASES"] = "rmsnorm/64x64/packed/torch-compile"
        self.assertEqual(ids(self.check.cases_to_check(runs)), ["rmsnorm/64x64/packed/torch-compile"])
        for unknown in ("softmax/64x64/packed/torch", "gelu_add/1x1/packed/torch-compile"):
            os.environ["TB_CHECK_CASES"] = unknown
            with self.assertRaises(SystemExit) as stopped:
                self.check.cases_to_check(runs)
            self.assertEqual(stopped.exception.code, 2, unknown)


def load_regime():
    """tests/gpu/graph_regime.py imported with an empty module as torch (no torch, no GPU here)."""
    import importlib.util
    import types
    saved = sys.modules.get("torch")
    sys.modules["torch"] = types.ModuleType("torch")
    try:
        spec = importlib.util.spec_from_file_location(
            "graph_regime_under_test", os.path.join(HERE, "gpu", "graph_regime.py"))
        regime = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(regime)
    finally:
        if saved is None:
            sys.modules.pop("torch")
        else:
            sys.modules["torch"] = saved
    return regime


class GraphRegimeVerdictTest(unittest.TestCase):
    """graph_regime.py's GRAPH_REGIME_EXPECT=back-to-back verdict (torch faked: no GPU here):
    every timing within GAP_TOLERANCE_NS a call of the kernels' time passes; one timing in the
    slow regime (~340 ns above) fails, naming its step. A setting it does not take exits 2
    before anything runs, and no OUT.json is written."""

    def test_bad_settings(self):
        regime = load_regime()
        for name, value in (("GRAPH_REGIME_STREAM", "own"), ("GRAPH_REGIME_EXPECT", "fast"),
                            ("GRAPH_REGIME_COMPILE", "yes"), ("GRAPH_REGIME_CAPTURE", "")):
            with mock.patch.dict(os.environ, {name: value}), tempfile.TemporaryDirectory() as tmp, \
                    contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(regime.main(["graph_regime.py", os.path.join(tmp, "o.json"), "again"]), 2)
                self.assertEqual(os.listdir(tmp), [])
            self.assertIn(f"{name}={value!r}", err.getvalue())
        with mock.patch.dict(os.environ, {"GRAPH_REGIME_STREAM": "dedicated"}):
            self.assertIsNone(regime.settings_error())

    def test_cupy_flags(self):
        """graph_regime_cupy.py refuses GRAPH_REGIME_FLAGS that is not a whole number (cupy faked)."""
        import importlib.util
        import types
        fake = types.ModuleType("cupy")
        fake.RawKernel = lambda *args: None
        with mock.patch.dict(sys.modules, {"cupy": fake}):
            spec = importlib.util.spec_from_file_location(
                "graph_regime_cupy_under_test", os.path.join(HERE, "gpu", "graph_regime_cupy.py"))
            cupy_regime = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(cupy_regime)
        for value in ("nine", "-1", ""):
            with mock.patch.dict(os.environ, {"GRAPH_REGIME_FLAGS": value}), \
                    tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(cupy_regime.main(["graph_regime_cupy.py", os.path.join(tmp, "o.json")]), 2)
                self.assertEqual(os.listdir(tmp), [])
            self.assertIn("GRAPH_REGIME_FLAGS", err.getvalue())

    def test_verdict(self):
        regime = load_regime()
        fast = [{"step": "captured", "kept_ns": 6383.0}, {"step": "side", "kept_ns": 6390.0}]
        slow = fast + [{"step": "capture16_nowarm", "kept_ns": 6729.0}]
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(regime.gaps_verdict(fast, 6391.0), 0)
        self.assertIn("PASS", out.getvalue())
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(regime.gaps_verdict(slow, 6391.0), 1)
        self.assertIn("FAIL after capture16_nowarm: 6729 ns a call, 338 above", out.getvalue())


class GraphGapsSummaryTest(unittest.TestCase):
    """tests/gpu/graph_gaps_summary.py on a results folder: a line per case with a graph mode
    (control, kernel time, time between kernels, the flag) and a count per provider; a folder
    without results, or a case whose graph mode is malformed, exits 2."""

    def run_summary(self, doc):
        with tempfile.TemporaryDirectory() as tmp:
            if doc is not None:
                with open(os.path.join(tmp, "results.json"), "w") as f:
                    json.dump(doc, f)
            return subprocess.run([sys.executable, os.path.join(HERE, "gpu", "graph_gaps_summary.py"), tmp],
                                  capture_output=True, text=True)

    def case(self, provider, control, kernel, kernels, flags=()):
        return {"id": f"softmax/37x769/packed/{provider}", "provider": provider,
                "device": {"flags": list(flags), "throughput": {"batch_modes": {"graph": {
                    "control": {"per_call_summary_ns": {"p50": control}},
                    "probe": {"kernels": [64 * kernels], "calls_per_sample": 64,
                              "kernel_per_call_summary_ns": {"p50": kernel}}}}}}}

    def test_lines_and_counts(self):
        doc = {"cases": [self.case("torch-compile", 2416.0, 2040.0, 1, ["graph gaps: replays ..."]),
                         self.case("torch", 6528.0, 5823.0, 2), {"id": "eager only", "provider": "native"}]}
        r = self.run_summary(doc)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("softmax/37x769/packed/torch-compile: graph 2416 ns a call, kernels 2040 (1 a call), "
                      "between kernels 376 ns a kernel, graph gaps flagged", r.stdout)
        self.assertIn("between kernels 352 ns a kernel\n", r.stdout)  # (6528 - 5823) / 2
        self.assertIn("graph gaps flagged: torch 0 of 1", r.stdout)
        self.assertIn("graph gaps flagged: torch-compile 1 of 1", r.stdout)

    def test_bad_input(self):
        broken = self.case("torch", 1.0, 1.0, 1)
        del broken["device"]["throughput"]["batch_modes"]["graph"]["probe"]["kernel_per_call_summary_ns"]
        for doc in (None, [1], {"cases": "none"}, {"cases": [broken]}):
            r = self.run_summary(doc)
            self.assertEqual(r.returncode, 2, (doc, r.stdout))
            self.assertTrue(r.stderr.startswith("graph_gaps_summary: "), r.stderr)



class EagerAgainstHostTest(unittest.TestCase):
    """tests/gpu/eager_against_host.py on results folders: a line per case with a device phase
    (eager control, host E2E, the host's time around the eager batches where recorded, graph
    control where measured, the host-drift flag); a folder it cannot read is named on stderr,
    the others still printed, and the exit is 2."""

    def case(self, around=None, graph=None, flags=()):
        control = {"calls_per_sample": 64, "per_call_summary_ns": {"p50": 3884.0}}
        if around is not None:
            control["host_elapsed_ns"] = around
        modes = {"graph": {"control": {"per_call_summary_ns": {"p50": graph}}}} if graph else {}
        return {"id": "add/17x257/packed/native", "host": {"throughput": {
                    "per_call_summary_ns": {"p50": 2684.0}}},
                "device": {"flags": list(flags), "throughput": {"control": control,
                                                                 "batch_modes": modes}}}

    def run_summary(self, docs):
        with tempfile.TemporaryDirectory() as tmp:
            dirs = []
            for name, doc in docs:
                d = os.path.join(tmp, name)
                os.mkdir(d)
                if doc is not None:
                    with open(os.path.join(d, "results.json"), "w") as f:
                        json.dump(doc, f)
                dirs.append(d)
            return subprocess.run([sys.executable, os.path.join(HERE, "gpu", "eager_against_host.py"),
                                   *dirs], capture_output=True, text=True)

    def test_lines(self):
        drift = self.case([64 * 4000.0, 64 * 4100.0, None], 1417.0, ["host drift: eager ..."])
        r = self.run_summary([("v9", {"cases": [drift, {"id": "cpu", "device": None}]}),
                              ("v8", {"cases": [self.case()]})])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [
            "v9 add/17x257/packed/native: eager control 3884, host 2684, host around eager 4050, "
            "graph 1417 ns/call, host drift flagged",
            "v8 add/17x257/packed/native: eager control 3884, host 2684 ns/call"])

    def test_bad_input_names_the_folder_and_prints_the_rest(self):
        broken = self.case()
        del broken["host"]
        for doc in (None, [1], {"cases": "none"}, {"cases": [broken]}):
            r = self.run_summary([("bad", doc), ("good", {"cases": [self.case()]})])
            self.assertEqual(r.returncode, 2, (doc, r.stdout))
            self.assertTrue(r.stderr.startswith("eager_against_host: "), r.stderr)
            self.assertIn("good add/17x257/packed/native: eager control 3884", r.stdout)
        r = self.run_summary([])
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
