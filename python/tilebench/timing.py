"""ctypes binding of libtilebench_timing (include/tilebench/timing.h, ABI 2).

The struct layouts are declared here once; loading a library checks its ABI
version and that its struct sizes (tb_timing_*_struct_size) equal these
declarations, and refuses it otherwise. Every nonzero code raises
TimingError: no timing is ever returned from a failed call.

Standard library only: importing this module needs neither torch nor a GPU,
and loads nothing until the first call.
"""
import collections
import ctypes
import os
import sysconfig
import threading

ABI_VERSION = 2
SONAME = "libtilebench_timing.so.2"
ENV_VAR = "TILEBENCH_TIMING_LIB"

OK = 0
CODES = {
    0: "TB_TIMING_OK", -1: "TB_TIMING_E_ARGUMENT", -2: "TB_TIMING_E_BUSY",
    -3: "TB_TIMING_E_NOT_ACTIVE", -4: "TB_TIMING_E_NO_GPU", -5: "TB_TIMING_E_NO_CONTEXT",
    -6: "TB_TIMING_E_CAPTURING", -7: "TB_TIMING_E_CUDA", -8: "TB_TIMING_E_EMPTY",
    -9: "TB_TIMING_E_CUPTI_MISSING", -10: "TB_TIMING_E_CUPTI_VERSION", -11: "TB_TIMING_E_CUPTI_BUSY",
    -12: "TB_TIMING_E_CUPTI", -13: "TB_TIMING_E_CAPACITY", -14: "TB_TIMING_E_DROPPED",
    -15: "TB_TIMING_E_MISMATCH", -16: "TB_TIMING_E_TIMESTAMPS", -17: "TB_TIMING_E_HOLD_TIMEOUT",
}
SCOPE_CONTROL = 1
SCOPE_PROBE = 2

_U32 = ctypes.c_uint32
_U64 = ctypes.c_uint64
_F64 = ctypes.c_double


class TimingKernel(ctypes.Structure):
    """struct tb_timing_kernel: one kernel seen by the probe."""
    _fields_ = [("start_ns", _U64), ("end_ns", _U64), ("stream_id", _U32),
                ("correlation_id", _U32), ("device_id", _U32), ("graph_id", _U32)]


class TimingResult(ctypes.Structure):
    """struct tb_timing_result, filled by tb_timing_end."""
    _fields_ = [("struct_size", _U32), ("scope", _U32),
                ("kernels", ctypes.POINTER(TimingKernel)), ("kernels_capacity", _U64),
                ("kernels_written", _U64), ("gpu_elapsed_ns", _F64), ("declared_calls", _U64),
                ("counted_launches", _U64),
                ("kernels_seen", _U64), ("kernel_sum_ns", _F64), ("kernel_span_ns", _F64),
                ("streams_seen", _U64), ("side_stream_kernels", _U64),
                ("timed_stream_id", _U32), ("held", _U32),
                ("clock_offset_begin_ns", _F64), ("clock_offset_end_ns", _F64),
                ("clock_drift_ns", _F64), ("calibration_width_ns", _F64),
                ("kernels_before_launch", _U64), ("begin_host_ns", _U64), ("end_host_ns", _U64)]


class TimingGpuState(ctypes.Structure):
    """struct tb_timing_gpu_state, filled by tb_timing_gpu_state."""
    _fields_ = [("struct_size", _U32), ("valid", _U32), ("sm_clock_mhz", _U32),
                ("memory_clock_mhz", _U32), ("max_sm_clock_mhz", _U32), ("temperature_c", _U32),
                ("clocks_event_reasons", _U64), ("power_mw", _U32), ("reserved0", _U32),
                ("host_ns", _U64)]


# Every tb_timing_result field but the input-only struct_size and the kernels
# pointer: the attributes of Result (and the torch worker's reply fields).
RESULT_FIELDS = tuple(name for name, _ in TimingResult._fields_ if name not in ("struct_size", "kernels"))
GPU_STATE_FIELDS = tuple(name for name, _ in TimingGpuState._fields_
                         if name not in ("struct_size", "reserved0"))

Kernel = collections.namedtuple("Kernel", [name for name, _ in TimingKernel._fields_])
Kernel.__doc__ = "One probe kernel record (struct tb_timing_kernel); times are CLOCK_MONOTONIC ns."


class TimingLibraryError(RuntimeError):
    """The timing library cannot be used: not found, not loadable, or built
    for another ABI or struct layout than this binding."""


class _NotLoadable(TimingLibraryError):
    def __init__(self, text, reason):
        super().__init__(text)
        self.reason = reason


