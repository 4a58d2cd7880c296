"""graph_regime.py's question without PyTorch (issue 18): CuPy graphs of a plain kernel,
captured and replayed on one stream of their own (as the native backend does), instantiated
by CuPy. One graph is kept and timed after each step: a third graph captured, a fourth, ...,
then a kernel on a second stream. A step after which the kept graph replays ~0.3 us a kernel
slower is one that changes the process, whatever made the graphs.

    python3 graph_regime_cupy.py OUT.json

GRAPH_REGIME_FLAGS=N captures and instantiates through the driver API instead
(cuStreamBeginCapture, cuGraphInstantiateWithFlags with flags N: 1 auto-free on
launch, 8 use node priority; PyTorch's CUDAGraph instantiates with 9).
"""
import ctypes
import json
import os
import statistics
import sys

import cupy

N = 1 << 20  # floats a call reads, and as many it writes: 8 MiB a call
CALLS = 64
REPLAYS = 15
SCALE = cupy.RawKernel(r'''
extern "C" __global__ void scale(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}''', "scale")
SPIN = cupy.RawKernel(r'''
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}''', "spin")


class DriverGraph:
    """A graph captured on `stream` through the driver API and instantiated with `flags`."""
    cu = None

    def __init__(self, stream, flags, record):
        if DriverGraph.cu is None:
            DriverGraph.cu = ctypes.CDLL("libcuda.so.1")
        cu, graph, self.exec = DriverGraph.cu, ctypes.c_void_p(), ctypes.c_void_p()
        check(cu.cuStreamBeginCapture_v2(ctypes.c_void_p(stream.ptr), 0), "cuStreamBeginCapture")
        record()
        check(cu.cuStreamEndCapture(ctypes.c_void_p(stream.ptr), ctypes.byref(graph)), "cuStreamEndCapture")
        check(cu.cuGraphInstantiateWithFlags(ctypes.byref(self.exec), graph, ctypes.c_ulonglong(flags)),
              "cuGraphInstantiateWithFlags")

    def launch(self, stream):
        check(DriverGraph.cu.cuGraphLaunch(self.exec, ctypes.c_void_p(stream.ptr)), "cuGraphLaunch")


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what} failed: CUresult {rc}")


class Process:
    def __init__(self):
        l2 = cupy.cuda.runtime.getDeviceProperties(0)["l2CacheSize"]
        count = -(-4 * l2 // (2 * N * 4))
        self.sets = [(cupy.random.rand(N, dtype=cupy.float32), cupy.empty(N, cupy.float32))
                     for _ in range(count)]
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.cursor, self.graphs = 0, []

    def calls(self, stream, count):
        for _ in range(count):
            x, y = self.sets[self.cursor]
            SCALE(((N + 255) // 256,), (256,), (x, y, cupy.int32(N)), stream=stream)
            self.cursor = (self.cursor + 1) % len(self.sets)

    def capture(self):
        flags = os.environ.get("GRAPH_REGIME_FLAGS")
        if flags is not None:
            graph = DriverGraph(self.stream, int(flags), lambda: self.calls(self.stream, CALLS))
        else:
            self.stream.begin_capture()
            self.calls(self.stream, CALLS)
            graph = self.stream.end_capture()
        graph.launch(self.stream)
        self.stream.synchronize()
        self.graphs.append(graph)
        return graph

    def per_call_ns(self, graph):
        times = []
        for _ in range(REPLAYS):
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            SPIN((1,), (1,), (cupy.int64(200_000),), stream=self.stream)  # the host queues ahead
            start.record(self.stream)
            graph.launch(self.stream)
            stop.record(self.stream)
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e6 / CALLS)
        return statistics.median(times)

    def second_stream_kernel(self):
        side = cupy.cuda.Stream(non_blocking=True)
        self.stream.synchronize()
        self.calls(side, 3)
        side.synchronize()


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    flags = os.environ.get("GRAPH_REGIME_FLAGS")
    if flags is not None and not flags.isdigit():
        print(f"GRAPH_REGIME_FLAGS={flags!r}: give a whole number (cudaGraphInstantiateFlags)",
              file=sys.stderr)
        return 2
    p = Process()
    kept = p.capture()
    rows = [{"step": "first graph", "kept_ns": p.per_call_ns(kept)}]
    for k in range(2, 7):
        p.capture()
        rows.append({"step": f"graph {k} captured", "kept_ns": p.per_call_ns(kept)})
    p.second_stream_kernel()
    rows.append({"step": "a kernel on a second stream", "kept_ns": p.per_call_ns(kept)})
    for row in rows:
        print(f"{row['step']:28} {row['kept_ns']:7.0f} ns a call", flush=True)
    with open(argv[1] + ".partial", "w") as f:
        json.dump({"calls": CALLS, "replays": REPLAYS, "floats": N, "steps": rows,
                   "instantiate_flags": os.environ.get("GRAPH_REGIME_FLAGS")}, f, indent=1)
    os.replace(argv[1] + ".partial", argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
