"""`tilebench report --format md,csv,json-summary` against real runs: the CSV,
read with Python's csv module, and the JSON summary hold the results file's
own numbers, re-derived here from the raw record; the destination rules
refuse ambiguous or overwriting requests with exit 2 and write nothing.
Run by CTest with TB_BINARY (the tilebench executable)."""
import csv
import io
import json
import math
import os
import shutil
import subprocess
import tempfile
import unittest

from results_io import load_results

BINARY = os.environ["TB_BINARY"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H200 = os.path.join(ROOT, "evidence", "2026-12-01-h200-held-graphs", "batch", "1024x1024")
FAST = ["--samples", "3", "--warmup-ms", "1", "--sample-ms", "1", "--quiet"]


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True)


def ranked_phase(case):
    """The scope the report ranks a case by, read from the raw record:
    gap-free GPU control, else the complete eager GPU control, else host."""
    device = case.get("device") or {}
    throughput = device.get("throughput") or {}
    mode = (throughput.get("gap_free") or {}).get("mode")
    if mode == "eager":
        return "gap_free", mode, throughput["control"]
    if mode:
        return "gap_free", mode, throughput["batch_modes"][mode]["control"]
    if device.get("control_complete") and throughput.get("control", {}).get("per_call_ns"):
        return "eager_gpu", "", throughput["control"]
    return "host", "", case["host"]["throughput"]


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text, newline="")))


class ReportFormatsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-report-formats-")
        cls.cpu = os.path.join(cls.tmp, "cpu")
        r = run("run", "--ops", "softmax,rmsnorm", "--shapes", "64x64,256x256", *FAST,
                "--out", cls.cpu)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def report(self, run_dir, *args):
        r = run("report", run_dir, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def assert_rows_match(self, run_dir, rows):
        doc = load_results(run_dir)
        cases = doc["cases"]
        self.assertEqual([row["id"] for row in rows], [c["id"] for c in cases])
        ceiling = (doc["run"].get("copy_ceiling") or {}).get("gbps")
        for row, case in zip(rows, cases):
            scope, mode, phase = ranked_phase(case)
            summary = phase["per_call_summary_ns"]
            self.assertEqual(row["scope"], scope, case["id"])
            self.assertEqual(row["mode"], mode, case["id"])
            self.assertEqual(row["op"], case["op"])
            self.assertEqual(row["provider"], case["provider"])
            self.assertEqual(row["variant"], case.get("variant") or "")
            self.assertEqual(row["view"], case["input_view"]["kind"])
            self.assertEqual((int(row["m"]), int(row["n"])), (case["m"], case["n"]))
            self.assertEqual(row["valid"], "true" if case["valid"] else "false")
            self.assertEqual(int(row["samples"]), len(phase["per_call_ns"]))
            for column, key in (("p50_ns", "p50"), ("min_ns", "min"), ("max_ns", "max")):
                self.assertTrue(math.isclose(float(row[column]), summary[key], rel_tol=1e-12),
                                (case["id"], column, row[column], summary[key]))
            gbps = case["minimal_bytes"] / summary["p50"]
            self.assertTrue(math.isclose(float(row["gbps"]), gbps, rel_tol=1e-12))
            if ceiling is not None and scope != "host":
                self.assertTrue(math.isclose(float(row["copy_fraction"]), gbps / ceiling,
                                             rel_tol=1e-12))
            else:
                self.assertEqual(row["copy_fraction"], "")
            cv = float(row["robust_cv"])
            self.assertTrue(0.0 <= cv < 1.0, cv)

    def test_cpu_csv_holds_the_results_numbers(self):
        rows = csv_rows(self.report(self.cpu, "--format", "csv"))
        self.assertEqual(len(rows), 8)
        self.assertTrue(all(row["scope"] == "host" for row in rows))
        self.assert_rows_match(self.cpu, rows)

    def test_h200_csv_ranks_by_the_gap_free_scope(self):
        rows = csv_rows(self.report(H200, "--format", "csv"))
        self.assertEqual(len(rows), 12)
        self.assertEqual({row["scope"] for row in rows}, {"gap_free"})
        self.assertEqual({row["mode"] for row in rows}, {"graph"})
        self.assert_rows_match(H200, rows)

    def test_json_summary_is_the_csv_typed(self):
        rows = csv_rows(self.report(H200, "--format", "csv"))
        summary = json.loads(self.report(H200, "--format", "json-summary"))
        doc = load_results(H200)
        run_identity = summary["run"]
        self.assertEqual(run_identity["device"], doc["provenance"]["gpu"]["devices"][0]["name"])
        self.assertEqual(run_identity["backend"], "cuda")
        self.assertEqual(run_identity["seed"], doc["run"]["seed"])
        self.assertEqual(run_identity["results_schema_version"], doc["schema_version"])
        self.assertEqual(run_identity["commit"], doc["provenance"]["git"].get("commit"))
        self.assertEqual(len(summary["cases"]), len(rows))
        for row, obj in zip(rows, summary["cases"]):
            self.assertEqual(list(obj), list(row))  # same columns, same order
            for column, text in row.items():
                value = obj[column]
                if text == "":
                    self.assertIsNone(value, column)
                elif isinstance(value, bool):
                    self.assertEqual(text, "true" if value else "false")
                elif isinstance(value, (int, float)):
                    self.assertEqual(float(text), float(value), column)
                else:
                    self.assertEqual(text, value)

    def test_csv_quotes_a_foreign_id(self):
        edited = os.path.join(self.tmp, "edited")
        shutil.copytree(self.cpu, edited)
        path = os.path.join(edited, "results.json")
        with open(path) as f:
            doc = json.load(f)
        odd = 'softmax/64x64/"packed",\nnative'
        doc["cases"][0]["id"] = odd
        with open(path, "w") as f:
            json.dump(doc, f)
        rows = csv_rows(self.report(edited, "--format", "csv"))
        self.assertEqual(rows[0]["id"], odd)
        self.assertEqual(len(rows), 8)

    def test_default_is_the_markdown_report(self):
        with open(os.path.join(self.cpu, "results.md")) as f:
            self.assertEqual(self.report(self.cpu), f.read())
        self.assertEqual(self.report(self.cpu, "--format", "md"), self.report(self.cpu))

    def test_output_dir_writes_each_format_once(self):
        out = os.path.join(self.tmp, "formats")
        self.report(self.cpu, "--format", "md,csv,json-summary", "--output-dir", out)
        self.assertEqual(sorted(os.listdir(out)),
                         ["results-summary.json", "results.csv", "results.md"])
        with open(os.path.join(out, "results.csv"), newline="") as f:
            self.assert_rows_match(self.cpu, list(csv.DictReader(f)))
        before = {n: os.path.getmtime(os.path.join(out, n)) for n in os.listdir(out)}
        r = run("report", self.cpu, "--format", "csv", "--output-dir", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("exists", r.stderr)
        self.assertEqual(before, {n: os.path.getmtime(os.path.join(out, n))
                                  for n in os.listdir(out)})

    def test_refusals_write_nothing(self):
        out = os.path.join(self.tmp, "refused")
        cases = [
            (["--format", "csv,md"], "several formats need --output-dir"),
            (["--format", "csv,md", "--output", out], "--output takes one format"),
            (["--format", "csv", "--output", out, "--output-dir", out], "not both"),
            (["--format", "xml"], "unknown --format"),
            (["--format", "csv,csv"], "names twice"),
            (["--format", ","], "at least one"),
            (["--format", "plot"], "--format plot needs --output-dir"),
            (["--format", "plot", "--output", out], "--format plot needs --output-dir"),
        ]
        for args, message in cases:
            r = run("report", self.cpu, *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(message, r.stderr, args)
            self.assertFalse(os.path.exists(out), args)
        r = run("report", os.path.join(self.tmp, "missing"), "--format", "csv")
        self.assertEqual(r.returncode, 2)
        # a partial request is refused whole: results.csv is there, so md is not written
        partial = os.path.join(self.tmp, "partial")
        os.mkdir(partial)
        open(os.path.join(partial, "results.csv"), "w").close()
        r = run("report", self.cpu, "--format", "md,csv", "--output-dir", partial)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(os.listdir(partial), ["results.csv"])


if __name__ == "__main__":
    unittest.main()