class TimingError(RuntimeError):
    """A tb_timing_* call returned a nonzero code.

    code: the negative code; name: its symbol (tb_timing_code_name);
    message: tb_timing_last_error() right after the call; result: for a
    failed end, the Result as the library left it (only scope filled), else None.
    """

    def __init__(self, code, name, message, result=None):
        super().__init__(f"{name} ({code}): {message}" if message else f"{name} ({code})")
        self.code = code
        self.name = name
        self.message = message
        self.result = result


class Result:
    """A tb_timing_result as Python attributes (RESULT_FIELDS), plus kernels:
    the probe's per-kernel records (a tuple of Kernel; empty unless asked for)."""
    __slots__ = RESULT_FIELDS + ("kernels",)

    def __init__(self, struct=None, kernels=()):
        struct = TimingResult() if struct is None else struct
        for name in RESULT_FIELDS:
            setattr(self, name, getattr(struct, name))
        self.kernels = tuple(kernels)

    def as_dict(self):
        """The struct's fields (RESULT_FIELDS, in struct order), without kernels."""
        return {name: getattr(self, name) for name in RESULT_FIELDS}

    def __repr__(self):
        scope = {SCOPE_CONTROL: "control", SCOPE_PROBE: "probe"}.get(self.scope, self.scope)
        return (f"Result(scope={scope}, gpu_elapsed_ns={self.gpu_elapsed_ns}, "
                f"declared_calls={self.declared_calls}, counted_launches={self.counted_launches}, "
                f"kernels_seen={self.kernels_seen}, held={self.held})")


class GpuState:
    """An NVML snapshot (GPU_STATE_FIELDS as attributes; valid is a bool).
    reason: when valid is False, tb_timing_last_error() after the snapshot
    (why NVML is unavailable, when that is the cause); else ""."""
    __slots__ = GPU_STATE_FIELDS + ("reason",)

    def __init__(self, struct, reason=""):
        for name in GPU_STATE_FIELDS:
            setattr(self, name, getattr(struct, name))
        self.valid = bool(self.valid)
        self.reason = "" if self.valid else reason

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self):
        return "GpuState(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"


def _stream_pointer(stream):
    """None/0 (the legacy default stream), an int address, a ctypes.c_void_p,
    or an object with a cuda_stream attribute (torch.cuda.Stream)."""
    if stream is not None and not isinstance(stream, (int, ctypes.c_void_p)) and hasattr(stream, "cuda_stream"):
        stream = stream.cuda_stream
    if stream is None or isinstance(stream, ctypes.c_void_p):
        return stream
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"stream must be None, an int address, ctypes.c_void_p or have .cuda_stream, "
                        f"not {type(stream).__name__}")
    if stream < 0:
        raise ValueError(f"stream address {stream} is negative")
    return ctypes.c_void_p(stream)


def _unsigned(value, bits, what):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not 0 <= value < (1 << bits):
        raise ValueError(f"{what} {value} is outside 0..{(1 << bits) - 1}")
    return value


