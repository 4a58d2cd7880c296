"""The Python package python/tilebench: its ctypes binding against the built
libtilebench_timing (ABI version and struct sizes checked on load, refused on
a mismatch, fail closed without a GPU), its sessions against a fake timing
library compiled here (success, end failure, abort on exception, per-kernel
records), the torch worker's device_sample reply, and an offline
`pip install` into a fresh venv.

Environment: TB_TIMING_LIB (the built library; the tests that need it skip
without it: a build without CUDA headers has none), TB_PYTHON_DIR (the
source tree's python/; default ../python), TB_VENV_PYTHON (the python that
makes the venv; default this one; it needs venv, pip, setuptools>=61 and
wheel: Debian's python3-venv python3-pip python3-setuptools python3-wheel),
TILEBENCH_PYTHON (a python with torch for the worker process test; it skips
without one)."""
import contextlib
import ctypes
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.abspath(os.environ.get("TB_PYTHON_DIR") or os.path.join(os.path.dirname(HERE), "python"))
LIB = os.environ.get("TB_TIMING_LIB", "")
HAVE_LIB = bool(LIB) and os.path.isfile(LIB)
NO_LIB = (f"no timing library (TB_TIMING_LIB={LIB or 'unset'}{'' if not LIB else ' does not exist'}; "
          "a build without CUDA headers has none)")
VENV_PYTHON = os.environ.get("TB_VENV_PYTHON") or sys.executable
TORCH_PYTHON = os.environ.get("TILEBENCH_PYTHON", "python3")
CC = shutil.which("cc") or shutil.which("gcc")

sys.path.insert(0, PYTHON_DIR)
import tilebench  # noqa: E402
from tilebench import timing, torch_worker  # noqa: E402

# Every reply field of device_sample, as src/providers/torch_worker.c and the
# worker before the package had them (docs/torch-worker.md).
DEVICE_SAMPLE_FIELDS = [
    "ok", "code", "error", "scope", "kernels_capacity", "kernels_written", "gpu_elapsed_ns", "declared_calls",
    "counted_launches", "kernels_seen", "kernel_sum_ns", "kernel_span_ns", "streams_seen", "side_stream_kernels",
    "timed_stream_id", "held", "clock_offset_begin_ns", "clock_offset_end_ns", "clock_drift_ns",
    "calibration_width_ns", "kernels_before_launch", "begin_host_ns", "end_host_ns"]

