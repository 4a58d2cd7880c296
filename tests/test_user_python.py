"""The user-python provider (issue 19's third way) on the CPU with Debian's
python3-torch: a correct callable valid beside native and torch with its
file's digest recorded and audited; broken callables each invalid for their
own reason; bad --kernel forms refused with exit 2 before anything runs.
Needs TB_BINARY, TB_AUDIT, TB_SOURCE_DIR and TILEBENCH_PYTHON."""
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from results_io import load_results

BINARY = os.environ["TB_BINARY"]
AUDIT = os.environ["TB_AUDIT"]
SOURCE = os.environ["TB_SOURCE_DIR"]
EXAMPLE = os.path.join(SOURCE, "examples", "user-kernel-python", "softmax.py")
BROKEN = os.path.join(SOURCE, "tests", "user_python", "broken.py")
# One function per op, each with that op's documented signature.
OPS_MODULE = """
import torch
import torch.nn.functional as F

def sum(x):
    return x.sum(dim=-1)

def rmsnorm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight

def layernorm(x, weight, bias, eps):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)

def add(a, b):
    return a + b

def gelu_add(a, b):
    return F.gelu(a + b)
"""
FAST = ["--samples", "3", "--warmup-ms", "1", "--sample-ms", "1", "--quiet"]


def torch_python_works():
    python = os.environ.get("TILEBENCH_PYTHON", "python3")
    return subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0


