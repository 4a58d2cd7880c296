"""The timing library inside a PyTorch process, through the tilebench package
(python/tilebench, its ctypes binding; issue 4): control and probe time a
torch kernel on torch's stream, and afterwards torch.profiler still records
GPU kernels (our CUPTI subscription is gone).
Usage: torch_profiler_after_probe.py LIBRARY OUT.json (python/ is found from
this file's place in the tree, or on PYTHONPATH).
Prints one line per check and closes with "N passed, N failed"."""
import ctypes
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import tilebench  # noqa: E402
from tilebench import timing  # noqa: E402


results = {"passed": 0, "failed": 0}


def check(cond, text):
    results["passed" if cond else "failed"] += 1
    print(("PASS " if cond else "FAIL ") + text, flush=True)


def timed(lib, probe, fn, calls):
    """(0, result, "") or (code, None, the TimingError's text)."""
    stream = torch.cuda.current_stream().cuda_stream
    try:
        with (lib.probe(stream, 64) if probe else lib.control(stream)) as t:
            for _ in range(calls):
                fn()
            t.declare_calls(calls)
    except tilebench.TimingError as e:
        return e.code, None, str(e)
    return 0, t.result, ""


def main():
    try:
        lib = tilebench.load(sys.argv[1])  # checks the ABI version and the struct sizes
    except tilebench.TimingLibraryError as e:
        check(False, f"the package loads the library: {e}")
        print(f"{results['passed']} passed, {results['failed']} failed")
        return 1
    check(lib.abi_version() == 2, "ABI version 2 through ctypes (tilebench package)")
    check(ctypes.sizeof(timing.TimingResult) == 160 and lib.cdll.tb_timing_result_struct_size() == 160,
          "struct layout matches the header and the library (160 bytes)")
    x = torch.randn(4096, 4096, device="cuda")
    fn = lambda: torch.softmax(x, dim=-1)
    fn()
    torch.cuda.synchronize()
    timed(lib, True, fn, 4)  # discarded probe pass
    rc, control, error = timed(lib, False, fn, 8)
    check(rc == 0 and control.gpu_elapsed_ns > 0,
          f"control times torch.softmax on torch's stream: {control.gpu_elapsed_ns / 8 / 1e3:.1f} µs/call"
          if rc == 0 else f"control failed: {error}")
    rc, probe, error = timed(lib, True, fn, 8)
    check(rc == 0 and probe.kernels_seen == 8 and probe.counted_launches == 8,
          f"probe sees torch's 8 kernel launches (kernels {probe.kernels_seen}, launches {probe.counted_launches})"
          if rc == 0 else f"probe failed: {error}")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    gpu_events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    check(len(gpu_events) > 0, f"torch.profiler records {len(gpu_events)} GPU event(s) after our probe")
    # Kineto may stay subscribed after its profile: then our probe must refuse
    # and name the other client (fail closed), never record beside it.
    rc, again, error = timed(lib, True, fn, 2)
    check(rc == 0 or (rc == -11 and "another CUPTI client" in error),
          "after torch.profiler our probe " + ("works" if rc == 0 else f"refuses, naming the holder: {error}"))
    rc, control, error = timed(lib, False, fn, 2)
    check(rc == 0, "control still works after torch.profiler" + (f" ({error})" if rc else ""))
    print(f"{results['passed']} passed, {results['failed']} failed")
    with open(sys.argv[2], "w") as out:
        json.dump({"torch": torch.__version__, **results}, out)
    return 0 if results["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
