"""tilebench's PyTorch worker: one process per provider, driven by the C
harness over a line protocol on stdin/stdout (docs/torch-worker.md). Run as
`python3 -u -m tilebench.torch_worker` (PYTHONPATH: the directory holding
the tilebench package).

It offers primitives only: prepare a case from the harness's input files,
run calls, take a host sample (its own CLOCK_MONOTONIC around the calls and
the synchronisation, so the pipe is never inside a timing), take a device
sample through libtilebench_timing (tilebench.timing, on torch's stream), poison and
write the output. How many samples, which batch sizes and in which order is
decided by the harness alone.
"""
import hashlib
import importlib.util
import json
import os
import signal
import sys
import time

from tilebench import timing
from tilebench.graph_addresses import input_address_facts, output_address_facts

POISON_BITS = 0x7FC0DEAD
# Every provider's inputs lie between two zones of this pattern
# (src/inputs/guard.h: a NaN whose payload is not the poison's), checked
# after the calls (the defence guard_zones, docs/method.md §8).
GUARD_BITS = 0x7FA11CE5
GUARD_ELEMS = 1024
# A held sample's hold waits at most this long for the calls to be queued.
HOLD_TIMEOUT_NS = 5_000_000_000
# Graphs of one batch size that together walk the buffer sets (graph mode).
MAX_GRAPHS = 64
# Diagnostics (tests/gpu/graph_replay_check.py): a folder where every captured
# graph is written as Graphviz text (CUDAGraph.debug_dump), its nodes and
# their launch parameters, to set beside another capture of the same calls;
# with it, where each captured call's output lies (<dot name>-addresses.json,
# output_address_facts), for tests/gpu/graph_dot_summary.py.
GRAPH_DUMP = os.environ.get("TILEBENCH_TORCH_GRAPH_DUMP")
TB_TIMING_E_CUDA = -7
RMSNORM_EPS = 1e-6
LAYERNORM_EPS = 1e-5
# The user-python provider's call per op (docs/user-kernels.md, "A Python
# callable"): the case's tensors in this order, eps as a float.
USER_SIGNATURES = {
    "sum": "fn(x)", "softmax": "fn(x)", "rmsnorm": "fn(x, weight, eps)",
    "layernorm": "fn(x, weight, bias, eps)", "add": "fn(a, b)", "gelu_add": "fn(a, b)",
    "gemm": "fn(a, b)",
}


class CallableError(Exception):
    """The user's callable raised, or returned something that is not the output."""


