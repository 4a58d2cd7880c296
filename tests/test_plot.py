"""tools/plot/tilebench_plot.py: refuses bad input with exit 2 and a message
(without needing matplotlib), and draws SVG and PNG whose content is the
data: one marker per shape per provider in the committed H200 shape sweep,
the copy ceiling where recorded, ratios on the side of 1 the numbers put
them, intervals drawn for a replay's per-call figures.
Run by CTest with TB_BINARY and TB_PLOT_PYTHON (a python with matplotlib)."""
import glob
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLOT = os.path.join(ROOT, "tools", "plot", "tilebench_plot.py")
PYTHON = os.environ.get("TB_PLOT_PYTHON", "python3")
BINARY = os.environ["TB_BINARY"]
SWEEP = sorted(glob.glob(os.path.join(ROOT, "evidence", "2026-12-01-h200-held-graphs", "batch",
                                      "*", "results.json.gz")))
SVG = "{http://www.w3.org/2000/svg}"


def plot(*args):
    return subprocess.run([PYTHON, PLOT, *args], capture_output=True, text=True)


def has_matplotlib():
    return subprocess.run([PYTHON, "-c", "import matplotlib"], capture_output=True).returncode == 0


def series_markers(svg_path):
    """{gid: [marker y, ...]} of every group the tool named."""
    root = ET.parse(svg_path).getroot()
    found = {}
    for g in root.iter(SVG + "g"):
        gid = g.get("id", "")
        if gid.startswith(("series-", "interval-", "copy-ceiling", "parity")):
            found[gid] = [float(u.get("y")) for u in g.iter(SVG + "use")]
            found[gid + ":paths"] = [p.get("d") for p in g.iter(SVG + "path")]
    return found


def svg_texts(svg_path):
    return [t.text for t in ET.parse(svg_path).getroot().iter(SVG + "text") if t.text]


def assert_png(test, path):
    with open(path, "rb") as f:
        head = f.read(24)
    test.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
    test.assertGreater(int.from_bytes(head[16:20], "big"), 100)  # IHDR width
    test.assertGreater(os.path.getsize(path), 1000)