@unittest.skipUnless(torch_python_works(), "no python with PyTorch (install python3-torch)")
class UserPythonTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tb-user-python-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_tb(self, kernel, providers="native,user-python", shapes="8x40", env=None, extra=()):
        out = os.path.join(self.tmp, f"run{len(os.listdir(self.tmp))}")
        r = subprocess.run([BINARY, "run", "--ops", "softmax", "--shapes", shapes, "--providers",
                            providers, "--kernel", kernel, *FAST, *extra, "--out", out],
                           capture_output=True, text=True, timeout=600,
                           env={**os.environ, **(env or {})})
        doc = load_results(out, missing_ok=True)
        return r, doc, out

    def user_cases(self, doc):
        cases = [c for c in doc["cases"] if c["provider"] == "user-python"]
        self.assertEqual(len(cases), 2)  # packed and strided
        return cases

    def test_correct_callable_is_valid_with_its_digest_and_audited(self):
        r, doc, out = self.run_tb(f"{EXAMPLE}:softmax", providers="native,torch,user-python")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(EXAMPLE, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        for c in doc["cases"]:
            self.assertTrue(c["valid"], f"{c['id']}: {c['error']}")
        for c in self.user_cases(doc):
            d = c["provider_details"]
            self.assertEqual(d["sha256"], digest)
            self.assertEqual(d["module_path"], os.path.realpath(EXAMPLE))
            self.assertEqual(d["file_name"], "softmax.py")
            self.assertEqual((d["function"], d["qualname"]), ("softmax", "softmax"))
            self.assertEqual(c["output_allocation"], "framework_return_value")
            self.assertEqual(len(c["host"]["throughput"]["elapsed_ns"]), 3)  # the worker's clock
            for name in ("every_call", "inputs_unchanged", "fresh_inputs", "guard_zones",
                         "timed_outputs", "plausible"):
                self.assertEqual(c["defences"][name]["outcome"], "passed", name)
            self.assertIn("intact", c["defences"]["guard_zones"]["detail"])
            self.assertTrue(c["defences"]["plausible"]["worker_clock"])
            host = c["host"]
            for metric in ("throughput", "latency"):  # the harness's clock bounds the worker's
                for worker, harness in zip(host[metric]["elapsed_ns"],
                                           host[metric]["harness_elapsed_ns"]):
                    self.assertLessEqual(worker, harness)
        audit = self.audit(out)
        self.assertEqual(audit.returncode, 0, audit.stdout + audit.stderr)
        with open(os.path.join(out, "results.md")) as f:
            self.assertIn(f"- user kernel (provider user-python): softmax.py sha256:{digest}",
                          f.read())

    def test_each_op_gets_its_documented_signature(self):
        module = os.path.join(self.tmp, "ops.py")
        with open(module, "w") as f:
            f.write(OPS_MODULE)
        for op in ("sum", "rmsnorm", "layernorm", "add", "gelu_add"):
            out = os.path.join(self.tmp, f"op-{op}")
            r = subprocess.run([BINARY, "run", "--ops", op, "--shapes", "5x67", "--providers",
                                "native,user-python", "--kernel", f"{module}:{op}", *FAST,
                                "--out", out], capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, f"{op}: {r.stderr}")
            with open(os.path.join(out, "results.json")) as f:
                cases = [c for c in json.load(f)["cases"] if c["provider"] == "user-python"]
            self.assertEqual(len(cases), 2)
            for c in cases:
                self.assertTrue(c["valid"], f"{c['id']}: {c['error']}")

    def test_an_input_written_in_one_buffer_set_of_several_is_found(self):
        # three sets rotating, only sets 1 and 2 written: the worker must
        # compare every set, not read back set 0
        r, doc, _ = self.run_tb(f"{BROKEN}:modifies_other_sets", env={"TILEBENCH_TORCH_SETS": "3"})
        self.assertEqual(r.returncode, 1, r.stderr)
        for c in self.user_cases(doc):
            self.assertEqual(c["provider_details"]["buffers"]["sets"], 3)
            self.assertIn("defence inputs_unchanged failed", c["error"])

    def audit(self, out, *args):
        return subprocess.run(["python3", AUDIT, out, *args], capture_output=True, text=True)

    def test_audit_rechecks_the_callable_fields_and_the_module_file(self):
        module = os.path.join(self.tmp, "mine.py")
        shutil.copy(EXAMPLE, module)
        r, doc, out = self.run_tb(f"{module}:softmax")
        self.assertEqual(r.returncode, 0, r.stderr)
        audit = self.audit(out, "--check-current-artifacts")
        self.assertEqual(audit.returncode, 0, audit.stdout + audit.stderr)
        with open(module, "a") as f:  # the file named is no longer the file that ran
            f.write("# edited after the run\n")
        audit = self.audit(out, "--check-current-artifacts")
        self.assertNotEqual(audit.returncode, 0)
        self.assertIn("user-python module", audit.stdout + audit.stderr)
        for c in doc["cases"]:
            if c["provider"] == "user-python":
                c["provider_details"]["file_name"] = "other.py"
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(doc, f)
        audit = self.audit(out)
        self.assertNotEqual(audit.returncode, 0)
        self.assertIn("provider_details.file_name", audit.stdout + audit.stderr)

    def assert_invalid(self, function, reason, extra=()):
        r, doc, _ = self.run_tb(f"{BROKEN}:{function}", extra=extra)
        self.assertEqual(r.returncode, 1, r.stderr)  # cases invalid, the run kept
        native = [c for c in doc["cases"] if c["provider"] == "native"]
        self.assertTrue(all(c["valid"] for c in native))
        for c in self.user_cases(doc):
            self.assertFalse(c["valid"])
            self.assertIn(reason, c["error"])
        return self.user_cases(doc)

    def test_modifying_the_input_fails_inputs_unchanged(self):
        for c in self.assert_invalid("modifies_input", "defence inputs_unchanged failed"):
            self.assertEqual(c["defences"]["inputs_unchanged"]["outcome"], "failed")
            self.assertEqual(c["defences"]["every_call"]["outcome"], "passed")

    def test_an_exception_makes_the_case_invalid_with_its_text(self):
        self.assert_invalid("raises", "the callable raises raised ValueError: deliberate failure")

    def test_a_wrong_shape_is_named(self):
        self.assert_invalid("wrong_shape", "returned shape (8, 39), the output is (8, 40)")

    def test_a_worker_killed_by_the_callable_restarts_with_it(self):
        # the strided case runs in a fresh worker: were the callable not
        # imported again there, PyTorch's own softmax would run, valid
        self.assert_invalid("exits", "the torch worker exited (status 3)")

    def test_no_tensor_or_another_dtype_is_named(self):
        self.assert_invalid("returns_none", "returned a NoneType, not a torch.Tensor")
        self.assert_invalid("returns_float64", "returned torch.float64, the output is torch.float32")

    def test_a_cached_output_fails_fresh_inputs(self):
        for c in self.assert_invalid("cached_output", "defence fresh_inputs failed"):
            self.assertEqual(c["defences"]["every_call"]["outcome"], "passed")

    def test_a_write_past_an_input_fails_guard_zones(self):
        for c in self.assert_invalid("writes_past_input", "defence guard_zones failed"):
            self.assertIn("after input x of buffer set 0", c["error"])
            # the input itself and the output are right: only the zone shows it
            for name in ("inputs_unchanged", "every_call"):
                self.assertEqual(c["defences"][name]["outcome"], "passed", name)

    def test_a_slowed_worker_clock_is_not_what_the_harness_measured(self):
        # samples of 10 ms (the default; FAST's 1 ms are within the rule's 5 ms slack)
        slow = ("--sample-ms", "10")
        for c in self.assert_invalid("slows_the_clock", "defence plausible failed", extra=slow):
            self.assertIn("not what the harness's clock measured", c["error"])
            for name in ("every_call", "fresh_inputs", "timed_outputs"):
                self.assertEqual(c["defences"][name]["outcome"], "passed", name)
        # the broken clock is the worker's, not the harness's: native beside it stands
        r, doc, out = self.run_tb(f"{BROKEN}:slows_the_clock", extra=slow)
        audit = self.audit(out)
        self.assertEqual(audit.returncode, 0, audit.stdout + audit.stderr)

    def test_wrong_outputs_off_the_validated_set_fail_timed_outputs(self):
        r, doc, out = self.run_tb(f"{BROKEN}:only_first_set", env={"TILEBENCH_TORCH_SETS": "3"})
        self.assertEqual(r.returncode, 1, r.stderr)
        for c in self.user_cases(doc):
            self.assertFalse(c["valid"])
            self.assertEqual(c["defences"]["every_call"]["outcome"], "passed")
            timed = c["defences"]["timed_outputs"]
            self.assertEqual((timed["outcome"], timed["sets"]), ("failed", 3))
            self.assertIn(timed["failed_set"], (1, 2))
        audit = self.audit(out)
        self.assertEqual(audit.returncode, 0, audit.stdout + audit.stderr)

    def test_without_pytorch_the_cases_say_why_and_native_stands(self):
        fake = os.path.join(self.tmp, "no_torch")
        os.makedirs(fake)
        with open(os.path.join(fake, "torch.py"), "w") as f:
            f.write("raise ImportError('no torch here')\n")
        r, doc, _ = self.run_tb(f"{EXAMPLE}:softmax", env={"PYTHONPATH": fake})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertTrue(all(c["valid"] for c in doc["cases"] if c["provider"] == "native"))
        for c in self.user_cases(doc):
            self.assertFalse(c["valid"])
            self.assertIn("PyTorch is not importable", c["error"])

    def assert_refused(self, kernel, message, providers="native,user-python"):
        r, doc, out = self.run_tb(kernel, providers=providers)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(message, r.stderr)
        self.assertIsNone(doc)  # nothing measured

    def test_bad_kernel_forms_exit_2(self):
        self.assert_refused(EXAMPLE, "needs FILE.py:FUNCTION")
        self.assert_refused(f"{EXAMPLE}:", "needs FILE.py:FUNCTION")
        self.assert_refused(f"{self.tmp}/missing.py:softmax", "is not a readable file")
        self.assert_refused(f"{BROKEN}:no_such_function", "has no attribute 'no_such_function'")
        self.assert_refused(f"{BROKEN}:not_a_function", "is a int, not a callable")
        self.assert_refused(f"{EXAMPLE}:softmax", "neither the user provider nor --launch beside it",
                            providers="native,user,user-python")


if __name__ == "__main__":
    unittest.main()