# A stand-in libtilebench_timing with the ABI 2 layouts: begin/declare/end/
# abort keep a session like the real one; end reports 1000 ns per declared
# launch and, for a probe, one kernel record per launch.
FAKE_TIMING_C = r"""
#include <stdint.h>
#include <string.h>
struct k { uint64_t start_ns, end_ns; uint32_t stream_id, correlation_id, device_id, graph_id; };
struct r { uint32_t struct_size, scope; struct k *kernels; uint64_t capacity, written; double gpu;
           uint64_t declared, counted, seen; double sum, span; uint64_t streams, side; uint32_t tsid, held;
           double o1, o2, drift, width; uint64_t before, begin_ns, end_ns; };
static int state; static uint64_t declared; static unsigned cap; static const char *err = "";
static uintptr_t stream; static int aborts;
static int fail(int code, const char *why) { err = why; return code; }
int tb_timing_abi_version(void) { return 2; }
uint32_t tb_timing_result_struct_size(void) { return sizeof(struct r); }
uint32_t tb_timing_gpu_state_struct_size(void) { return 48; }
static int begin(void *s, int kind) {
  if (state) return fail(-2, "a session is already open; end it first (nested begin)");
  state = kind; stream = (uintptr_t)s; declared = 0; err = ""; return 0;
}
int tb_timing_begin_control(void *s) { return begin(s, 1); }
static uint64_t hold_timeout;
int tb_timing_begin_control_held(void *s, uint64_t timeout_ns) {
  if (timeout_ns == 0) return fail(-1, "a hold needs a time-out above 0 ns");
  int rc = begin(s, 1); if (rc == 0) hold_timeout = timeout_ns; return rc;
}
int tb_timing_begin_probe(void *s, unsigned capacity) {
  if (capacity == 0) return fail(-1, "capacity 0");
  cap = capacity; return begin(s, 2);
}
int tb_timing_begin_probe_held(void *s, unsigned capacity, uint64_t timeout_ns) {
  if (timeout_ns == 0) return fail(-1, "a hold needs a time-out above 0 ns");
  int rc = tb_timing_begin_probe(s, capacity); if (rc == 0) hold_timeout = timeout_ns; return rc;
}
int tb_timing_declare_calls(uint64_t n) {
  if (!state) return fail(-3, "declare_calls without an open session");
  declared += n; err = ""; return 0;
}
int tb_timing_end(struct r *o) {
  if (!state) return fail(-3, "end without begin: no session is open");
  int scope = state; state = 0;
  if (o->struct_size != sizeof *o) return fail(-1, "wrong struct_size");
  struct k *kernels = o->kernels; uint64_t capacity = o->capacity;
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o; o->scope = scope; o->kernels = kernels; o->capacity = capacity;
  if (declared == 0) return fail(-8, "no launch declared");
  o->gpu = 1000.0 * declared; o->declared = declared; o->begin_ns = 1; o->end_ns = 2;
  o->held = hold_timeout != 0; hold_timeout = 0;
  if (scope == 2) {
    o->seen = o->counted = declared;
    for (uint64_t i = 0; i < declared && i < capacity && kernels; i++, o->written++) {
      struct k one = {10 * i, 10 * i + 5, 7, (uint32_t)i + 1, 0, 0};
      kernels[i] = one;
    }
  }
  err = ""; return 0;
}
int tb_timing_abort(void) {
  if (!state) return fail(-3, "abort without an open session");
  state = 0; aborts++; err = ""; return 0;
}
int tb_timing_gpu_state(void *out) { (void)out; return fail(-4, "no CUDA driver (fake)"); }
const char *tb_timing_last_error(void) { return err; }
const char *tb_timing_code_name(int code) {
  static const char *names[] = {"TB_TIMING_OK", "TB_TIMING_E_ARGUMENT", "TB_TIMING_E_BUSY",
                                "TB_TIMING_E_NOT_ACTIVE", "TB_TIMING_E_NO_GPU", "TB_TIMING_E_NO_CONTEXT",
                                "TB_TIMING_E_CAPTURING", "TB_TIMING_E_CUDA", "TB_TIMING_E_EMPTY"};
  return code <= 0 && code >= -8 ? names[-code] : "TB_TIMING_E_UNKNOWN";
}
int fake_state(void) { return state; }
uintptr_t fake_stream(void) { return stream; }
uint64_t fake_hold_timeout(void) { return hold_timeout; }
int fake_aborts(void) { return aborts; }
"""

OLD_BUILD_C = "int tb_timing_abi_version(void) { return 1; }\n"


def compile_library(tmp, name, source):
    c = os.path.join(tmp, name + ".c")
    so = os.path.join(tmp, name + ".so")
    with open(c, "w") as f:
        f.write(source)
    subprocess.run([CC, "-shared", "-fPIC", "-O0", "-o", so, c], check=True, capture_output=True)
    return so


def driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "TILEBENCH_TIMING_LIB") and not k.startswith("PIP_")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", **extra)
    return env


