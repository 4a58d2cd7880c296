"""The torch and torch-compile providers on the CPU (Debian's python3-torch):
identical inputs, the same oracle, host timings only, and failures (a worker
that crashes, hangs or answers garbage; PyTorch missing) that invalidate the
torch cases with the reason while native results are kept.
Needs TB_BINARY and TILEBENCH_PYTHON (a python that imports torch)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BINARY = os.environ["TB_BINARY"]
FAST = ["--samples", "3", "--warmup-ms", "1", "--sample-ms", "1", "--quiet"]


def torch_python_works():
    python = os.environ.get("TILEBENCH_PYTHON", "python3")
    return subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0


@unittest.skipUnless(torch_python_works(), "no python with PyTorch (install python3-torch)")
class TorchProviderTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tb-torch-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_tb(self, *args, env=None):
        out = os.path.join(self.tmp, f"run{len(os.listdir(self.tmp))}")
        r = subprocess.run([BINARY, "run", *args, *FAST, "--out", out], capture_output=True,
                           text=True, env={**os.environ, **(env or {})}, timeout=600)
        with open(os.path.join(out, "results.json")) as f:
            return r, json.load(f)

    def test_all_ops_on_identical_inputs(self):
        r, doc = self.run_tb("--providers", "native,torch", "--shapes", "5x67,1x1")
        self.assertEqual(r.returncode, 0, r.stderr)
        torch_cases = [c for c in doc["cases"] if c["provider"] == "torch"]
        self.assertEqual(len(torch_cases), 6 * 2 * 2)  # ops x shapes x views
        for c in torch_cases:
            self.assertTrue(c["valid"], c["error"])
            self.assertEqual(c["backend"], "torch-cpu")
            self.assertIsNone(c["device"])  # never faked on the CPU
            self.assertEqual(len(c["host"]["throughput"]["elapsed_ns"]), 3)
            expected = "preallocated_out" if c["op"] in ("sum", "add") else "framework_return_value"
            self.assertEqual(c["output_allocation"], expected)
            self.assertIn("torch", c["provider_details"]["worker"])
        positions = [c["provider_position"] for c in doc["cases"] if c["op"] == "add"]
        self.assertIn(0, positions)  # torch goes first in some cases, second in others
        self.assertIn(1, positions)

    def test_replay_against_torch_is_balanced_and_audited(self):
        out = os.path.join(self.tmp, "replay")
        r = subprocess.run([BINARY, "replay", "--providers", "native,torch", "--ops", "softmax",
                            "--shapes", "8x40", "--rounds", "2", *FAST, "--out", out],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
        entry = doc["replay"]["cases"][0]
        ratios = entry["native_over_framework"]["torch"]["reference"]["host_throughput"]
        self.assertEqual(len(ratios["ratio"]), 2)
        self.assertIn(ratios["verdict"], ("native faster in all pairs", "native slower in all pairs",
                                          "inconclusive"))
        torch_first = [c["round"] for c in doc["cases"] if c["provider"] == "torch" and c["provider_position"] == 0]
        self.assertEqual(len(torch_first), 1)  # torch first in exactly one of the two rounds
        audit = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "tools", "audit", "tilebench_audit.py")
        ok = subprocess.run([sys.executable, audit, out], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        path = os.path.join(out, "results.json")
        ratios["ratio"][0] *= 0.5  # a planted corruption of a native/torch ratio
        with open(path, "w") as f:
            json.dump(doc, f)
        bad = subprocess.run([sys.executable, audit, out], capture_output=True, text=True)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("native_over_framework.torch.reference.host_throughput.ratio[0]", bad.stderr)

    def test_rotated_buffer_sets_stay_correct(self):
        # Several sets cycled call by call: poison reaches every output and
        # the validated call writes set 0.
        r, doc = self.run_tb("--providers", "torch", "--ops", "add,softmax,layernorm", "--shapes", "6x13",
                             env={"TILEBENCH_TORCH_SETS": "3"})
        self.assertEqual(r.returncode, 0, r.stderr)
        for c in doc["cases"]:
            self.assertTrue(c["valid"], c["error"])
            self.assertEqual(c["provider_details"]["buffers"]["sets"], 3)
            # the built-in provider is defended as a user's callable is; the
            # fresh-input call lands on set 0, where add's preallocated output is read
            for name in ("inputs_unchanged", "guard_zones", "fresh_inputs", "timed_outputs"):
                self.assertEqual(c["defences"][name]["outcome"], "passed", (c["id"], name))

    def test_gemm_through_torch_matmul(self):
        r, doc = self.run_tb("--providers", "native,torch", "--ops", "gemm", "--shapes", "17x9x33,1x1x1",
                             "--matrix-realization", "simt,tensor")
        self.assertEqual(r.returncode, 0, r.stderr)
        torch_cases = [c for c in doc["cases"] if c["provider"] == "torch"]
        self.assertEqual(len(torch_cases), 8)  # shapes x views x realizations
        for c in torch_cases:
            self.assertTrue(c["valid"], c["error"])
            self.assertEqual(c["output_allocation"], "preallocated_out")
            implementation = c["provider_details"]["implementation"]
            self.assertIn("torch.matmul", implementation)
            # TF32 exactly when the realization compared is TF32
            tf32 = c["realization"] == "tensor"
            self.assertIn(f"allow_tf32={tf32}", implementation)
            self.assertEqual(c["precision"], "tf32" if tf32 else "fp32")

    def assert_torch_invalid(self, doc, fragment):
        native = [c for c in doc["cases"] if c["provider"] == "native"]
        torch_cases = [c for c in doc["cases"] if c["provider"] == "torch"]
        self.assertTrue(native and all(c["valid"] for c in native))
        self.assertTrue(torch_cases)
        for c in torch_cases:
            self.assertFalse(c["valid"])
            self.assertIn(fragment, c["error"])

    def test_crashed_worker(self):
        r, doc = self.run_tb("--providers", "native,torch", "--ops", "softmax,add", "--shapes", "4x9",
                             env={"TILEBENCH_TORCH_WORKER_FAULT": "prepare:crash"})
        self.assertEqual(r.returncode, 1)
        self.assert_torch_invalid(doc, "exited")

    def test_garbage_reply(self):
        r, doc = self.run_tb("--providers", "native,torch", "--ops", "sum", "--shapes", "4x9",
                             env={"TILEBENCH_TORCH_WORKER_FAULT": "host_sample:garbage"})
        self.assertEqual(r.returncode, 1)
        self.assert_torch_invalid(doc, "garbage")

    def test_hung_worker(self):
        r, doc = self.run_tb("--providers", "native,torch", "--ops", "sum", "--shapes", "4x9",
                             "--input-views", "packed",
                             env={"TILEBENCH_TORCH_WORKER_FAULT": "host_sample:hang",
                                  "TILEBENCH_WORKER_TIMEOUT_S": "3"})
        self.assertEqual(r.returncode, 1)
        self.assert_torch_invalid(doc, "did not answer within 3 s")

    def test_worker_that_stops_reading(self):
        """A worker that closes its stdin makes the harness's write fail with EPIPE: the
        run goes on (SIGPIPE is ignored), the torch cases say why, nothing is left in /tmp."""
        before = {d for d in os.listdir("/tmp") if d.startswith("tilebench-torch-")}
        r, doc = self.run_tb("--providers", "native,torch", "--ops", "sum,add", "--shapes", "4x9",
                             env={"TILEBENCH_TORCH_WORKER_FAULT": "host_sample:close-stdin"})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assert_torch_invalid(doc, "torch worker")
        self.assertEqual(len(doc["cases"]), 2 * 2 * 2)
        after = {d for d in os.listdir("/tmp") if d.startswith("tilebench-torch-")}
        self.assertEqual(after - before, set())

    def test_reply_out_of_range(self):
        r, doc = self.run_tb("--providers", "native,torch", "--ops", "sum", "--shapes", "4x9",
                             env={"TILEBENCH_TORCH_WORKER_FAULT": "host_sample:negative-time"})
        self.assertEqual(r.returncode, 1)
        self.assert_torch_invalid(doc, "reply to host_sample has elapsed_ns out of range")

    def test_error_without_a_message(self):
        r, doc = self.run_tb("--providers", "native,torch", "--ops", "sum", "--shapes", "4x9",
                             env={"TILEBENCH_TORCH_WORKER_FAULT": "host_sample:silent-error"})
        self.assertEqual(r.returncode, 1)
        self.assert_torch_invalid(doc, "the worker failed without saying why")
        self.assertNotIn("(null)", json.dumps(doc))

    def test_torch_missing(self):
        fake = os.path.join(self.tmp, "no_torch")
        os.makedirs(fake)
        with open(os.path.join(fake, "torch.py"), "w") as f:
            f.write("raise ImportError('no torch here')\n")
        r, doc = self.run_tb("--providers", "native,torch", "--ops", "sum", "--shapes", "4x9",
                             env={"PYTHONPATH": fake})
        self.assertEqual(r.returncode, 1)
        self.assert_torch_invalid(doc, "PyTorch is not importable")

    def test_torch_compile_needs_torch_2(self):
        import_version = subprocess.run([os.environ.get("TILEBENCH_PYTHON", "python3"), "-c",
                                         "import torch; print(hasattr(torch, 'compile'))"],
                                        capture_output=True, text=True).stdout.strip()
        r, doc = self.run_tb("--providers", "torch-compile", "--ops", "softmax", "--shapes", "4x9",
                             "--input-views", "packed")
        case = doc["cases"][0]
        if import_version == "True":
            self.assertTrue(case["valid"], case["error"])
            self.assertIsNotNone(case["provider_details"]["compile_ms"])
        else:
            self.assertFalse(case["valid"])
            self.assertIn("torch.compile needs torch 2.0", case["error"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