class Library:
    """One loaded libtilebench_timing, checked: ABI version and struct sizes.

    The library keeps one process-wide session; so does every Library of the
    same file (dlopen returns the same handle)."""

    def __init__(self, path, how="explicit path"):
        self.path = path
        try:
            self.cdll = ctypes.CDLL(path)
        except OSError as e:
            raise _NotLoadable(f"cannot load the timing library: tried {path} ({how}): {e}", str(e)) from None
        self._declare()
        self._check()

    def _symbol(self, name, restype, argtypes, why):
        try:
            fn = getattr(self.cdll, name)
        except AttributeError:
            raise TimingLibraryError(f"{self.path} does not export {name}: {why}") from None
        fn.restype = restype
        fn.argtypes = argtypes
        return fn

    def _declare(self):
        not_ours = "not a libtilebench_timing library"
        self._abi = self._symbol("tb_timing_abi_version", ctypes.c_int, [], not_ours)
        old = (f"an older build of libtilebench_timing, from before the struct size checks; rebuild it "
               f"(this binding needs ABI {ABI_VERSION} with tb_timing_*_struct_size)")
        self._result_size = self._symbol("tb_timing_result_struct_size", _U32, [], old)
        self._gpu_state_size = self._symbol("tb_timing_gpu_state_struct_size", _U32, [], old)
        incomplete = f"an incomplete libtilebench_timing ABI {ABI_VERSION}"
        sym = lambda name, restype, argtypes: self._symbol(name, restype, argtypes, incomplete)  # noqa: E731
        self._begin_control = sym("tb_timing_begin_control", ctypes.c_int, [ctypes.c_void_p])
        self._begin_probe = sym("tb_timing_begin_probe", ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint])
        self._begin_control_held = sym("tb_timing_begin_control_held", ctypes.c_int, [ctypes.c_void_p, _U64])
        self._begin_probe_held = sym("tb_timing_begin_probe_held", ctypes.c_int,
                                     [ctypes.c_void_p, ctypes.c_uint, _U64])
        self._declare_calls = sym("tb_timing_declare_calls", ctypes.c_int, [_U64])
        self._end = sym("tb_timing_end", ctypes.c_int, [ctypes.POINTER(TimingResult)])
        self._abort = sym("tb_timing_abort", ctypes.c_int, [])
        self._gpu_state = sym("tb_timing_gpu_state", ctypes.c_int, [ctypes.POINTER(TimingGpuState)])
        self._last_error = sym("tb_timing_last_error", ctypes.c_char_p, [])
        self._code_name = sym("tb_timing_code_name", ctypes.c_char_p, [ctypes.c_int])

    def _check(self):
        # Module globals read at call time: tests replace them to plant a mismatch.
        abi = self._abi()
        if abi != ABI_VERSION:
            raise TimingLibraryError(f"{self.path} has timing ABI version {abi}; this binding "
                                     f"(tilebench.timing) is for ABI version {ABI_VERSION}")
        for c_name, struct, size_fn in (("struct tb_timing_result", TimingResult, self._result_size),
                                        ("struct tb_timing_gpu_state", TimingGpuState, self._gpu_state_size)):
            theirs, ours = size_fn(), ctypes.sizeof(struct)
            if theirs != ours:
                raise TimingLibraryError(f"{c_name} is {theirs} bytes in {self.path} but {ours} bytes in this "
                                         f"binding's ctypes layout (tilebench.timing.{struct.__name__}); "
                                         f"library and binding were built from different headers")
        self.result_struct_size = ctypes.sizeof(TimingResult)
        self.gpu_state_struct_size = ctypes.sizeof(TimingGpuState)

    # ---- calls ----
    def abi_version(self):
        return self._abi()

    def code_name(self, code):
        name = self._code_name(code)
        return name.decode() if name else CODES.get(code, f"code {code}")

    def last_error(self):
        text = self._last_error()
        return text.decode(errors="replace") if text else ""

    def _raise_if(self, code, result=None):
        if code != OK:
            # read the message first: nothing may run between the call and it
            message = self.last_error()
            raise TimingError(code, self.code_name(code), message, result)

    def control(self, stream=None, hold_timeout_ns=None):
        """A control session on `stream`, opened by `with` (see Session).
        hold_timeout_ns: hold the stream until the session ends (a blocking
        kernel, at most that long), so the calls inside run without launch
        gaps; nothing inside may synchronise with the stream."""
        if hold_timeout_ns is not None:
            return Session(self, "held", stream,
                           hold_timeout_ns=_unsigned(hold_timeout_ns, 64, "hold_timeout_ns"))
        return Session(self, "control", stream)

    def probe(self, stream, capacity, records=False, hold_timeout_ns=None):
        """A probe session for at most `capacity` kernels; records=True keeps
        each kernel's record in result.kernels (see Session).
        hold_timeout_ns: hold the stream until the session ends, as control
        does, so CUPTI's own work at the first launches falls outside."""
        capacity = _unsigned(capacity, 32, "capacity")
        if hold_timeout_ns is not None:
            return Session(self, "held probe", stream, capacity, records,
                           hold_timeout_ns=_unsigned(hold_timeout_ns, 64, "hold_timeout_ns"))
        return Session(self, "probe", stream, capacity, records)

    def gpu_state(self):
        """An NVML snapshot of the current context's device (GpuState); raises
        TimingError without a driver or a current context."""
        s = TimingGpuState()
        s.struct_size = ctypes.sizeof(TimingGpuState)
        self._raise_if(self._gpu_state(ctypes.byref(s)))
        return GpuState(s, self.last_error())

    def abort(self):
        """Closes an open session without a result; returns the code (no raise)."""
        return self._abort()