class ImportTest(unittest.TestCase):
    def test_imports_without_torch_or_gpu_and_loads_nothing(self):
        code = ("import sys; sys.modules['torch'] = None  # import torch now fails\n"
                "import tilebench, tilebench.timing, tilebench.torch_worker\n"
                "assert tilebench.timing._default is None and not tilebench.timing._loaded\n"
                "print(tilebench.__version__)")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=clean_env(PYTHONPATH=PYTHON_DIR), cwd=tempfile.gettempdir())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), tilebench.__version__)

    def test_version_matches_pyproject(self):
        with open(os.path.join(PYTHON_DIR, "pyproject.toml")) as f:
            version = re.search(r'^version\s*=\s*"([^"]+)"', f.read(), re.M).group(1)
        self.assertEqual(version, tilebench.__version__)
        self.assertEqual(version, "0.1.0")

    def test_layouts_are_the_headers(self):
        # include/tilebench/timing.h: 160 bytes (checked there at compile time), 48 and 32
        self.assertEqual(ctypes.sizeof(timing.TimingResult), 160)
        self.assertEqual(ctypes.sizeof(timing.TimingGpuState), 48)
        self.assertEqual(ctypes.sizeof(timing.TimingKernel), 32)
        self.assertEqual(timing.TimingResult.gpu_elapsed_ns.offset, 32)
        self.assertEqual(timing.TimingResult.end_host_ns.offset, 152)
        self.assertEqual(["ok", "code", "error", *timing.RESULT_FIELDS], DEVICE_SAMPLE_FIELDS)

    def test_worker_runs_as_a_module(self):
        # the harness starts `python3 -u -m tilebench.torch_worker` with PYTHONPATH
        # set; without torch it answers the handshake's failure and exits 0
        fake = tempfile.mkdtemp(prefix="tb-notorch-")
        self.addCleanup(shutil.rmtree, fake)
        with open(os.path.join(fake, "torch.py"), "w") as f:
            f.write("raise ImportError('no torch here')\n")
        r = subprocess.run([sys.executable, "-u", "-m", "tilebench.torch_worker"], input="",
                           capture_output=True, text=True, cwd=fake,
                           env=clean_env(PYTHONPATH=PYTHON_DIR + os.pathsep + fake))
        self.assertEqual(r.returncode, 0, r.stderr)
        hello = json.loads(r.stdout)
        self.assertFalse(hello["ok"])
        self.assertIn("PyTorch is not importable", hello["error"])


