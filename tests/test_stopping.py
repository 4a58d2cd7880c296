"""Noise-based stopping of the host throughput samples (docs/method.md §2.6) on
the CPU backend: runs that converge, that stop at max_samples with the flag and
that stop on the timeout; bad values refused with exit 2; the audit re-derives
each decision and fails on a tampered one. Run by CTest with TB_BINARY and
TB_AUDIT."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

BINARY = os.environ["TB_BINARY"]
AUDIT = os.environ["TB_AUDIT"]
# tiny shapes and short batches: a sample is well under a millisecond
TINY = ["--backend", "cpu", "--ops", "sum,add", "--shapes", "3x5", "--input-views", "packed",
        "--warmup-ms", "1", "--sample-ms", "0.2", "--quiet"]


def tb(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


def audit(run_dir):
    return subprocess.run([sys.executable, AUDIT, run_dir], capture_output=True, text=True)


def load(run_dir):
    with open(os.path.join(run_dir, "results.json")) as f:
        return json.load(f)


class StoppingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-stopping-")
        cls.quiet = os.path.join(cls.tmp, "quiet")
        cls.strict = os.path.join(cls.tmp, "strict")
        for out, rule in ((cls.quiet, ["--max-noise", "0.5", "--min-samples", "3",
                                       "--max-samples", "20"]),
                          # batches of thousands of calls even when a loaded machine slows the
                          # warm-up: a few-call batch can repeat its time to the nanosecond, and
                          # a noise of 0 meets any bound
                          (cls.strict, ["--max-noise", "0.0000001", "--max-samples", "5",
                                        "--sample-ms", "2"])):
            r = tb("run", *TINY, *rule, "--out", out)
            assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_quiet_cases_converge_early(self):
        doc = load(self.quiet)
        self.assertEqual(doc["schema_version"], 9)
        self.assertEqual(doc["run"]["measure"]["stopping"],
                         {"rule": "noise", "max_noise": 0.5, "min_samples": 3, "max_samples": 20,
                          "min_time_s": 0.0, "timeout_s": 60.0})
        for case in doc["cases"]:
            stop = case["host"]["stopping"]
            self.assertEqual(stop["reason"], "converged", case["id"])
            self.assertTrue(3 <= stop["samples_taken"] < 20, stop)
            self.assertLessEqual(stop["noise"], 0.5)
            self.assertEqual(stop["flags"], [])
            # latency follows the throughput's count
            self.assertEqual(len(case["host"]["throughput"]["per_call_ns"]), stop["samples_taken"])
            self.assertEqual(len(case["host"]["latency"]["per_call_ns"]), stop["samples_taken"])
        with open(os.path.join(self.quiet, "results.md")) as f:
            text = f.read()
        self.assertIn("## Stopping", text)
        self.assertIn("| host throughput |", text)
        self.assertIn("| converged | none |", text)
        r = audit(self.quiet)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_unreachable_bound_stops_at_max_samples_flagged(self):
        doc = load(self.strict)
        for case in doc["cases"]:
            stop = case["host"]["stopping"]
            self.assertEqual(stop["reason"], "max_samples", case["id"])
            self.assertEqual(stop["samples_taken"], 5)
            self.assertEqual(stop["min_samples"], 5)  # the default, held to max_samples
            self.assertGreater(stop["noise"], 1e-7)
            self.assertEqual(len(stop["flags"]), 1)
            self.assertTrue(stop["flags"][0].startswith("not_converged: "), stop["flags"])
        with open(os.path.join(self.strict, "results.md")) as f:
            self.assertIn("| max_samples | not_converged |", f.read())
        r = audit(self.strict)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_timeout_bounds_wall_time(self):
        out = os.path.join(self.tmp, "timeout")
        # 20 ms batches and an unreachable bound: only the 0.2 s timeout stops a phase
        # long before its 10000 samples (200 s)
        start = time.monotonic()
        r = tb("run", *TINY[:-3], "--sample-ms", "20", "--quiet", "--ops", "sum",
               "--max-noise", "0.0000001", "--max-samples", "10000", "--timeout", "0.2",
               "--out", out)
        elapsed = time.monotonic() - start
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(elapsed, 20.0)
        stop = load(out)["cases"][0]["host"]["stopping"]
        self.assertEqual(stop["reason"], "timeout")
        self.assertGreaterEqual(stop["wall_s"], 0.2)
        self.assertLess(stop["wall_s"], 2.0)  # the timeout is checked after each sample
        self.assertLess(stop["samples_taken"], 10000)
        self.assertTrue(stop["flags"][0].startswith("not_converged: "))
        r = audit(out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_fixed_count_recorded(self):
        out = os.path.join(self.tmp, "fixed")
        r = tb("run", *TINY, "--ops", "sum", "--samples", "4", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = load(out)
        self.assertEqual(doc["run"]["measure"]["stopping"], {"rule": "fixed", "samples": 4})
        stop = doc["cases"][0]["host"]["stopping"]
        self.assertEqual((stop["rule"], stop["samples"], stop["samples_taken"], stop["reason"]),
                         ("fixed", 4, 4, "fixed_count"))
        with open(os.path.join(out, "results.md")) as f:
            self.assertNotIn("## Stopping", f.read())  # the section is the noise rule's

    def assert_usage(self, r, text):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(text, r.stderr)

    def test_bad_values_exit_2(self):
        out = os.path.join(self.tmp, "never")
        cases = [
            (["--max-noise", "0"], "--max-noise"),
            (["--max-noise", "-0.1"], "--max-noise"),
            (["--max-noise", "2"], "--max-noise"),
            (["--max-noise", "nan"], "--max-noise"),
            (["--max-noise", "0.1", "--min-samples", "2"], "--min-samples"),
            (["--max-noise", "0.1", "--max-samples", "10001"], "--max-samples"),
            (["--max-noise", "0.1", "--max-samples", "5x"], "--max-samples"),
            (["--max-noise", "0.1", "--min-time", "0"], "--min-time"),
            (["--max-noise", "0.1", "--timeout", "inf"], "--timeout"),
            (["--max-noise", "0.1", "--min-samples", "9", "--max-samples", "5"],
             "--min-samples 9 is more than --max-samples 5"),
            (["--max-noise", "0.1", "--samples", "5"], "exclude each other"),
            (["--samples", "5", "--max-noise", "0.1"], "exclude each other"),
            (["--timeout", "5"], "add --max-noise"),
            (["--min-samples", "5"], "add --max-noise"),
        ]
        for args, text in cases:
            with self.subTest(args=args):
                self.assert_usage(tb("run", *TINY, *args, "--out", out), text)
                self.assertFalse(os.path.exists(out))

    def tampered(self, source, name, edit):
        target = os.path.join(self.tmp, name)
        shutil.copytree(source, target)
        path = os.path.join(target, "results.json")
        os.chmod(path, 0o644)
        doc = load(target)
        edit(doc)
        with open(path, "w") as f:
            json.dump(doc, f)
        return target

    def assert_audit_fails(self, source, name, edit, field):
        r = audit(self.tampered(source, name, edit))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("DISCREPANCY", r.stdout + r.stderr)
        self.assertIn(field, r.stdout + r.stderr)

    def stop(self, doc):
        return doc["cases"][0]["host"]["stopping"]

    def test_audit_fails_on_tampered_decision(self):
        q, s = self.quiet, self.strict
        self.assert_audit_fails(q, "t-reason", lambda d: self.stop(d).update(
            reason="max_samples"), "host.stopping.samples_taken (max_samples)")
        self.assert_audit_fails(q, "t-timeout", lambda d: self.stop(d).update(
            reason="timeout"), "host.stopping.wall_s")
        self.assert_audit_fails(s, "t-converged", lambda d: self.stop(d).update(
            reason="converged"), "host.stopping.reason")
        self.assert_audit_fails(s, "t-flag", lambda d: self.stop(d).update(flags=[]),
                                "host.stopping.flags")
        self.assert_audit_fails(q, "t-noise", lambda d: self.stop(d).update(noise=0.25),
                                "host.stopping.noise")
        self.assert_audit_fails(q, "t-bound", lambda d: self.stop(d).update(max_noise=0.4),
                                "host.stopping.max_noise")

        def loosen(d):
            # a looser recorded rule: the first 3 samples would then have met it earlier
            # than the strict run's 5 (samples_taken and the flag are left as recorded)
            d["run"]["measure"]["stopping"]["max_noise"] = 0.99
            for case in d["cases"]:
                case["host"]["stopping"]["max_noise"] = 0.99
                case["host"]["stopping"]["min_samples"] = 3
            d["run"]["measure"]["stopping"]["min_samples"] = 3
        self.assert_audit_fails(s, "t-rule", loosen, "already met the noise rule")

        def dropped(d):
            # a sample removed from a converged case: the count no longer agrees
            for key in ("elapsed_ns", "per_call_ns"):
                del d["cases"][0]["host"]["throughput"][key][-1]
        self.assert_audit_fails(q, "t-sample", dropped, "host.throughput.elapsed_ns (count)")


def load_audit():
    """The audit script as a module, for its functions on a hand-made record."""
    spec = importlib.util.spec_from_file_location("tilebench_audit", AUDIT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class DeviceStoppingAuditTest(unittest.TestCase):
    """The audit's re-derivation on a device phase's eager throughput control (no GPU
    here: a hand-made record in the shape device_json.c writes)."""

    RULE = {"rule": "noise", "max_noise": 0.05, "min_samples": 3, "max_samples": 10,
            "min_time_s": 0.0, "timeout_s": 60.0}

    def setUp(self):
        self.audit = load_audit()
        self.measure = {"samples": 10, "stopping": dict(self.RULE)}
        # per call 1000, 1400, 1010, 1005: noise of the first 3 is 0.015 (median 1010,
        # MAD 10), within the bound: the phase converged at 3
        elapsed = [1000.0, 1400.0, 1010.0]
        self.control = {"elapsed_ns": elapsed, "per_call_ns": list(elapsed)}
        self.stopping = dict(self.RULE, samples_taken=3, reason="converged", flags=[],
                             noise=self.audit.robust_cv(elapsed), sampled_s=sum(elapsed) / 1e9,
                             wall_s=1.0)

    def check(self):
        a = self.audit.Audit()
        self.audit.audit_stopping(a, "device.throughput.stopping", self.stopping, self.measure,
                                  self.control)

    def test_recorded_decision_passes(self):
        self.check()

    def test_one_sample_more_than_the_rule_needed_fails(self):
        extra = 1005.0
        self.control["elapsed_ns"].append(extra)
        self.control["per_call_ns"].append(extra)
        per_call = self.control["per_call_ns"]
        self.stopping.update(samples_taken=4, noise=self.audit.robust_cv(per_call),
                             sampled_s=sum(per_call) / 1e9)
        with self.assertRaisesRegex(self.audit.Discrepancy, "already met the noise rule"):
            self.check()

    def test_tampered_reason_fails(self):
        self.stopping["reason"] = "timeout"
        with self.assertRaisesRegex(self.audit.Discrepancy, "device.throughput.stopping"):
            self.check()


if __name__ == "__main__":
    unittest.main()
