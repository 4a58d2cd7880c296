"""tests/gpu/planner_regret.py on a CPU run measured under automatic and
fixed variants: one row per op, shape and view, each regret the automatic
case's host p50 over the fastest fixed variant's, read again here from the
results; the verdict's exit code follows the targets; bad input exits 2.
Needs TB_BINARY."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "gpu", "planner_regret.py")


class PlannerRegretTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_dir = os.path.join(cls.tmp.name, "run")
        r = subprocess.run([os.environ["TB_BINARY"], "run", "--backend", "cpu", "--ops",
                            "softmax,rmsnorm", "--shapes", "64x512", "--variants",
                            "automatic,reference,s4p2", "--profile", "calibrated", "--samples",
                            "3", "--quiet", "--out", cls.run_dir],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_regret_is_automatic_over_the_fastest_fixed_variant(self):
        out = os.path.join(self.tmp.name, "regret.json")
        r = subprocess.run([sys.executable, SCRIPT, "--json", out, self.run_dir],
                           capture_output=True, text=True)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        with open(out) as f:
            doc = json.load(f)
        with open(os.path.join(self.run_dir, "results.json")) as f:
            cases = json.load(f)["cases"]
        self.assertEqual(doc["scope"], "host")  # no device phase on the CPU
        self.assertEqual(len(doc["rows"]), 4)  # two ops x two views
        for row in doc["rows"]:
            op, shape, view = row["case"].split("/")
            times = {c["variant"]: c["host"]["throughput"]["per_call_summary_ns"]["p50"]
                     for c in cases if c["op"] == op and c["input_view"]["kind"] == view}
            best = min(t for v, t in times.items() if v != "automatic")
            self.assertAlmostEqual(row["regret"], times["automatic"] / best)
            self.assertEqual(row["candidates"], 2)
        met = doc["median"] <= 1.05 and doc["worst"] <= 1.15
        self.assertEqual(r.returncode, 0 if met else 1)

    def test_as_profile(self):
        """A run planned under calibrated reads as calibrated-2's where calibrated-2 plans the
        same (64x512 here: no grid beyond the resident threads, every plan the same), and is
        refused, the case named, where it would plan otherwise (softmax 2048x1024: (s 4, p 1)
        for (s 8, p 1); docs/planner.md)."""
        with open(os.path.join(self.run_dir, "results.json")) as f:
            self.assertEqual(json.load(f)["run"]["planner_profile"], "calibrated")
        r = subprocess.run([sys.executable, SCRIPT, "--as-profile", "calibrated-2", self.run_dir],
                           capture_output=True, text=True)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertIn("every automatic plan here is calibrated-2's", r.stdout)
        other = os.path.join(self.tmp.name, "calibrated")
        made = subprocess.run([os.environ["TB_BINARY"], "run", "--backend", "cpu", "--ops", "softmax",
                               "--shapes", "2048x1024", "--input-views", "packed", "--profile",
                               "calibrated", "--variants", "automatic,s4p1", "--samples", "3",
                               "--quiet", "--out", other], capture_output=True, text=True, timeout=300)
        self.assertEqual(made.returncode, 0, made.stderr)
        r = subprocess.run([sys.executable, SCRIPT, "--as-profile", "calibrated-2", other],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("softmax/2048x1024/packed/native/automatic", r.stderr)

    def test_bad_input_exits_2(self):
        for args in ([], ["--json"], ["--as-profile", "fastest", self.run_dir],
                     [os.path.join(self.tmp.name, "missing")]):
            r = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, args)


if __name__ == "__main__":
    unittest.main()