class RefusalTest(unittest.TestCase):
    """Exit 2 and a message before anything is drawn."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-plot-refusals-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def refused(self, run_dir, message, *extra):
        out = os.path.join(self.tmp, "out")
        r = plot("sweep", run_dir, "--out", out, *extra)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(message, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "sweep-softmax-time.svg")))

    def write(self, name, content, opener=open):
        d = os.path.join(self.tmp, name)
        os.makedirs(d, exist_ok=True)
        fname = "results.json.gz" if opener is gzip.open else "results.json"
        with opener(os.path.join(d, fname), "wt") as f:
            f.write(content)
        return d

    def test_missing_directory(self):
        self.refused(os.path.join(self.tmp, "absent"), "no such run directory")

    def test_directory_without_results(self):
        os.makedirs(os.path.join(self.tmp, "empty"), exist_ok=True)
        self.refused(os.path.join(self.tmp, "empty"), "holds no results.json")

    def test_not_json_and_not_gzip(self):
        self.refused(self.write("text", "hello"), "not a results file")
        d = os.path.join(self.tmp, "badgz")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "results.json.gz"), "wb") as f:
            f.write(b"\x1f\x8b\x08\x00broken")
        self.refused(d, "not a results file")

    def test_foreign_and_unknown_schema(self):
        self.refused(self.write("foreign", json.dumps({"schema": "other", "cases": []})),
                     "not a tilebench results file")
        doc = {"schema": "tilebench.results", "schema_version": 99, "cases": []}
        self.refused(self.write("future", json.dumps(doc), gzip.open),
                     "unknown results schema version 99")

    def test_nothing_to_plot_and_bad_arguments(self):
        self.refused(SWEEP[0].rsplit("/", 1)[0], "no valid case of op nosuch", "--op", "nosuch")
        r = plot("sweep", "--out", self.tmp)
        self.assertEqual(r.returncode, 2)
        r = plot("sweep", SWEEP[0], "--out", self.tmp, "--scope", "bogus")
        self.assertEqual(r.returncode, 2)


@unittest.skipUnless(has_matplotlib(), f"matplotlib not importable by {PYTHON} "
                     "(apt-get install python3-matplotlib): drawing not tested")
class DrawingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-plot-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def draw(self, *args):
        r = plot(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_h200_sweep_has_a_marker_per_shape_and_provider(self):
        out = os.path.join(self.tmp, "sweep")
        self.draw("sweep", *SWEEP, "--op", "softmax", "--out", out)
        svg = os.path.join(out, "sweep-softmax-time.svg")
        assert_png(self, os.path.join(out, "sweep-softmax-time.png"))
        groups = series_markers(svg)
        for provider in ("native", "torch", "torch-compile"):
            self.assertEqual(len(groups[f"series-{provider}"]), len(SWEEP), provider)
        self.assertIn("copy-ceiling", groups)  # the H200 runs recorded a ceiling
        texts = svg_texts(svg)
        self.assertIn("torch-compile", texts)
        self.assertTrue(any("host-gap-free GPU control, graph batches" in t for t in texts))
        # never over an existing file
        r = plot("sweep", *SWEEP, "--op", "softmax", "--out", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("exists", r.stderr)

    def test_h200_ratios_fall_on_the_side_of_one_the_numbers_say(self):
        out = os.path.join(self.tmp, "ratio")
        self.draw("ratio", *SWEEP, "--op", "softmax", "--out", out)
        groups = series_markers(os.path.join(out, "ratio.svg"))
        assert_png(self, os.path.join(out, "ratio.png"))
        parity_y = float(groups["parity:paths"][0].split()[2])  # "M x y L x y"
        for provider in ("torch", "torch-compile"):
            faster = 0
            for path in SWEEP:
                with gzip.open(path, "rt") as f:
                    cases = {(c["provider"], c["op"]): c for c in json.load(f)["cases"]}
                ratio = gap_free_p50(cases["native", "softmax"]) / \
                    gap_free_p50(cases[provider, "softmax"])
                faster += ratio < 1.0
            ys = groups[f"series-{provider}"]
            self.assertEqual(len(ys), len(SWEEP))
            # SVG y grows downwards: a ratio below 1 is drawn below the parity line
            self.assertEqual(sum(y > parity_y for y in ys), faster, provider)

    def test_replay_intervals_are_drawn(self):
        run_dir = os.path.join(self.tmp, "replay")
        os.mkdir(run_dir)
        with open(os.path.join(run_dir, "results.json"), "w") as f:
            json.dump(replay_doc(), f)
        out = os.path.join(self.tmp, "replay-plot")
        self.draw("ratio", run_dir, "--out", out)
        groups = series_markers(os.path.join(out, "ratio.svg"))
        self.assertEqual(len(groups["series-torch"]), 3)  # the withheld one left out
        self.assertIn("interval-torch", groups)
        self.assertTrue(any("softmax/64x64 reference (graph)" in t
                            for t in svg_texts(os.path.join(out, "ratio.svg"))))

    def test_cpu_run_in_the_host_scope(self):
        run_dir = os.path.join(self.tmp, "cpu")
        r = subprocess.run([BINARY, "run", "--ops", "softmax", "--shapes", "64x64,128x128,256x64",
                            "--samples", "3", "--warmup-ms", "1", "--sample-ms", "1", "--quiet",
                            "--out", run_dir], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(self.tmp, "cpu-plot")
        self.draw("sweep", run_dir, "--metric", "gbps", "--out", out)
        svg = os.path.join(out, "sweep-softmax-gbps.svg")
        groups = series_markers(svg)
        self.assertEqual(len(groups["series-native"]), 3)
        self.assertNotIn("copy-ceiling", groups)  # no ceiling on the CPU backend
        self.assertTrue(any("host E2E" in t for t in svg_texts(svg)))
        # a scope the run never measured is refused, not drawn from another scope
        r = plot("sweep", run_dir, "--scope", "gap_free", "--out", os.path.join(self.tmp, "x"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no scope (gap_free) that every selected case measured", r.stderr)
        # the same sweep through `tilebench report --format plot`, beside the Markdown
        report_dir = os.path.join(self.tmp, "cpu-report")
        env = dict(os.environ, PATH=os.path.dirname(PYTHON) + os.pathsep + os.environ["PATH"])
        r = subprocess.run([BINARY, "report", run_dir, "--format", "md,plot", "--output-dir",
                            report_dir], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(report_dir)),
                         ["results.md", "sweep-softmax-time.png", "sweep-softmax-time.svg"])
        self.assertEqual(len(series_markers(os.path.join(report_dir,
                                                         "sweep-softmax-time.svg"))["series-native"]), 3)
        assert_png(self, os.path.join(report_dir, "sweep-softmax-time.png"))
        # drawn once: a second request is refused by the plotting tool, nothing overwritten
        r = subprocess.run([BINARY, "report", run_dir, "--format", "plot", "--output-dir",
                            report_dir], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("never overwritten", r.stderr)
        # a refused plot writes no other format either
        partial = os.path.join(self.tmp, "cpu-report-partial")
        os.mkdir(partial)
        shutil.copy(os.path.join(report_dir, "sweep-softmax-time.svg"), partial)
        r = subprocess.run([BINARY, "report", run_dir, "--format", "md,plot", "--output-dir",
                            partial], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(os.listdir(partial), ["sweep-softmax-time.svg"])


def gap_free_p50(case):
    import statistics
    mode = case["device"]["throughput"]["gap_free"]["mode"]
    return statistics.median(case["device"]["throughput"]["batch_modes"][mode]["control"]
                             ["per_call_ns"])


def replay_doc():
    """A schema 4 replay summary with native / torch per call: three figures
    with intervals and one withheld."""
    def per_call(median, lo, hi, withheld=None):
        return {"per_call": {"median": median, "min": lo, "max": hi, "scope": "graph",
                             "interval": {"lo": lo, "hi": hi, "coverage": 0.9, "rank": 1},
                             "decision": "SAME", "withheld": withheld}}
    cases = [{"case": f"softmax/{shape}/packed/native",
              "native_over_framework": {"torch": {"reference": per_call(*figures)}}}
             for shape, figures in (("64x64", (0.8, 0.7, 0.9)), ("128x128", (1.1, 1.0, 1.3)),
                                    ("256x256", (0.95, 0.9, 1.02)),
                                    ("512x512", (None, None, None, "a round lacks its pair")))]
    return {"schema": "tilebench.results", "schema_version": 4, "run": {}, "cases": [],
            "replay": {"cases": cases}}


if __name__ == "__main__":
    unittest.main(verbosity=1)