def reply(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def recording(fn, outputs, inputs=None):
    """fn, appending each call's output (address, bytes) to `outputs` and the addresses of
    the set's inputs to `inputs`: integers only, never the tensor, so no output lives a
    moment longer than it would unrecorded."""
    def call(s):
        result = fn(s)
        if hasattr(result, "data_ptr"):  # both lists a call each, or neither: k pairs them
            outputs.append((result.data_ptr(), result.numel() * result.element_size()))
            if inputs is not None:
                inputs.append([t.data_ptr() for role, t in s.items() if role not in ("out", "result")])
        return result
    return call


class Worker:
    def __init__(self, torch):
        self.torch = torch
        self.cuda = torch.cuda.is_available()
        self.device = "cuda" if self.cuda else "cpu"
        self.timing = None
        self.fn = None
        self.sets = []
        self.cursor = 0
        self.last = None
        self.graphs = {}  # calls -> [(first buffer set, torch.cuda.CUDAGraph), ...]
        self.user = None  # the user-python provider's callable (load_callable)
        self.storages = []  # per buffer set: role -> the storage its view is of
        self.specs = {}  # role -> the prepare request's input spec
        self.out_shape = None
        self.reached = []  # per buffer set: a call outside a graph capture used it
        self.capturing = False
        self.guards = []  # (set, role, allocation, elements) of each guarded input
        if self.cuda:
            # Every call, timing session and graph of this process runs on one stream of its
            # own, and graphs are captured on it: a graph captured on torch's capture stream and
            # launched on another replays ~0.3 us a kernel slower once the process has
            # instantiated a third graph or run a kernel on a second stream after one
            # (docs/method.md §2.3, tests/gpu/graph_regime.py); captured on the stream it is
            # launched on, it replays with its kernels back to back.
            torch.cuda.set_stream(torch.cuda.Stream())
            # $TILEBENCH_TIMING_LIB (set by the harness), checked: ABI and struct sizes
            try:
                self.timing = timing.load()
            except timing.TimingLibraryError as e:  # no device samples; the harness sees timing: false
                sys.stderr.write(f"tilebench torch worker: no GPU timing: {e}\n")
                sys.stderr.flush()

    def hello(self):
        t = self.torch
        reply(ok=True, torch=t.__version__, cuda=self.cuda,
              cuda_version=t.version.cuda, cudnn=(t.backends.cudnn.version() if self.cuda else None),
              device=(t.cuda.get_device_name(0) if self.cuda else "cpu"),
              threads=t.get_num_threads(), interop_threads=t.get_num_interop_threads(),
              config=t.__config__.show(), timing=self.timing is not None,
              thread_env={k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")})

    # ---- cases ----
    def tensor_from(self, spec, storage=None):
        """A view of the harness's storage (file) with the case's layout."""
        t = self.torch
        if storage is None:
            storage = t.from_file(spec["path"], shared=False, size=spec["storage_elems"], dtype=t.float32)
            storage = storage.to(self.device)
        if spec["rows"] == 1 and spec["role"] in ("weight", "bias"):
            return storage, storage
        # as_strided's offset counts from the allocation's start: a guarded storage
        # begins GUARD_ELEMS into it
        view = t.as_strided(storage, (spec["rows"], spec["cols"]), (spec["row_stride"], 1),
                            storage.storage_offset() + spec["offset"])
        return storage, view

    def guarded(self, storage, index, role):
        """A copy of `storage` between two guard zones of one allocation (every
        provider's inputs: the built-in ones are checked as a user's callable is):
        the storage is the allocation's middle, the zones are checked by check_guards."""
        t, n = self.torch, storage.numel()
        allocation = t.empty(n + 2 * GUARD_ELEMS, dtype=t.float32, device=self.device)
        allocation.view(t.int32).fill_(GUARD_BITS)
        middle = allocation[GUARD_ELEMS:GUARD_ELEMS + n]
        middle.copy_(storage)
        self.guards.append((index, role, allocation, n))
        return middle

    def build(self, op, n):
        """The call as a function of one buffer set's tensors, with its output
        policy and a description (so torch.compile compiles it once)."""
        t = self.torch
        F = t.nn.functional
        if op == "sum":
            return lambda s: t.sum(s["x"], dim=-1, out=s["out"]), "preallocated_out", "torch.sum(dim=-1, out=)"
        if op == "add":
            return lambda s: t.add(s["a"], s["b"], out=s["out"]), "preallocated_out", "torch.add(out=)"
        if op == "gemm":
            return (lambda s: t.matmul(s["a"], s["b"], out=s["out"]), "preallocated_out",
                    f"torch.matmul(out=), allow_tf32={t.backends.cuda.matmul.allow_tf32}")
        if op == "softmax":
            return lambda s: t.softmax(s["x"], dim=-1), "framework_return_value", "torch.softmax"
        if op == "layernorm":
            return (lambda s: F.layer_norm(s["x"], (n,), s["weight"], s["bias"], LAYERNORM_EPS),
                    "framework_return_value", "F.layer_norm")
        if op == "rmsnorm":
            if hasattr(F, "rms_norm"):
                return (lambda s: F.rms_norm(s["x"], (n,), s["weight"], RMSNORM_EPS),
                        "framework_return_value", "F.rms_norm")
            return (lambda s: s["x"] * t.rsqrt(s["x"].pow(2).mean(-1, keepdim=True) + RMSNORM_EPS) * s["weight"],
                    "framework_return_value", "composite x*rsqrt(mean(x^2)+eps)*w (no F.rms_norm)")
        if op == "gelu_add":
            return (lambda s: F.gelu(s["a"] + s["b"], approximate="none"), "framework_return_value",
                    "F.gelu(a + b), exact")
        raise ValueError(f"unknown operation {op}")

    def buffer_sets(self, req, preallocated):
        """The same cold policy as the native CUDA backend: enough copies of
        the inputs (and output) to total at least 4x the L2 size, at most 4096
        sets and half the free device memory; cycled call by call."""
        t = self.torch
        first, base = {}, {}
        self.guards = []
        for spec in req["inputs"]:
            storage, _ = self.tensor_from(spec)
            storage = self.guarded(storage, 0, spec["role"])
            storage, view = self.tensor_from(spec, storage)
            base[spec["role"]] = (spec, storage)
            first[spec["role"]] = view
        self.storages = [{role: st for role, (_, st) in base.items()}]
        out_shape = (req["m"],) if req["op"] == "sum" else (req["m"], req["n"])
        if preallocated:
            first["out"] = t.empty(out_shape, device=self.device)
        per_set = sum(st.numel() * 4 for _, st in base.values())
        per_set += req["m"] * (1 if req["op"] == "sum" else req["n"]) * 4
        sets, l2, state = 1, 0, "not controlled (cpu)"
        if self.cuda:
            l2 = t.cuda.get_device_properties(0).L2_cache_size
            free, _ = t.cuda.mem_get_info()
            want = max(1, -(-4 * l2 // per_set))
            sets = max(1, min(want, 4096, (free // 2) // per_set))
            state = "cold" if sets * per_set >= 4 * l2 else "warm"
        if os.environ.get("TILEBENCH_TORCH_SETS"):  # tests: the rotation path on a CPU
            sets, state = int(os.environ["TILEBENCH_TORCH_SETS"]), "forced (test)"
        all_sets = [first]
        for index in range(1, sets):
            copy, storages = {}, {}
            for role, (spec, storage) in base.items():
                clone = self.guarded(storage, index, role)
                storages[role], copy[role] = self.tensor_from(spec, clone)
            self.storages.append(storages)
            if preallocated:
                copy["out"] = t.empty(out_shape, device=self.device)
            all_sets.append(copy)
        buffers = {"policy": "rotate buffer sets call by call (inputs and any preallocated output)",
                   "sets": sets, "bytes_per_set": per_set, "total_bytes": sets * per_set,
                   "l2_bytes": l2, "state": state}
        return all_sets, buffers

    def prepare(self, req):
        t = self.torch
        # matched to the realization compared (gemm): TF32 only for `tensor`
        t.backends.cuda.matmul.allow_tf32 = bool(req.get("allow_tf32", False))
        self.graphs = {}
        if self.user is not None:
            fn, allocation, implementation = self.build_user(req["op"])
        else:
            fn, allocation, implementation = self.build(req["op"], req["n"])
        self.specs = {spec["role"]: spec for spec in req["inputs"]}
        self.label = f"{req['op']}-{req['m']}x{req['n']}"
        self.out_shape = (req["m"],) if req["op"] == "sum" else (req["m"], req["n"])
        self.sets, buffers = self.buffer_sets(req, allocation == "preallocated_out")
        self.cursor = 0
        compile_ms = None
        if self.user is not None:
            # one call outside every sample: a callable that raises or returns
            # no proper output is refused before anything is timed
            self.fn = fn
            self.calls(1)
            self.check_output(self.last)
            self.sync()
            self.cursor = 0
        self.reached = [False] * len(self.sets)  # the timed calls start here
        if req.get("compile"):
            if not hasattr(t, "compile"):
                raise RuntimeError(f"torch.compile needs torch 2.0 or newer (this is {t.__version__})")
            # A fresh compilation specialised to this case's shape and strides:
            # Dynamo otherwise recompiles a function it has seen with other
            # shapes as dynamic-shape code (the lambdas of build() share a code
            # object across cases), and past its recompile limit runs it eagerly.
            t._dynamo.reset()
            fn = t.compile(fn, dynamic=False)
            start = time.perf_counter_ns()
            fn(self.sets[0])  # compilation happens here, outside every sample
            self.sync()
            compile_ms = (time.perf_counter_ns() - start) / 1e6
        self.fn = fn
        reply(ok=True, output_allocation=allocation, implementation=implementation,
              compile_ms=compile_ms, device=self.device, buffers=buffers)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def calls(self, count):
        # A result the framework allocates is kept with its buffer set until
        # the set's next call: the allocator then hands each call a block last
        # written a whole rotation ago, as cold as a preallocated output. A
        # result dropped at once would come back as the next call's output,
        # and its writes would stay in L2 (docs/method.md §2.5).
        try:
            for _ in range(count):
                current = self.sets[self.cursor]
                if not self.capturing and self.reached:
                    self.reached[self.cursor] = True
                self.cursor = (self.cursor + 1) % len(self.sets)
                self.last = current["result"] = self.fn(current)
        except Exception as e:
            if self.user is None:
                raise
            raise CallableError(f"the callable {self.user['qualname']} raised "
                                f"{type(e).__name__}: {e}") from e

    # ---- primitives ----
    def launch(self, req):
        self.calls(req["calls"])
        reply(ok=True)

    def host_sample(self, req):
        start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        self.calls(req["calls"])
        self.sync()
        reply(ok=True, elapsed_ns=time.clock_gettime_ns(time.CLOCK_MONOTONIC) - start)

    def graph_of(self, calls):
        """The CUDA graph of `calls` calls to replay next. Captured on first
        use (outside any timing): as many graphs as one pass over the buffer
        sets takes (at most MAX_GRAPHS), each replayed once untimed, kept
        until release. A replay takes the graph whose calls begin nearest
        ahead of the rotation's cursor and moves the cursor past its sets, as
        the C provider does (src/backends/cuda/cuda_device.h): eager calls
        and replays walk the sets as one sequence, so a replay never re-reads
        sets an eager batch of the same sample has just left in L2."""
        if calls not in self.graphs:
            count = min(MAX_GRAPHS, -(-len(self.sets) // calls))
            graphs = []
            # a failed capture leaves no result of its own behind: each set keeps
            # the one its last eager call returned (timed_outputs reads them)
            kept = [(s.get("result"), self.last) for s in self.sets]
            self.capturing = True
            fn = self.fn
            try:
                for _ in range(count):
                    graph = self.dumped_graph() if GRAPH_DUMP else self.torch.cuda.CUDAGraph()
                    first = self.cursor
                    outputs, inputs = [], []
                    if GRAPH_DUMP:
                        self.fn = recording(fn, outputs, inputs)
                    with self.torch.cuda.graph(graph, stream=self.torch.cuda.current_stream()):
                        self.calls(calls)
                    self.fn = fn
                    if GRAPH_DUMP:
                        graph.instantiate()
                        name = os.path.join(GRAPH_DUMP, f"worker-{self.label}-{calls}-{len(graphs)}")
                        graph.debug_dump(name + ".dot")
                        self.dump_addresses(name + "-addresses.json", first, calls, len(graphs),
                                            outputs, inputs)
                    graphs.append((first, graph))
            except Exception:
                self.fn = fn
                for s, (result, last) in zip(self.sets, kept):
                    s.pop("result", None)
                    if result is not None:
                        s["result"] = result
                    self.last = last
                raise
            finally:
                self.capturing = False
            for _, graph in graphs:
                graph.replay()
            self.sync()
            self.graphs[calls] = graphs
        sets = len(self.sets)
        first, graph = min(self.graphs[calls], key=lambda g: (g[0] - self.cursor) % sets)
        self.cursor = (first + calls) % sets
        return graph

    def dump_addresses(self, path, first, calls, index, outputs, inputs):
        """Diagnostics (TILEBENCH_TORCH_GRAPH_DUMP): one captured graph's output
        addresses and their facts (output_address_facts), the buffer sets its calls
        read and the L2 size, as JSON beside the graph's Graphviz text."""
        sets = len(self.sets)
        read = sorted({(first + k) % sets for k in range(calls)})
        input_bytes = sum(st.numel() * st.element_size() for st in self.storages[0].values())
        l2 = self.torch.cuda.get_device_properties(0).L2_cache_size if self.cuda else 0
        with open(path, "w") as f:
            json.dump({"tool": "worker", "case": self.label, "mode": "worker", "graph": index,
                       "calls": calls, "sets": sets, "first_set": first,
                       "input_sets_read": len(read), "input_bytes_read": len(read) * input_bytes,
                       "l2_bytes": l2, **output_address_facts(outputs), **input_address_facts(inputs),
                       "outputs": [{"call": k, "set": (first + k) % sets, "address": a, "bytes": n,
                                    "inputs": inputs[k] if k < len(inputs) else []}
                                   for k, (a, n) in enumerate(outputs)]}, f, indent=1)

    def dumped_graph(self):
        """A graph that keeps its captured form for debug_dump: without keep_graph the
        capture is destroyed once instantiated, and debug_dump writes nothing."""
        graph = self.torch.cuda.CUDAGraph(keep_graph=True)
        graph.enable_debug_mode()
        return graph

    def session_for(self, req, stream):
        # Graph replays are held, probe and control alike, as in the C device
        # phase (src/measure/device_phase.c, begin_step says why).
        mode = req.get("mode", "eager")
        hold = HOLD_TIMEOUT_NS if mode != "eager" else None
        if req["probe"]:
            return self.timing.probe(stream, req["capacity"], hold_timeout_ns=hold)
        return self.timing.control(stream, hold_timeout_ns=hold)

    def device_sample(self, req):
        if self.timing is None:
            return reply(ok=True, code=-4, error="no GPU timing in this worker")
        mode = req.get("mode", "eager")
        if mode not in ("eager", "graph", "held") or (mode == "held" and req["probe"]):
            return reply(ok=True, code=-1, error=f"TB_TIMING_E_ARGUMENT: no {mode} probe sample")
        graph = None
        if mode == "graph":
            try:
                graph = self.graph_of(req["calls"])
            except Exception as e:  # a call that cannot be captured: the mode is unavailable
                self.graphs.pop(req["calls"], None)
                return reply(ok=True, code=TB_TIMING_E_CUDA,
                             error=f"graph capture failed: {type(e).__name__}: {e}")
        stream = self.torch.cuda.current_stream().cuda_stream
        try:
            with self.session_for(req, stream) as t:  # an exception aborts the session
                if graph is not None:
                    graph.replay()
                else:
                    self.calls(req["calls"])
                t.declare_calls(req["calls"])
            code, error, result = 0, "", t.result
        except timing.TimingError as e:
            code, error, result = e.code, f"{e.name}: {e.message}", e.result or timing.Result()
        reply(ok=True, code=code, error=error, **result.as_dict())

    def poison(self, req):
        """Poisons every set's preallocated output and restarts the rotation,
        so the validated call writes set 0."""
        for s in self.sets:
            s.pop("result", None)
            if "out" in s:
                s["out"].view(self.torch.int32).fill_(POISON_BITS)  # 0x7FC0DEAD fits in int32
        self.cursor = 0
        self.last = None
        reply(ok=True)

    def read_output(self, req):
        self.sync()
        result = self.sets[0]["out"] if "out" in self.sets[0] else self.last
        if result is None:
            raise RuntimeError("no output: the operation has not run since the last poison")
        if self.user is not None:
            self.check_output(result)
        result.detach().to("cpu").contiguous().numpy().tofile(req["path"])
        reply(ok=True, elements=result.numel())

    def read_set_output(self, req):
        """timed_outputs (docs/method.md §8): buffer set `set`'s output as the calls left
        it (a preallocated output, or the result kept with the set), and whether a call
        outside a graph capture reached the set since prepare. Nothing is written for a
        set no call reached."""
        index = req["set"]
        if not 0 <= index < len(self.sets):
            raise RuntimeError(f"no buffer set {index} of {len(self.sets)}")
        self.sync()
        current = self.sets[index]
        result = current["out"] if "out" in current else current.get("result")
        if not self.reached[index] or result is None:
            return reply(ok=True, reached=False, elements=0)
        if self.user is not None:
            self.check_output(result)
        result.detach().to("cpu").contiguous().numpy().tofile(req["path"])
        reply(ok=True, reached=True, elements=result.numel())

    def check_guards(self, req):
        """guard_zones: every guarded input's two zones still hold the pattern; the
        first that does not is named by set, input and element. All zones are
        compared on the device at once (thousands of sets at small shapes), and
        searched one by one only when one was damaged."""
        t = self.torch
        self.sync()
        if self.guards:
            zones = [z for _, _, a, n in self.guards
                     for z in (a.view(t.int32)[:GUARD_ELEMS], a.view(t.int32)[GUARD_ELEMS + n:])]
            if not bool((t.cat(zones) != GUARD_BITS).any()):
                return reply(ok=True, buffers=len(self.guards), intact=True, damaged=None)
        for index, role, allocation, n in self.guards:
            bits = allocation.view(t.int32)
            zones = ((True, bits[:GUARD_ELEMS]), (False, bits[GUARD_ELEMS + n:]))
            for before, zone in zones:  # the zones alone come back, not the data between
                damaged = (zone.detach().to("cpu") != GUARD_BITS).nonzero()
                if damaged.numel() > 0:
                    first = int(damaged[0])
                    where = (f"before input {role} of buffer set {index}: element "
                             f"{first - GUARD_ELEMS}" if before else
                             f"after input {role} of buffer set {index}: element {n + first}, "
                             f"{first} past its end")
                    return reply(ok=True, buffers=len(self.guards), intact=False, damaged=where)
        reply(ok=True, buffers=len(self.guards), intact=True, damaged=None)

    def release(self, req):
        self.fn = self.last = None
        self.reached = []
        self.guards = []
        self.graphs = {}
        self.sets = []
        self.storages = []
        reply(ok=True)

    # ---- the user-python provider ----
    def load_callable(self, req):
        """Imports the user's module from its file (never from sys.path, so
        no other module of that name runs) and keeps its function. The code
        executed is the bytes hashed: the digest recorded is of what ran."""
        path = os.path.realpath(req["path"])
        function = req["function"]
        with open(path, "rb") as f:
            source = f.read()
        digest = hashlib.sha256(source).hexdigest()
        name = f"tilebench_user_{digest[:16]}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None:
            raise CallableError(f"{path} is not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses, pickling and Triton look modules up by name
        try:
            exec(compile(source, path, "exec"), module.__dict__)
        except Exception as e:
            sys.modules.pop(name, None)
            raise CallableError(f"importing {path} raised {type(e).__name__}: {e}") from e
        if not hasattr(module, function):
            raise CallableError(f"{path} has no attribute '{function}'")
        fn = getattr(module, function)
        if not callable(fn):
            raise CallableError(f"{path}:{function} is a {type(fn).__name__}, not a callable")
        qualname = getattr(fn, "__qualname__", function)
        self.user = {"fn": fn, "qualname": qualname}
        reply(ok=True, module_path=path, file_name=os.path.basename(path), sha256=digest,
              function=function, qualname=qualname, module=name)

    def build_user(self, op):
        """The user's callable on one buffer set's tensors (USER_SIGNATURES);
        it returns the output, kept per set as a framework's result is."""
        fn = self.user["fn"]
        calls = {
            "sum": lambda s: fn(s["x"]), "softmax": lambda s: fn(s["x"]),
            "rmsnorm": lambda s: fn(s["x"], s["weight"], RMSNORM_EPS),
            "layernorm": lambda s: fn(s["x"], s["weight"], s["bias"], LAYERNORM_EPS),
            "add": lambda s: fn(s["a"], s["b"]), "gelu_add": lambda s: fn(s["a"], s["b"]),
            "gemm": lambda s: fn(s["a"], s["b"]),
        }
        if op not in calls:
            raise ValueError(f"unknown operation {op}")
        return calls[op], "framework_return_value", f"{self.user['qualname']}: {USER_SIGNATURES[op]}"

    def check_output(self, result):
        """The output must be a float32 tensor of the case's shape on the
        worker's device: anything else is the callable's error, named."""
        t, who = self.torch, f"the callable {self.user['qualname']}"
        if not isinstance(result, t.Tensor):
            raise CallableError(f"{who} returned a {type(result).__name__}, not a torch.Tensor")
        if tuple(result.shape) != self.out_shape:
            raise CallableError(f"{who} returned shape {tuple(result.shape)}, "
                                f"the output is {self.out_shape}")
        if result.dtype != t.float32:
            raise CallableError(f"{who} returned {result.dtype}, the output is torch.float32")
        if result.device.type != self.device:
            raise CallableError(f"{who} returned a tensor on {result.device}, the inputs are on "
                                f"{self.device}")

    def read_input(self, req):
        """Writes input `role`'s storage as the calls left it: the first
        buffer set whose bits differ from the harness's file, else set 0."""
        t, spec = self.torch, self.specs[req["role"]]
        original = t.from_file(spec["path"], shared=False, size=spec["storage_elems"],
                               dtype=t.float32).view(t.int32).to(self.device)
        # bits, not values (NaN padding compares equal); every set compared on
        # the device, one synchronisation for them all
        differs = t.stack([(storages[req["role"]].detach().view(t.int32) != original).any()
                           for storages in self.storages])
        first = differs.nonzero()
        chosen = self.storages[int(first[0]) if first.numel() > 0 else 0][req["role"]]
        chosen.detach().to("cpu").contiguous().numpy().tofile(req["path"])
        reply(ok=True, elements=chosen.numel())

    def load_inputs(self, req):
        """Copies new input bytes (same layout) into every set's storages,
        in place: the views the calls use stay valid. The rotation restarts at
        set 0, as the CUDA base's does: read_output reads a preallocated output
        there, so the fresh-input call must land on it."""
        t = self.torch
        for spec in req["inputs"]:
            fresh = t.from_file(spec["path"], shared=False, size=spec["storage_elems"],
                                dtype=t.float32).to(self.device)
            for storages in self.storages:
                storages[spec["role"]].copy_(fresh)
        self.cursor = 0
        self.sync()
        reply(ok=True)


def fault(point):
    """Test-only fault injection (TILEBENCH_TORCH_WORKER_FAULT=point:behaviour).
    Returns True when the fault answered the request in the handler's place."""
    spec = os.environ.get("TILEBENCH_TORCH_WORKER_FAULT", "")
    if ":" not in spec or spec.split(":")[0] != point:
        return False
    behaviour = spec.split(":")[1]
    if behaviour == "crash":
        os._exit(3)
    if behaviour == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        sys.exit(0)
    if behaviour == "hang":
        time.sleep(3600)
    if behaviour == "close-stdin":  # stops reading: the harness's next write gets EPIPE
        os.close(0)
        reply(ok=True, elapsed_ns=1000)
        time.sleep(2)
        os._exit(0)
    if behaviour == "negative-time":
        reply(ok=True, elapsed_ns=-5)
        return True
    if behaviour == "silent-error":
        reply(ok=False)
        return True
    return False


def main():
    # The harness handles interrupts (Ctrl-C reaches the whole process group)
    # and tells the worker to quit.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import torch
    except Exception as e:  # torch missing or broken: say so, exit cleanly
        reply(ok=False, error=f"PyTorch is not importable in {sys.executable}: {e}")
        return 0
    worker = Worker(torch)
    worker.hello()
    handlers = {"prepare": worker.prepare, "launch": worker.launch, "host_sample": worker.host_sample,
                "device_sample": worker.device_sample, "poison": worker.poison,
                "read_output": worker.read_output, "release": worker.release,
                "load_callable": worker.load_callable, "read_input": worker.read_input,
                "load_inputs": worker.load_inputs, "read_set_output": worker.read_set_output,
                "check_guards": worker.check_guards}
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "quit":
            break
        if fault(req["cmd"]):
            continue
        try:
            handlers[req["cmd"]](req)
        except CallableError as e:  # already says whose error it is
            reply(ok=False, error=str(e))
        except Exception as e:
            reply(ok=False, error=f"{type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