@unittest.skipUnless(HAVE_LIB, NO_LIB)
class BuiltLibraryTest(unittest.TestCase):
    def setUp(self):
        patcher = mock.patch.dict(os.environ)
        patcher.start()
        self.addCleanup(patcher.stop)
        os.environ.pop("TILEBENCH_TIMING_LIB", None)
        self.lib = tilebench.load(LIB)

    def test_abi_version_and_struct_sizes(self):
        self.assertEqual(tilebench.abi_version(), 2)
        self.assertIs(tilebench.library(), self.lib)
        cdll = self.lib.cdll
        self.assertEqual(cdll.tb_timing_result_struct_size(), ctypes.sizeof(timing.TimingResult))
        self.assertEqual(cdll.tb_timing_gpu_state_struct_size(), ctypes.sizeof(timing.TimingGpuState))
        self.assertEqual(self.lib.result_struct_size, 160)
        self.assertEqual(self.lib.gpu_state_struct_size, 48)
        self.assertEqual(self.lib.code_name(-2), "TB_TIMING_E_BUSY")
        for code, name in timing.CODES.items():
            self.assertEqual(self.lib.code_name(code), name)

    def test_library_location(self):
        os.environ["TILEBENCH_TIMING_LIB"] = LIB
        self.assertEqual(os.path.realpath(tilebench.load().path), os.path.realpath(LIB))
        os.environ["TILEBENCH_TIMING_LIB"] = "/nonexistent/libtilebench_timing.so.2"
        with self.assertRaises(tilebench.TimingLibraryError) as cm:
            tilebench.load()  # the variable is used alone, no fallback
        self.assertIn("/nonexistent/libtilebench_timing.so.2 (from $TILEBENCH_TIMING_LIB)", str(cm.exception))
        del os.environ["TILEBENCH_TIMING_LIB"]
        with mock.patch.object(timing, "SONAME", "libtilebench_timing_nonexistent.so.1"):
            with self.assertRaises(tilebench.TimingLibraryError) as cm:
                tilebench.load()
        text = str(cm.exception)
        self.assertIn("$TILEBENCH_TIMING_LIB is not set", text)
        self.assertIn("libtilebench_timing_nonexistent.so.1 (system search path): ", text)
        self.assertNotIn("installed layout", text)  # a source tree is not an install
        with self.assertRaises(tilebench.TimingLibraryError) as cm:
            tilebench.load("/nonexistent/x.so")
        self.assertIn("tried /nonexistent/x.so (explicit path)", str(cm.exception))

    def test_layouts_around_the_package(self):
        # the CMake install: <prefix>/share/tilebench/python/tilebench/ finds
        # <prefix>/lib/ (or lib64/) libtilebench_timing.so.2; the build tree:
        # build/src/python/tilebench/ finds build/src/libtilebench_timing.so.2
        for package_dir, lib_dir in ((os.path.join("share", "tilebench", "python"), "lib"),
                                     (os.path.join("share", "tilebench", "python"), "lib64"),
                                     ("python", ".")):
            prefix = tempfile.mkdtemp(prefix="tb-prefix-")
            self.addCleanup(shutil.rmtree, prefix)
            shutil.copytree(os.path.join(PYTHON_DIR, "tilebench"), os.path.join(prefix, package_dir, "tilebench"),
                            ignore=shutil.ignore_patterns("__pycache__"))
            lib = os.path.normpath(os.path.join(prefix, lib_dir, "libtilebench_timing.so.2"))
            os.makedirs(os.path.dirname(lib), exist_ok=True)
            shutil.copy(LIB, lib)
            code = "import tilebench; lib = tilebench.load(); print(lib.path); print(lib.abi_version())"
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=prefix,
                               env=clean_env(PYTHONPATH=os.path.join(prefix, package_dir)))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), [lib, "2"])
            os.remove(lib)
            r = subprocess.run([sys.executable, "-m", "tilebench"], capture_output=True, text=True, cwd=prefix,
                               env=clean_env(PYTHONPATH=os.path.join(prefix, package_dir)))
            self.assertEqual(r.returncode, 1)
            self.assertIn(f"{lib} (", r.stderr)
            self.assertIn("no such file", r.stderr)

    def expected_failure(self):
        # without a driver every begin is NO_GPU; with one but no context (this
        # process never makes one) NO_CONTEXT, or NO_GPU if it finds no device
        return ("TB_TIMING_E_NO_GPU", "TB_TIMING_E_NO_CONTEXT") if driver_present() else ("TB_TIMING_E_NO_GPU",)

    def test_control_without_gpu_fails_closed(self):
        seen = []
        for _ in range(2):  # the second: the same error, not BUSY: no session was left open
            ran = []
            with self.assertRaises(tilebench.TimingError) as cm:
                with tilebench.control(None) as t:
                    ran.append(t)
            self.assertEqual(ran, [], "the block ran after a failed begin")
            e = cm.exception
            self.assertIn(e.name, self.expected_failure())
            self.assertEqual(e.code, {"TB_TIMING_E_NO_GPU": -4, "TB_TIMING_E_NO_CONTEXT": -5}[e.name])
            self.assertTrue(e.message)
            self.assertIn(e.name, str(e))
            self.assertIsNone(e.result)
            seen.append((e.code, e.name))
            self.assertEqual(self.lib.abort(), -3)  # NOT_ACTIVE: nothing open
        self.assertEqual(seen[0], seen[1])
        with self.assertRaises(tilebench.TimingError) as cm:
            with tilebench.probe(None, 16):
                self.fail("the block ran after a failed begin")
        self.assertEqual((cm.exception.code, cm.exception.name), seen[0])
        if not driver_present():
            with self.assertRaises(tilebench.TimingError) as cm:
                tilebench.gpu_state()
            self.assertEqual(cm.exception.name, "TB_TIMING_E_NO_GPU")

    def test_wrong_struct_size_refused(self):
        class Longer(ctypes.Structure):
            _fields_ = timing.TimingResult._fields_ + [("extra", ctypes.c_uint64)]

        with mock.patch.object(timing, "TimingResult", Longer):
            with self.assertRaises(tilebench.TimingLibraryError) as cm:
                timing.Library(LIB)
        text = str(cm.exception)
        self.assertIn("struct tb_timing_result is 160 bytes in", text)
        self.assertIn("but 168 bytes in this binding", text)

        class Shorter(ctypes.Structure):
            _fields_ = timing.TimingGpuState._fields_[:-1]

        with mock.patch.object(timing, "TimingGpuState", Shorter):
            with self.assertRaises(tilebench.TimingLibraryError) as cm:
                timing.Library(LIB)
        self.assertIn("struct tb_timing_gpu_state is 48 bytes in", str(cm.exception))
        self.assertIn("but 40 bytes in this binding", str(cm.exception))

        with mock.patch.object(timing, "ABI_VERSION", 1):  # an ABI 1 binding meets this library
            with self.assertRaises(tilebench.TimingLibraryError) as cm:
                timing.Library(LIB)
        self.assertIn("has timing ABI version 2; this binding (tilebench.timing) is for ABI version 1",
                      str(cm.exception))
        self.assertEqual(timing.Library(LIB).abi_version(), 2)  # unpatched: accepted

    @unittest.skipUnless(CC, "no C compiler to build an old-style library")
    def test_old_build_and_foreign_library_refused(self):
        tmp = tempfile.mkdtemp(prefix="tb-old-")
        self.addCleanup(shutil.rmtree, tmp)
        with self.assertRaises(tilebench.TimingLibraryError) as cm:
            timing.Library(compile_library(tmp, "old", OLD_BUILD_C))
        self.assertIn("does not export tb_timing_result_struct_size", str(cm.exception))
        self.assertIn("older build", str(cm.exception))
        with self.assertRaises(tilebench.TimingLibraryError) as cm:
            timing.Library("libc.so.6")
        self.assertIn("does not export tb_timing_abi_version", str(cm.exception))

    def test_arguments_checked_before_the_library(self):
        with self.assertRaises(ValueError):
            tilebench.probe(None, -1)
        with self.assertRaises(ValueError):
            tilebench.probe(None, 1 << 32)
        with self.assertRaises(TypeError):
            tilebench.control("stream")
        with self.assertRaises(ValueError):
            tilebench.control(-5)
        session = tilebench.control(None)
        with self.assertRaises(RuntimeError):
            session.declare_calls(1)  # outside its with block


