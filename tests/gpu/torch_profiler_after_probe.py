"""The timing library inside a PyTorch process, through ctypes (issue 4):
control and probe time a torch kernel on torch's stream, and afterwards
torch.profiler still records GPU kernels (our CUPTI subscription is gone).
Prints one line per check and closes with "N passed, N failed"."""
import ctypes
import json
import os
import sys

import torch


# The ABI's result struct as the worker declares it: one definition for both.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "tilebench_torch"))
from worker import TimingResult as Result  # noqa: E402


results = {"passed": 0, "failed": 0}


def check(cond, text):
    results["passed" if cond else "failed"] += 1
    print(("PASS " if cond else "FAIL ") + text, flush=True)


def timed(lib, probe, fn, calls):
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    rc = lib.tb_timing_begin_probe(stream, 64) if probe else lib.tb_timing_begin_control(stream)
    if rc != 0:
        return rc, None
    for _ in range(calls):
        fn()
    lib.tb_timing_declare_launches(ctypes.c_uint64(calls))
    r = Result()
    r.struct_size = ctypes.sizeof(Result)
    return lib.tb_timing_end(ctypes.byref(r)), r


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.tb_timing_last_error.restype = ctypes.c_char_p
    check(lib.tb_timing_abi_version() == 1, "ABI version 1 through ctypes")
    check(ctypes.sizeof(Result) == 152, "struct layout matches the header (152 bytes)")
    x = torch.randn(4096, 4096, device="cuda")
    fn = lambda: torch.softmax(x, dim=-1)
    fn()
    torch.cuda.synchronize()
    timed(lib, True, fn, 4)  # discarded probe pass
    rc, control = timed(lib, False, fn, 8)
    check(rc == 0 and control.gpu_elapsed_ns > 0,
          f"control times torch.softmax on torch's stream: {control.gpu_elapsed_ns / 8 / 1e3:.1f} µs/call"
          if rc == 0 else f"control failed: {lib.tb_timing_last_error()}")
    rc, probe = timed(lib, True, fn, 8)
    check(rc == 0 and probe.kernels_seen == 8 and probe.launches == 8,
          f"probe sees torch's 8 kernel launches (kernels {probe.kernels_seen}, launches {probe.launches})"
          if rc == 0 else f"probe failed: {lib.tb_timing_last_error()}")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    gpu_events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    check(len(gpu_events) > 0, f"torch.profiler records {len(gpu_events)} GPU event(s) after our probe")
    # Kineto may stay subscribed after its profile: then our probe must refuse
    # and name the other client (fail closed), never record beside it.
    rc, again = timed(lib, True, fn, 2)
    error = lib.tb_timing_last_error().decode()
    check(rc == 0 or (rc == -11 and "another CUPTI client" in error),
          "after torch.profiler our probe " + ("works" if rc == 0 else f"refuses, naming the holder: {error}"))
    rc, control = timed(lib, False, fn, 2)
    check(rc == 0, "control still works after torch.profiler")
    print(f"{results['passed']} passed, {results['failed']} failed")
    with open(sys.argv[2], "w") as out:
        json.dump({"torch": torch.__version__, **results}, out)
    return 0 if results["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
