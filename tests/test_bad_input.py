"""Bad input to the tilebench CLI: a clear message and exit 2, never a crash, a
wrapped number or a half-made directory (issue 15's classes, one test each).
Run by CTest with TB_BINARY (the tilebench executable)."""
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest

BINARY = os.environ["TB_BINARY"]
FAST = ["--samples", "2", "--warmup-ms", "1", "--sample-ms", "1", "--quiet"]


def tb(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


class BadInputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-bad-")
        cls.run_dir = os.path.join(cls.tmp, "run")
        r = tb("run", "--ops", "sum,add", "--shapes", "3x5", *FAST, "--out", cls.run_dir)
        assert r.returncode == 0, r.stderr
        with open(os.path.join(cls.run_dir, "results.json")) as f:
            cls.doc = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def edited_copy(self, edit, name):
        """A run directory whose results.json `edit` changed."""
        target = os.path.join(self.tmp, name)
        os.makedirs(target)
        doc = json.loads(json.dumps(self.doc))
        edit(doc)
        with open(os.path.join(target, "results.json"), "w") as f:
            json.dump(doc, f)
        return target

    def assert_usage(self, result, fragment):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn(fragment, result.stderr)

    def test_compare_with_a_bad_case_id(self):
        for n, bad in enumerate((None, 5, "")):
            def edit(doc, bad=bad):
                doc["cases"][0]["id"] = bad
            other = self.edited_copy(edit, f"id-{n}")
            self.assert_usage(tb("compare", self.run_dir, other), "case 0: 'id'")
        other = self.edited_copy(lambda d: d["cases"][1].pop("id"), "id-missing")
        self.assert_usage(tb("compare", other, self.run_dir), "case 1: 'id'")

    def test_frozen_pilot_without_a_role(self):
        def edit(doc):
            del doc["provenance"]["artifacts"][0]["role"]
        pilot = self.edited_copy(edit, "pilot-no-role")
        out = os.path.join(self.tmp, "frozen-out")
        self.assert_usage(tb("replay", "--frozen", pilot, "--shapes", "3x5", *FAST, "--out", out),
                          "provenance.artifacts[0]")
        self.assertFalse(os.path.exists(out), "a refused replay left its --out behind")

    def test_seeds_are_recorded_exactly(self):
        self.assert_usage(tb("run", "--seed", "18446744073709551615"), "largest accepted value")
        out = os.path.join(self.tmp, "seed")
        r = tb("run", "--ops", "sum", "--shapes", "3x5", "--seed", "9223372036854775807", *FAST,
               "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "results.json")) as f:
            self.assertEqual(json.load(f)["run"]["seed"], 9223372036854775807)
        self.assertIn("seed 9223372036854775807", tb("report", out).stdout)

    def test_one_strict_number_parser(self):
        self.assert_usage(tb("run", "--gemm-block", "-1,2,3"), "'-1' is not a whole number")
        self.assert_usage(tb("run", "--gemm-block", "99999999999,1,1"), "99999999999 is above")
        self.assert_usage(tb("run", "--gemm-block", "64,64"), "takes 3 comma-separated")
        for bad in ("0x10", " 5", "5 ", "inf", "nan", "+5", ""):
            self.assert_usage(tb("run", "--sample-ms", bad), "is not a number")
            self.assert_usage(tb("run", "--samples", bad), "is not a whole number")
        self.assert_usage(tb("run", "--sample-ms", "1e-320"), "is outside [1e-300, 600000]")

    def test_duplicates_and_skipped_pairs_are_said(self):
        self.assert_usage(tb("run", "--input-views", "packed,packed"), "names 'packed' twice")
        self.assert_usage(tb("run", "--shapes", "3x5,3x5"), "names 3x5 twice")
        self.assert_usage(tb("run", "--rounds", "2"), "--rounds belongs to `tilebench replay`")
        out = os.path.join(self.tmp, "skipped")
        r = tb("run", "--ops", "add,gemm", "--shapes", "64x64", *FAST, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("gemm is not measured: no shape fits it", r.stderr)
        with open(os.path.join(out, "results.json")) as f:
            skipped = json.load(f)["run"]["skipped_pairs"]
        self.assertEqual(skipped, [{"op": "gemm", "shape": "64x64", "reason": "gemm takes MxNxK shapes"}])

    def test_batch_modes_refused_and_recorded(self):
        out = os.path.join(self.tmp, "batch-refused")
        for value, fragment in (("foo", "unknown batch mode 'foo' (known: eager, graph, held)"),
                                ("graph,graph", "--batch names 'graph' twice"),
                                ("", "--batch"), ("graph,", "--batch")):
            self.assert_usage(tb("run", "--batch", value, *FAST, "--out", out), fragment)
            self.assertFalse(os.path.exists(out), "a refused run left its --out behind")
        out = os.path.join(self.tmp, "batch-graph")
        r = tb("run", "--ops", "sum", "--shapes", "3x5", "--batch", "graph", *FAST, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["run"]["measure"]["batch_modes"], ["eager", "graph"])
        self.assertEqual(doc["schema_version"], 9)  # the current schema

    def test_empty_out_refused(self):
        self.assert_usage(tb("run", "--out", "", *FAST), "--out needs a directory name")

    def test_report_escapes_table_cells_and_reads_gz(self):
        def edit(doc):
            doc["cases"][0]["id"] = "evil|id\nsecond line"
        target = self.edited_copy(edit, "escape")
        path = os.path.join(target, "results.json")
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
            g.write(f.read())
        os.remove(path)
        r = tb("report", target)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| evil\\|id second line |", r.stdout)
        with open(path + ".gz", "r+b") as g:  # a copy cut short: its trailer (CRC, size) lost
            g.truncate(os.path.getsize(path + ".gz") - 8)
        self.assert_usage(tb("report", target), "not a complete gzip file")


if __name__ == "__main__":
    unittest.main(verbosity=1)
