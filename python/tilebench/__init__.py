"""tilebench: Python binding of tilebench's GPU timing library
(libtilebench_timing, include/tilebench/timing.h, ABI 2) and its PyTorch
worker (tilebench.torch_worker). See docs/python.md.

    import tilebench
    with tilebench.control(torch.cuda.current_stream().cuda_stream) as t:
        for _ in range(10):
            fn()
        t.declare_calls(10)
    print(t.result.gpu_elapsed_ns / 10)

Importing needs neither torch nor a GPU; the library is loaded (and its ABI
version and struct sizes checked) on first use, or by tilebench.load(path).
"""
from .timing import (ABI_VERSION, CODES, SONAME, GpuState, Kernel, Library, Result, Session,
                     TimingError, TimingLibraryError, abi_version, control, gpu_state, library,
                     load, probe)

__version__ = "0.1.0"

__all__ = ["ABI_VERSION", "CODES", "SONAME", "GpuState", "Kernel", "Library", "Result", "Session",
           "TimingError", "TimingLibraryError", "abi_version", "control", "gpu_state", "library",
           "load", "probe", "__version__"]