class Session:
    """One timing session of a Library: `with` begins it (control or probe on
    the stream); t.declare_calls(n) declares the calls timed; leaving the
    block normally ends it and sets t.result (a Result); leaving it with an
    exception aborts it and lets the exception through. Any nonzero code
    raises TimingError (a failed begin runs nothing of the block)."""

    def __init__(self, lib, kind, stream, capacity=0, records=False, hold_timeout_ns=0):
        self.lib = lib
        self.kind = kind
        self.stream = _stream_pointer(stream)
        self.capacity = capacity
        self.records = records
        self.hold_timeout_ns = hold_timeout_ns
        self.result = None
        self._state = "new"

    def __enter__(self):
        if self._state != "new":
            raise RuntimeError("a tilebench timing session is used once; make a new one")
        self._state = "open"
        if self.kind == "control":
            code = self.lib._begin_control(self.stream)
        elif self.kind == "held":
            code = self.lib._begin_control_held(self.stream, self.hold_timeout_ns)
        elif self.kind == "held probe":
            code = self.lib._begin_probe_held(self.stream, self.capacity, self.hold_timeout_ns)
        else:
            code = self.lib._begin_probe(self.stream, self.capacity)
        if code != OK:
            self._state = "closed"
            self.lib._raise_if(code)
        return self

    def declare_calls(self, count):
        """Declares how many calls the session times (control needs at least one)."""
        if self._state != "open":
            raise RuntimeError("declare_calls outside the session's with block")
        code = self.lib._declare_calls(_unsigned(count, 64, "count"))
        if code != OK:
            self._state = "closed"  # the library closed it
            self.lib._raise_if(code)

    def __exit__(self, exc_type, exc, tb):
        state, self._state = self._state, "closed"
        if exc_type is not None:
            if state == "open":
                self.lib._abort()  # NOT_ACTIVE if the failing call closed it already
            return False
        r = TimingResult()
        r.struct_size = ctypes.sizeof(TimingResult)
        kernels = None
        if self.kind.endswith("probe") and self.records and self.capacity > 0:
            kernels = (TimingKernel * self.capacity)()
            r.kernels = ctypes.cast(kernels, ctypes.POINTER(TimingKernel))
            r.kernels_capacity = self.capacity
        code = self.lib._end(ctypes.byref(r))
        if code != OK:
            self.lib._raise_if(code, Result(r))
        written = min(r.kernels_written, self.capacity) if kernels is not None else 0
        self.result = Result(r, (Kernel(*(getattr(kernels[i], f) for f in Kernel._fields))
                                 for i in range(written)))
        return False


# ---- the process's library ----
_lock = threading.Lock()
_loaded = {}  # resolved path -> Library
_default = None


def layout_candidates():
    """Where the library is relative to this package, as (path, layout):
    the build tree (build/src/python/tilebench/ beside build/src/libtilebench_timing.so.2,
    as the harness finds them) and the CMake install (<prefix>/share/tilebench/python/tilebench/
    -> <prefix>/lib/, lib64/ or lib/<multiarch>/libtilebench_timing.so.2). None apply to a
    pip install."""
    here = os.path.dirname(os.path.abspath(__file__))
    python = os.path.dirname(here)
    project = os.path.dirname(python)
    share = os.path.dirname(project)
    if (os.path.basename(python), os.path.basename(project), os.path.basename(share)) == \
            ("python", "tilebench", "share"):
        prefix = os.path.dirname(share)
        multiarch = sysconfig.get_config_var("MULTIARCH")
        return [(os.path.join(prefix, libdir, SONAME), "installed layout")
                for libdir in ["lib", "lib64"] + ([os.path.join("lib", multiarch)] if multiarch else [])]
    if os.path.basename(python) == "python":
        return [(os.path.join(project, SONAME), "build tree: beside python/")]
    return []


def _open(path, how):
    key = os.path.realpath(path) if os.sep in path else path
    if key not in _loaded:
        _loaded[key] = Library(path, how)
    return _loaded[key]


def load(path=None):
    """Loads and checks the timing library and makes it the one the
    module-level functions use. path: this file, else $TILEBENCH_TIMING_LIB,
    else the build tree or CMake install around this package (the first
    of layout_candidates() that exists), else the soname
    libtilebench_timing.so.2 on the system search path. An explicit path or
    the variable is used alone (no fallback); errors list what was tried."""
    global _default
    with _lock:
        if path:
            lib = _open(os.fspath(path), "explicit path")
        elif os.environ.get(ENV_VAR):
            lib = _open(os.environ[ENV_VAR], f"from ${ENV_VAR}")
        else:
            lib, tried = None, []
            for candidate, layout in layout_candidates():
                if os.path.exists(candidate):
                    lib = _open(candidate, layout)
                    break
                tried.append(f"{candidate} ({layout}): no such file")
            if lib is None:
                try:
                    lib = _open(SONAME, "system search path")
                except _NotLoadable as e:
                    tried.append(f"{SONAME} (system search path): {e.reason}")
                    raise TimingLibraryError(
                        f"cannot find the timing library: ${ENV_VAR} is not set; tried "
                        + "; ".join(tried) + f". Pass its path to tilebench.load() or set ${ENV_VAR}.") from None
        _default = lib
        return lib


def library():
    """The library the module-level functions use (loaded by load() on first use)."""
    return _default if _default is not None else load()


def abi_version():
    return library().abi_version()


def control(stream=None, hold_timeout_ns=None):
    """with tilebench.control(stream) as t: ...; t.result (see Session)."""
    return library().control(stream, hold_timeout_ns)


def probe(stream, capacity, records=False, hold_timeout_ns=None):
    """with tilebench.probe(stream, capacity) as t: ...; t.result (see Session)."""
    return library().probe(stream, capacity, records, hold_timeout_ns)


def gpu_state():
    return library().gpu_state()
