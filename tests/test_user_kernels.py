"""The user provider (issue 19, shared-library path) on the CPU backend: the
example library of examples/user-kernel is built with the system C compiler
and measured valid with its digest recorded; each broken kernel of
tests/user_kernels is caught by the defence of its class (docs/method.md §8);
bad --kernel usage exits 2. Where nvcc is found, the CUDA example and the
GPU-only broken kernels (tests/user_kernels/cuda) build as scripts/gpu-pack.sh
builds them and export the contract's symbols (they run on a GPU only: the
user-kernels stage of scripts/gpu.sh). Run by CTest with TB_BINARY, TB_AUDIT and
TB_SOURCE_DIR."""
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
INCLUDE = os.path.join(SOURCE, "include")
BROKEN = os.path.join(SOURCE, "tests", "user_kernels")
CC = os.environ.get("CC", "cc")
NVCC = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
FAST = ["--backend", "cpu", "--samples", "2", "--warmup-ms", "1", "--sample-ms", "1", "--quiet"]


def tb(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class UserKernelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-user-")
        # the example exactly as a user builds it: its own Makefile, the header's directory
        example = os.path.join(cls.tmp, "example")
        shutil.copytree(os.path.join(SOURCE, "examples", "user-kernel"), example)
        subprocess.run(["make", "-s", "-C", example, f"TILEBENCH_INCLUDE={INCLUDE}", f"CC={CC}"],
                       check=True)
        cls.example = os.path.join(example, "libmykernel.so")
        cls.runs = 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def build(self, name):
        """tests/user_kernels/<name>.c as a shared library."""
        lib = os.path.join(self.tmp, f"lib{name}.so")
        subprocess.run([CC, "-O1", "-fPIC", "-shared", "-I", INCLUDE, "-o", lib,
                        os.path.join(BROKEN, f"{name}.c"), "-lm"], check=True)
        return lib

    def run_user(self, lib, *args, ops="softmax", shapes="37x769", views="packed"):
        type(self).runs += 1
        out = os.path.join(self.tmp, f"run-{self.runs}")
        r = tb("run", "--ops", ops, "--shapes", shapes, "--input-views", views,
               "--providers", "native,user", "--kernel", lib, *FAST, "--out", out, *args)
        doc = load_results(out, missing_ok=True)
        return r, out, doc

    def audit(self, out):
        r = subprocess.run(["python3", AUDIT, out], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def user_cases(self, doc):
        return [c for c in doc["cases"] if c["provider"] == "user"]

    def test_example_is_valid_with_its_digest(self):
        r, out, doc = self.run_user(self.example, ops="softmax,rmsnorm", shapes="37x769,64x257",
                                    views="packed,strided")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        cases = self.user_cases(doc)
        self.assertEqual(len(cases), 8)
        digest = sha256(self.example)
        for case in cases:
            self.assertTrue(case["valid"], case["error"])
            details = case["provider_details"]
            self.assertEqual(details["sha256"], digest)
            self.assertEqual(details["library"], os.path.realpath(self.example))
            self.assertEqual(details["file_name"], "libmykernel.so")
            self.assertEqual(details["symbol"], f"tb_user_{case['op']}")
            self.assertTrue(details["abi_declared"] and details["accepts_strided_rows"])
        # the built-in provider passes the same defences; on the CPU no kernel has a stream
        for case in doc["cases"]:
            on_stream = case["defences"].pop("launches_on_stream")
            self.assertEqual(on_stream["outcome"], "not_run", case["id"])
            self.assertIn("runs on the CPU", on_stream["detail"])
            self.assertEqual({d["outcome"] for d in case["defences"].values()}, {"passed"},
                             case["id"])
        # loaded before provenance was taken: an artifact with its digest
        artifacts = {x["path"]: x["sha256"] for x in doc["provenance"]["artifacts"]}
        self.assertEqual(artifacts.get(os.path.realpath(self.example)), digest)
        with open(os.path.join(out, "results.md")) as f:
            report = f.read()
        self.assertIn(f"libmykernel.so sha256:{digest[:16]}", report)
        self.audit(out)

    def test_audit_checks_the_library_record(self):
        _, out, doc = self.run_user(self.example)
        case = self.user_cases(doc)[0]
        case["provider_details"]["file_name"] = "other.so"
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(doc, f)
        r = subprocess.run(["python3", AUDIT, out], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("provider_details.file_name", r.stdout + r.stderr)

    def test_every_operation_of_the_abi(self):
        ops = "sum,softmax,rmsnorm,layernorm,add,gelu_add"
        r, out, doc = self.run_user(self.build("every_op"), ops=ops, shapes="3x5,17x257",
                                    views="packed,strided")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        cases = self.user_cases(doc)
        self.assertEqual(sorted({c["op"] for c in cases}), sorted(ops.split(",")))
        self.assertEqual(len(cases), 6 * 2 * 2)
        for case in cases:
            self.assertTrue(case["valid"], case["error"])
            self.assertIn("every ABI 1 operation", case["provider_details"]["description"])
        self.audit(out)

    def assert_caught(self, kernel, defence, fragment, ops="softmax"):
        r, out, doc = self.run_user(self.build(kernel), ops=ops)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        native = [c for c in doc["cases"] if c["provider"] == "native"]
        self.assertTrue(all(c["valid"] for c in native))
        (case,) = self.user_cases(doc)
        self.assertFalse(case["valid"])
        self.assertEqual(case["defences"][defence]["outcome"], "failed", case["defences"])
        self.assertTrue(case["error"].startswith(f"defence {defence} failed"), case["error"])
        self.assertIn(fragment, case["error"])
        self.audit(out)
        return case

    def test_write_outside_the_output(self):
        case = self.assert_caught("writes_outside", "guard_zones", "after out: element 28453")
        # its output itself is right: only the guard zone shows the fault
        self.assertEqual(case["defences"]["every_call"]["outcome"], "passed")
        self.assertTrue(case["validation"]["passed"])

    def test_modified_input(self):
        self.assert_caught("modifies_input", "inputs_unchanged", "input x changed")

    def test_calls_skipped_in_a_batch(self):
        case = self.assert_caught("skips_calls", "every_call", "28453 unwritten")
        self.assertFalse(case["validation"]["passed"])

    def test_cached_output(self):
        case = self.assert_caught("caches_output", "fresh_inputs", "seed 0 (the run's seed xor 1)")
        self.assertEqual(case["defences"]["every_call"]["outcome"], "passed")

    def test_stale_output(self):
        case = self.assert_caught("stale_output", "fresh_inputs", "over the last output")
        # poisoned outputs make it compute: the poisoned calls alone would pass it
        self.assertEqual(case["defences"]["every_call"]["outcome"], "passed")

    def test_calls_skipped_in_timed_batches(self):
        # computes over a poisoned output and on the call after: every validation call and
        # the fresh inputs are right, the timed batches leave the decoy
        case = self.assert_caught("skips_batches", "timed_outputs",
                                  "buffer set 0 of 1 as the timed calls left it, a decoy written")
        for name in ("every_call", "fresh_inputs", "inputs_unchanged", "guard_zones"):
            self.assertEqual(case["defences"][name]["outcome"], "passed", name)
        timed = case["defences"]["timed_outputs"]
        self.assertTrue(timed["decoy_before_batches"])
        self.assertEqual(timed["failed_set"], 0)
        self.assertEqual(timed["validation"]["unwritten_elements"], 0)  # the decoy is finite
        self.assertGreater(timed["validation"]["failed_elements"], 28000)

    def test_faster_than_a_copy(self):
        # every output right, timed outputs included: only its speed gives it away
        case = self.assert_caught("memoizes_sum", "plausible", "GB/s over 113960 minimal bytes",
                                  ops="sum")
        for name in ("every_call", "fresh_inputs", "inputs_unchanged", "guard_zones",
                     "timed_outputs"):
            self.assertEqual(case["defences"][name]["outcome"], "passed", name)
        gate = case["defences"]["plausible"]
        self.assertEqual(gate["ceiling_source"], "host_copy")
        (figure,) = gate["figures"]
        self.assertGreater(figure["gbps"], gate["margin"] * gate["ceiling_gbps"])
        self.assertEqual(gate["host_copies"][0]["footprint_bytes"], case["minimal_bytes"])

    def test_error_code(self):
        r, out, doc = self.run_user(self.build("fails"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        (case,) = self.user_cases(doc)
        self.assertFalse(case["valid"])
        self.assertIn("tb_user_softmax returned 7", case["error"])
        self.audit(out)

    def test_packed_only_library_on_strided_rows(self):
        r, out, doc = self.run_user(self.build("packed_only"), views="packed,strided")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        cases = {c["input_view"]["kind"]: c for c in self.user_cases(doc)}
        self.assertTrue(cases["packed"]["valid"], cases["packed"]["error"])
        self.assertFalse(cases["packed"]["provider_details"]["accepts_strided_rows"])
        strided = cases["strided"]
        self.assertFalse(strided["valid"])
        self.assertIn("declares packed rows only", strided["error"])
        self.assertIsNone(strided["host"])  # refused before any call
        self.audit(out)

    def assert_refused(self, result, out, fragment):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn(fragment, result.stderr)
        self.assertFalse(os.path.exists(out), "a refused run leaves no directory")

    def test_wrong_abi_is_refused(self):
        r, out, _ = self.run_user(self.build("wrong_abi"))
        self.assert_refused(r, out, "declares kernel ABI 2")

    def test_missing_operation_is_refused(self):
        r, out, _ = self.run_user(self.example, ops="softmax,sum")
        self.assert_refused(r, out, "exports no tb_user_sum")
        r, out, _ = self.run_user(self.example, ops="softmax,gemm", shapes="37x769,8x8x8")
        self.assert_refused(r, out, "gemm is not in kernel ABI 1")

    def test_kernel_and_user_go_together(self):
        out = os.path.join(self.tmp, "never")
        r = tb("run", "--ops", "softmax", "--providers", "native,user", *FAST, "--out", out)
        self.assert_refused(r, out, "--providers user needs --kernel PATH")
        r = tb("run", "--ops", "softmax", "--kernel", self.example, *FAST, "--out", out)
        self.assert_refused(r, out, "add user to --providers")
        r = tb("run", "--ops", "softmax", "--providers", "native,user", "--kernel",
               os.path.join(self.tmp, "absent.so"), *FAST, "--out", out)
        self.assert_refused(r, out, "no such file")
        not_a_library = os.path.join(self.tmp, "text.so")
        with open(not_a_library, "w") as f:
            f.write("not ELF\n")
        r = tb("run", "--ops", "softmax", "--providers", "native,user", "--kernel",
               not_a_library, *FAST, "--out", out)
        self.assert_refused(r, out, "cannot load it")


class CudaSourceUsageTest(unittest.TestCase):
    """The CUDA source path (--kernel X.cu --launch): everything checkable before a run is
    refused with exit 2 on any machine, naming the part that is wrong, and leaves no
    directory; a correct source and launch then needs the CUDA backend (exit 2 on --backend
    cpu, after its own checks)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-user-cu-")
        cls.example = os.path.join(SOURCE, "examples", "user-kernel-nvrtc", "softmax.cu")
        cls.launch_file = os.path.join(SOURCE, "examples", "user-kernel-nvrtc", "softmax.launch")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def refused(self, fragment, *args, kernel=None, ops="softmax", shapes="37x769"):
        out = os.path.join(self.tmp, "never")
        r = tb("run", "--ops", ops, "--shapes", shapes, "--providers", "native,user", "--kernel",
               kernel or self.example, *FAST, "--out", out, *args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(fragment, r.stderr)
        self.assertFalse(os.path.exists(out), "a refused run leaves no directory")

    def test_cu_and_launch_go_together(self):
        self.refused("is CUDA source: add --launch")
        self.refused("--launch is for a CUDA source kernel", "--launch", "grid=m,block=256",
                     kernel=os.path.join(self.tmp, "libk.so"))
        out = os.path.join(self.tmp, "never")
        r = tb("run", "--ops", "softmax", "--launch", "grid=m,block=256", *FAST, "--out", out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--launch describes the launch of a CUDA source kernel", r.stderr)

    def test_bad_launch_descriptions_name_the_part(self):
        for launch, fragment in [("grid=m,blok=256", "unknown key 'blok'"),
                                 ("grid=m", "no block="),
                                 ("grid=k,block=256", "unknown name 'k'"),
                                 ("grid=m,block=256,grid=1", "grid given twice"),
                                 ("grid=m,block=n*2", "block x is 1538 for shape 37x769"),
                                 ("grid=m-37,block=32", "grid x is 0 for shape 37x769"),
                                 ("grid=m,block=32,64", "= 2048 threads"),
                                 ("grid=m/(n-769),block=32", "division by zero"),
                                 ("grid=m*99999999999,block=1", "grid x is"),
                                 ("@" + os.path.join(self.tmp, "absent.launch"),
                                  "cannot read it")]:
            with self.subTest(launch=launch):
                self.refused(fragment, "--launch", launch)

    def test_bad_sources(self):
        self.refused("no such file", "--launch", "grid=m,block=256",
                     kernel=os.path.join(self.tmp, "absent.cu"))
        self.refused("no entry point tb_user_sum", "--launch", "grid=m,block=256",
                     ops="softmax,sum")
        self.refused("gemm is not in the user kernel contract", "--launch", "grid=m,block=256",
                     ops="gemm", shapes="8x8x8")

    def test_a_correct_source_needs_the_cuda_backend(self):
        self.refused("runs on the CUDA backend only: drop --backend cpu", "--launch",
                     "grid=m,block=256,smem=0")
        self.refused("runs on the CUDA backend only", "--launch", "@" + self.launch_file)


@unittest.skipUnless(os.access(NVCC, os.X_OK), f"no nvcc ({NVCC})")
class CudaLibraryTest(unittest.TestCase):
    """The CUDA libraries the GPU stage loads, built here: what each exports, that none
    needs more than the driver where it runs, and that the example, loaded on the CPU
    backend (host pointers, no driver here), is refused call by call with its code."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-user-cuda-")
        subprocess.run([os.path.join(SOURCE, "scripts", "build-cuda-user-kernels.sh"), cls.tmp],
                       check=True, capture_output=True, env={**os.environ, "NVCC": NVCC})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def exported(self, name):
        lib = os.path.join(self.tmp, name)
        out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                             text=True).stdout
        return {line.split()[-1] for line in out.splitlines() if " T " in line}

    def needed(self, name):
        out = subprocess.run(["readelf", "-d", os.path.join(self.tmp, name)], check=True,
                             capture_output=True, text=True).stdout
        return {line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line}

    def test_example_exports_the_contract(self):
        symbols = {s for s in self.exported("libsoftmax_cuda.so") if s.startswith("tb_user_")}
        self.assertEqual(symbols, {"tb_user_softmax", "tb_user_kernel_abi_version",
                                   "tb_user_kernel_flags", "tb_user_kernel_description"})

    def test_broken_kernels_export_softmax(self):
        for name in ("libside_stream.so", "libno_kernel.so"):
            self.assertTrue({"tb_user_softmax", "tb_user_kernel_flags"} <= self.exported(name),
                            name)

    def test_runtime_is_static(self):
        # the GPU machine has the driver but no CUDA toolkit
        for name in ("libsoftmax_cuda.so", "libside_stream.so", "libno_kernel.so"):
            needed = self.needed(name)
            self.assertFalse({n for n in needed if "cudart" in n or "libcuda" in n}, needed)

    def test_loaded_on_the_cpu_each_call_fails_with_its_code(self):
        out = os.path.join(self.tmp, "cpu-run")
        r = tb("run", "--ops", "softmax", "--shapes", "37x769", "--input-views", "packed",
               "--providers", "native,user", "--kernel",
               os.path.join(self.tmp, "libsoftmax_cuda.so"), *FAST, "--out", out)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        with open(os.path.join(out, "results.json")) as f:
            (case,) = [c for c in json.load(f)["cases"] if c["provider"] == "user"]
        self.assertFalse(case["valid"])
        # 100 + a cudaError_t: the runtime finds no driver (or no device) here
        self.assertRegex(case["error"], r"tb_user_softmax returned 1\d\d \(call 1 ")
        self.assertTrue(case["provider_details"]["accepts_strided_rows"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