@unittest.skipUnless(CC, "no C compiler to build the fake timing library")
class SessionTest(unittest.TestCase):
    """The context managers against a fake library: what a GPU would exercise."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-fake-")
        cls.path = compile_library(cls.tmp, "fake_timing", FAKE_TIMING_C)
        cls.lib = timing.Library(cls.path)
        cls.fake = ctypes.CDLL(cls.path)
        cls.fake.fake_stream.restype = ctypes.c_size_t
        cls.fake.fake_hold_timeout.restype = ctypes.c_uint64

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def tearDown(self):
        self.assertEqual(self.fake.fake_state(), 0, "a session was left open")

    def test_control(self):
        with self.lib.control(0x1234) as t:
            t.declare_calls(2)
            t.declare_calls(1)
        self.assertEqual(self.fake.fake_stream(), 0x1234)
        r = t.result
        self.assertEqual((r.scope, r.gpu_elapsed_ns, r.declared_calls, r.counted_launches, r.held, r.kernels),
                         (1, 3000.0, 3, 0, 0, ()))
        self.assertEqual(list(r.as_dict()), list(timing.RESULT_FIELDS))

        class Stream:  # a torch.cuda.Stream
            cuda_stream = 0x99

        for stream, pointer in ((None, 0), (0, 0), (Stream(), 0x99), (ctypes.c_void_p(0x77), 0x77)):
            with self.lib.control(stream) as t:
                t.declare_calls(1)
            self.assertEqual(self.fake.fake_stream(), pointer)

    def test_end_failure_raises_without_result(self):
        with self.assertRaises(tilebench.TimingError) as cm:
            with self.lib.control(None) as t:
                pass  # nothing declared: the library refuses to time it
        e = cm.exception
        self.assertEqual((e.code, e.name, e.message), (-8, "TB_TIMING_E_EMPTY", "no launch declared"))
        self.assertIsNone(t.result)
        self.assertEqual((e.result.scope, e.result.gpu_elapsed_ns), (1, 0.0))

    def test_exception_aborts(self):
        aborts = self.fake.fake_aborts()
        with self.assertRaises(KeyError):
            with self.lib.probe(None, 8) as t:
                t.declare_calls(1)
                raise KeyError("the work failed")
        self.assertIsNone(t.result)
        self.assertEqual(self.fake.fake_aborts(), aborts + 1)

    def test_nested_begin_is_busy_and_the_outer_survives_if_caught(self):
        with self.lib.control(None) as outer:
            with self.assertRaises(tilebench.TimingError) as cm:
                with self.lib.control(None):
                    self.fail("nested block ran")
            self.assertEqual(cm.exception.name, "TB_TIMING_E_BUSY")
            self.assertIn("nested begin", cm.exception.message)
            outer.declare_calls(1)
        self.assertEqual(outer.result.declared_calls, 1)
        with self.assertRaises(RuntimeError):
            with outer:  # a session is used once
                pass

    def test_held_control(self):
        with self.lib.control(0x55, hold_timeout_ns=10**9) as t:
            self.assertEqual(self.fake.fake_hold_timeout(), 10**9)
            t.declare_calls(4)
        self.assertEqual((t.result.held, t.result.declared_calls, t.result.counted_launches), (1, 4, 0))
        with self.assertRaises(tilebench.TimingError) as cm:
            with self.lib.control(None, hold_timeout_ns=0):
                pass
        self.assertEqual(cm.exception.name, "TB_TIMING_E_ARGUMENT")
        with self.assertRaises(ValueError):
            self.lib.control(None, hold_timeout_ns=-1)
        # the module-level functions take the hold too (docs/python.md)
        saved = timing._default
        timing._default = self.lib
        try:
            with tilebench.control(0x55, hold_timeout_ns=7) as t:
                self.assertEqual(self.fake.fake_hold_timeout(), 7)
                t.declare_calls(1)
            with tilebench.probe(0x55, 4, hold_timeout_ns=8) as t:
                self.assertEqual(self.fake.fake_hold_timeout(), 8)
                t.declare_calls(1)
        finally:
            timing._default = saved
        self.assertEqual(t.result.held, 1)

    def test_probe_records(self):
        with self.lib.probe(None, 3, records=True) as t:
            t.declare_calls(5)  # more than the capacity: records stop at 3
        r = t.result
        self.assertEqual((r.scope, r.kernels_seen, r.kernels_written, r.kernels_capacity), (2, 5, 3, 3))
        self.assertEqual(r.kernels[2], tilebench.Kernel(20, 25, 7, 3, 0, 0))
        self.assertEqual(len(r.kernels), 3)
        with self.lib.probe(None, 3) as t:
            t.declare_calls(2)
        self.assertEqual((t.result.kernels_written, t.result.kernels), (0, ()))
        with self.assertRaises(tilebench.TimingError) as cm:
            with self.lib.probe(None, 0):
                pass
        self.assertEqual(cm.exception.name, "TB_TIMING_E_ARGUMENT")
        # held: the hold's time-out reaches the library, records are kept alike
        with self.lib.probe(None, 3, records=True, hold_timeout_ns=10**9) as t:
            self.assertEqual(self.fake.fake_hold_timeout(), 10**9)
            t.declare_calls(2)
        self.assertEqual((t.result.scope, t.result.held, t.result.kernels_written), (2, 1, 2))
        with self.assertRaises(tilebench.TimingError) as cm:
            with self.lib.probe(None, 3, hold_timeout_ns=0):
                pass
        self.assertEqual(cm.exception.name, "TB_TIMING_E_ARGUMENT")

    def test_worker_device_sample_reply(self):
        # the worker's reply, field for field, on success and on failure
        reply, calls = self.worker_sample(self.path, {"probe": True, "calls": 2, "capacity": 8})
        self.assertEqual(list(reply), DEVICE_SAMPLE_FIELDS)
        self.assertEqual((reply["ok"], reply["code"], reply["error"]), (True, 0, ""))
        self.assertEqual((reply["scope"], reply["gpu_elapsed_ns"], reply["declared_calls"],
                          reply["counted_launches"], reply["kernels_seen"]), (2, 2000.0, 2, 2, 2))
        self.assertEqual(calls, 2)
        reply, calls = self.worker_sample(self.path, {"probe": False, "calls": 0, "capacity": 8})
        self.assertEqual(list(reply), DEVICE_SAMPLE_FIELDS)
        self.assertEqual((reply["code"], reply["error"], reply["scope"]),
                         (-8, "TB_TIMING_E_EMPTY: no launch declared", 1))
        reply, calls = self.worker_sample(self.path, {"probe": False, "calls": 1, "capacity": 8}, busy=True)
        self.assertEqual(list(reply), DEVICE_SAMPLE_FIELDS)
        self.assertEqual((reply["code"], reply["scope"], calls), (-2, 0, 0))
        self.assertTrue(reply["error"].startswith("TB_TIMING_E_BUSY: "))
        self.lib.abort()
        reply, _ = self.worker_sample("/nonexistent/lib.so", {"probe": False, "calls": 1, "capacity": 8})
        self.assertEqual(reply, {"ok": True, "code": -4, "error": "no GPU timing in this worker"})

    def test_worker_batch_modes(self):
        # graph: captured once over the calls, replayed once untimed, then per
        # sample behind a hold, control and probe alike
        reply, calls, torch = self.worker_sample(self.path, {"mode": "graph", "probe": False, "calls": 3,
                                                             "capacity": 8}, with_torch=True)
        self.assertEqual((reply["code"], reply["declared_calls"], reply["held"]), (0, 3, 1))
        reply, calls, torch = self.worker_sample(self.path, {"mode": "graph", "probe": True, "calls": 3,
                                                             "capacity": 8}, with_torch=True)
        self.assertEqual((reply["code"], reply["scope"], reply["held"]), (0, 2, 1))
        self.assertEqual((calls, torch.captures, torch.replays), (3, 1, 2))
        # seven buffer sets, three calls a graph: three graphs walk the rotation
        reply, calls, torch = self.worker_sample(self.path, {"mode": "graph", "probe": False, "calls": 3,
                                                             "capacity": 8}, with_torch=True, sets=7)
        self.assertEqual((reply["code"], calls, torch.captures, torch.replays), (0, 9, 3, 4))
        # the worker runs on a stream of its own and captures its graphs on it (docs/method.md
        # §2.3: a graph captured on torch's capture stream slows once a third exists)
        self.assertIsNotNone(torch.current)
        self.assertEqual(torch.captured_on, [torch.current] * 3)
        # held: a held control session, the calls issued eagerly behind the hold
        reply, calls = self.worker_sample(self.path, {"mode": "held", "probe": False, "calls": 2,
                                                      "capacity": 8})
        self.assertEqual((reply["code"], reply["held"], reply["declared_calls"], calls), (0, 1, 2, 2))
        # a capture that fails: the mode's code and the exception, no session left open
        reply, calls, torch = self.worker_sample(self.path, {"mode": "graph", "probe": False, "calls": 2,
                                                             "capacity": 8}, with_torch=True,
                                                 capture_fails=True)
        self.assertEqual(reply["code"], -7)
        self.assertIn("graph capture failed: RuntimeError: operation not permitted", reply["error"])
        reply, _ = self.worker_sample(self.path, {"mode": "held", "probe": True, "calls": 1, "capacity": 8})
        self.assertEqual(reply["code"], -1)

    def worker_sample(self, lib_path, req, busy=False, with_torch=False, capture_fails=False, sets=1):
        """Worker.device_sample with a stand-in torch whose CUDA is 'available'."""
        calls = []

        class Torch:
            captures = replays = 0
            current = None  # the stream set_stream made current
            captured_on = []  # the stream= of each capture

            class cuda:
                is_available = staticmethod(lambda: True)
                synchronize = staticmethod(lambda: None)
                Stream = staticmethod(lambda: type("S", (), {"cuda_stream": 0x42})())

                @staticmethod
                def set_stream(stream):
                    Torch.current = stream

                @staticmethod
                def current_stream():
                    return Torch.current

                class CUDAGraph:
                    def replay(self):
                        Torch.replays += 1

                @staticmethod
                @contextlib.contextmanager
                def graph(g, stream=None):
                    if capture_fails:
                        raise RuntimeError("operation not permitted when stream is capturing")
                    Torch.captures += 1
                    Torch.captured_on.append(stream)
                    yield

        with mock.patch.dict(os.environ, {"TILEBENCH_TIMING_LIB": lib_path}), \
                mock.patch.object(timing, "_default", None), mock.patch.object(timing, "_loaded", {}):
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                w = torch_worker.Worker(Torch)
            if lib_path.startswith("/nonexistent"):
                self.assertIsNone(w.timing)
                self.assertIn("no GPU timing", err.getvalue())
            w.sets, w.fn = [{} for _ in range(sets)], calls.append
            if busy:
                self.assertEqual(self.lib.cdll.tb_timing_begin_control(None), 0)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                w.device_sample(req)
        if with_torch:
            return json.loads(out.getvalue()), len(calls), Torch
        return json.loads(out.getvalue()), len(calls)


def torch_python_works():
    try:
        return subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode == 0
    except OSError:
        return False


@unittest.skipUnless(torch_python_works(), f"no torch in {TORCH_PYTHON} (TILEBENCH_PYTHON)")
class WorkerProcessTest(unittest.TestCase):
    def test_handshake_and_sigint_ignored(self):
        p = subprocess.Popen([TORCH_PYTHON, "-u", "-m", "tilebench.torch_worker"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, cwd=tempfile.gettempdir(),
                             env=clean_env(PYTHONPATH=PYTHON_DIR))
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.stdin.close)
        try:
            hello = json.loads(p.stdout.readline())
            self.assertEqual(list(hello), ["ok", "torch", "cuda", "cuda_version", "cudnn", "device", "threads",
                                           "interop_threads", "config", "timing", "thread_env"])
            self.assertTrue(hello["ok"])
            p.send_signal(signal.SIGINT)  # the harness handles interrupts, the worker goes on
            p.stdin.write('{"cmd": "release"}\n')
            p.stdin.flush()
            self.assertEqual(json.loads(p.stdout.readline()), {"ok": True})
            p.stdin.write('{"cmd": "quit"}\n')
            p.stdin.flush()
            self.assertEqual(p.wait(timeout=60), 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()


class PipInstallTest(unittest.TestCase):
    def run_ok(self, args, what, **kw):
        r = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
        self.assertEqual(r.returncode, 0, f"{what} failed ({' '.join(args)}):\n{r.stdout}\n{r.stderr}")
        return r

    def test_offline_pip_install_into_a_fresh_venv(self):
        tmp = tempfile.mkdtemp(prefix="tb-pip-")
        self.addCleanup(shutil.rmtree, tmp)
        # a copy: pip builds in the source directory (build/, *.egg-info)
        src = os.path.join(tmp, "src")
        shutil.copytree(PYTHON_DIR, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        venv = os.path.join(tmp, "venv")
        env = clean_env()
        needs = "needs Debian's python3-venv python3-pip python3-setuptools python3-wheel"
        self.run_ok([VENV_PYTHON, "-m", "venv", "--system-site-packages", venv], f"venv ({needs})", env=env)
        python = os.path.join(venv, "bin", "python")
        # (setuptools before pip: pip imports distutils, which setuptools must precede)
        self.run_ok([python, "-c", "import setuptools, wheel"], f"build tools in the venv ({needs})", env=env)
        self.run_ok([python, "-m", "pip", "--version"], f"pip in the venv ({needs})", env=env)
        self.run_ok([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", src],
                    "pip install", env=env, cwd=tmp)
        shutil.rmtree(src)  # the installed copy must stand alone
        code = ("import importlib.metadata as m, importlib.util as u, tilebench\n"
                "print(tilebench.__file__); print(m.version('tilebench'))\n"
                "print(u.find_spec('tilebench.torch_worker') is not None)")
        r = self.run_ok([python, "-c", code], "import of the installed package", env=env, cwd=tmp)
        where, version, worker = r.stdout.split()
        self.assertTrue(os.path.realpath(where).startswith(os.path.realpath(venv)), where)
        self.assertEqual((version, worker), (tilebench.__version__, "True"))
        if HAVE_LIB:
            r = self.run_ok([python, "-m", "tilebench"], "python -m tilebench", cwd=tmp,
                            env=clean_env(TILEBENCH_TIMING_LIB=LIB))
            self.assertIn("abi_version: 2", r.stdout)
            r = self.run_ok([python, "-c", "import tilebench; print(tilebench.abi_version())"], "abi_version",
                            cwd=tmp, env=clean_env(TILEBENCH_TIMING_LIB=LIB))
            self.assertEqual(r.stdout.strip(), "2")


if __name__ == "__main__":
    unittest.main(verbosity=2)
