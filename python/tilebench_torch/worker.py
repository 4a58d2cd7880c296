"""tilebench's PyTorch worker: one process per provider, driven by the C
harness over a line protocol on stdin/stdout (docs/torch-worker.md).

It offers primitives only: prepare a case from the harness's input files,
run calls, take a host sample (its own CLOCK_MONOTONIC around the calls and
the synchronisation, so the pipe is never inside a timing), take a device
sample through libtilebench_timing (ctypes, on torch's stream), poison and
write the output. How many samples, which batch sizes and in which order is
decided by the harness alone.
"""
import ctypes
import json
import os
import sys
import time

POISON_BITS = 0x7FC0DEAD
RMSNORM_EPS = 1e-6
LAYERNORM_EPS = 1e-5


def reply(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class TimingResult(ctypes.Structure):
    """struct tb_timing_result of include/tilebench/timing.h (ABI 1)."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("scope", ctypes.c_uint32),
                ("kernels", ctypes.c_void_p), ("kernels_capacity", ctypes.c_uint64),
                ("kernels_written", ctypes.c_uint64), ("gpu_elapsed_ns", ctypes.c_double),
                ("launches", ctypes.c_uint64), ("kernels_seen", ctypes.c_uint64),
                ("kernel_sum_ns", ctypes.c_double), ("kernel_span_ns", ctypes.c_double),
                ("streams_seen", ctypes.c_uint64), ("side_stream_kernels", ctypes.c_uint64),
                ("timed_stream_id", ctypes.c_uint32), ("reserved0", ctypes.c_uint32),
                ("clock_offset_begin_ns", ctypes.c_double), ("clock_offset_end_ns", ctypes.c_double),
                ("clock_drift_ns", ctypes.c_double), ("calibration_width_ns", ctypes.c_double),
                ("kernels_before_launch", ctypes.c_uint64), ("begin_host_ns", ctypes.c_uint64),
                ("end_host_ns", ctypes.c_uint64)]


class Worker:
    def __init__(self, torch):
        self.torch = torch
        self.cuda = torch.cuda.is_available()
        self.device = "cuda" if self.cuda else "cpu"
        self.timing = None
        self.fn = None
        self.out = None
        self.last = None
        path = os.environ.get("TILEBENCH_TIMING_LIB")
        if self.cuda and path:
            self.timing = ctypes.CDLL(path)
            self.timing.tb_timing_last_error.restype = ctypes.c_char_p
            self.timing.tb_timing_code_name.restype = ctypes.c_char_p
            if self.timing.tb_timing_abi_version() != 1:
                self.timing = None

    def hello(self):
        t = self.torch
        reply(ok=True, torch=t.__version__, cuda=self.cuda,
              cuda_version=t.version.cuda, cudnn=(t.backends.cudnn.version() if self.cuda else None),
              device=(t.cuda.get_device_name(0) if self.cuda else "cpu"),
              threads=t.get_num_threads(), interop_threads=t.get_num_interop_threads(),
              config=t.__config__.show(), timing=self.timing is not None,
              thread_env={k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")})

    # ---- cases ----
    def tensor_from(self, spec):
        """A view of the harness's storage file with the case's layout."""
        t = self.torch
        storage = t.from_file(spec["path"], shared=False, size=spec["storage_elems"], dtype=t.float32)
        storage = storage.to(self.device)
        if spec["rows"] == 1 and spec["role"] in ("weight", "bias"):
            return storage
        return t.as_strided(storage, (spec["rows"], spec["cols"]), (spec["row_stride"], 1), spec["offset"])

    def build(self, op, inputs, m, n):
        t = self.torch
        F = t.nn.functional
        x = inputs.get("x", inputs.get("a"))
        if op == "sum":
            self.out = t.empty(m, device=self.device)
            return lambda: t.sum(x, dim=-1, out=self.out), "preallocated_out", "torch.sum(dim=-1, out=)"
        if op == "add":
            self.out = t.empty(m, n, device=self.device)
            b = inputs["b"]
            return lambda: t.add(x, b, out=self.out), "preallocated_out", "torch.add(out=)"
        if op == "softmax":
            return lambda: t.softmax(x, dim=-1), "framework_return_value", "torch.softmax"
        if op == "layernorm":
            w, b = inputs["weight"], inputs["bias"]
            return (lambda: F.layer_norm(x, (n,), w, b, LAYERNORM_EPS), "framework_return_value",
                    "F.layer_norm")
        if op == "rmsnorm":
            w = inputs["weight"]
            if hasattr(F, "rms_norm"):
                return (lambda: F.rms_norm(x, (n,), w, RMSNORM_EPS), "framework_return_value",
                        "F.rms_norm")
            return (lambda: x * t.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMSNORM_EPS) * w,
                    "framework_return_value", "composite x*rsqrt(mean(x^2)+eps)*w (no F.rms_norm)")
        if op == "gelu_add":
            b = inputs["b"]
            return (lambda: F.gelu(x + b, approximate="none"), "framework_return_value",
                    "F.gelu(a + b), exact")
        raise ValueError(f"unknown operation {op}")

    def prepare(self, req):
        t = self.torch
        inputs = {spec["role"]: self.tensor_from(spec) for spec in req["inputs"]}
        fn, allocation, implementation = self.build(req["op"], inputs, req["m"], req["n"])
        compile_ms = None
        if req.get("compile"):
            if not hasattr(t, "compile"):
                raise RuntimeError(f"torch.compile needs torch 2.0 or newer (this is {t.__version__})")
            compiled = t.compile(fn)
            start = time.perf_counter_ns()
            compiled()  # compilation happens here, outside every sample
            self.sync()
            compile_ms = (time.perf_counter_ns() - start) / 1e6
            fn = compiled
        self.fn = fn
        reply(ok=True, output_allocation=allocation, implementation=implementation,
              compile_ms=compile_ms, device=self.device)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def calls(self, count):
        for _ in range(count):
            self.last = self.fn()

    # ---- primitives ----
    def launch(self, req):
        self.calls(req["calls"])
        reply(ok=True)

    def host_sample(self, req):
        start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        self.calls(req["calls"])
        self.sync()
        reply(ok=True, elapsed_ns=time.clock_gettime_ns(time.CLOCK_MONOTONIC) - start)

    def device_sample(self, req):
        if self.timing is None:
            return reply(ok=True, code=-4, error="no GPU timing in this worker")
        stream = ctypes.c_void_p(self.torch.cuda.current_stream().cuda_stream)
        lib = self.timing
        code = lib.tb_timing_begin_probe(stream, req["capacity"]) if req["probe"] else lib.tb_timing_begin_control(stream)
        r = TimingResult()
        if code == 0:
            self.calls(req["calls"])
            lib.tb_timing_declare_launches(ctypes.c_uint64(req["calls"]))
            r.struct_size = ctypes.sizeof(TimingResult)
            code = lib.tb_timing_end(ctypes.byref(r))
        error = "" if code == 0 else f"{lib.tb_timing_code_name(code).decode()}: {lib.tb_timing_last_error().decode()}"
        reply(ok=True, code=code, error=error, **{name: getattr(r, name) for name, _ in TimingResult._fields_
                                                 if name not in ("kernels", "struct_size")})

    def poison(self, req):
        if self.out is not None:
            self.out.view(self.torch.int32).fill_(POISON_BITS)  # 0x7FC0DEAD fits in int32
        self.last = None
        reply(ok=True)

    def read_output(self, req):
        self.sync()
        result = self.out if self.out is not None else self.last
        if result is None:
            raise RuntimeError("no output: the operation has not run since the last poison")
        result.detach().to("cpu").contiguous().numpy().tofile(req["path"])
        reply(ok=True, elements=result.numel())

    def release(self, req):
        self.fn = self.out = self.last = None
        reply(ok=True)


def fault(point):
    """Test-only fault injection (TILEBENCH_TORCH_WORKER_FAULT=point:behaviour)."""
    spec = os.environ.get("TILEBENCH_TORCH_WORKER_FAULT", "")
    if ":" not in spec or spec.split(":")[0] != point:
        return
    behaviour = spec.split(":")[1]
    if behaviour == "crash":
        os._exit(3)
    if behaviour == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        sys.exit(0)
    if behaviour == "hang":
        time.sleep(3600)


def main():
    try:
        import torch
    except Exception as e:  # torch missing or broken: say so, exit cleanly
        reply(ok=False, error=f"PyTorch is not importable in {sys.executable}: {e}")
        return 0
    worker = Worker(torch)
    worker.hello()
    handlers = {"prepare": worker.prepare, "launch": worker.launch, "host_sample": worker.host_sample,
                "device_sample": worker.device_sample, "poison": worker.poison,
                "read_output": worker.read_output, "release": worker.release}
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "quit":
            break
        fault(req["cmd"])
        try:
            handlers[req["cmd"]](req)
        except Exception as e:
            reply(ok=False, error=f"{type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
