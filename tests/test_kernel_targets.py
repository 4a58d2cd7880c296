"""tests/gpu/kernel_targets.py (issue 21's scoreboard) on committed GPU runs:
its ratios are the C report's, the floor of a row is the add of the same
bytes, the bounds decide each verdict, the latest run by its start decides a
case and a later invalid case is never hidden, the regret is planner_regret's
where every accepted candidate was measured, and bad input (no run, runs of
two GPU models, a CPU run, malformed fields) exits 2."""
import copy
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from results_io import extract_plainly, load_results  # noqa: E402

SCRIPT = os.path.join(HERE, "gpu", "kernel_targets.py")
EVIDENCE = os.path.join(os.path.dirname(HERE), "evidence")
VS_COMPILE = ("2026-12-06-h100-elementwise-tree-merge/call3.tar.xz", "call3/vs-compile")
# the one-row targets' run (native and the add of each row's bytes in one run), and a build's
# A/B run of few very long rows
ONE_ROW = ("2026-12-08-h100-gemm-64-rows-barrier-partials/call2.tar.xz", "call2/targets/one-row",
           "call2/ab/A1")
REGRET = ("2026-12-01-h200-planner-calibrated-2/regret-calibrated-2.tar.xz",
          "regret-calibrated-2/regret")
GEMM = os.path.join(EVIDENCE, "2026-12-02-h200-matrix-vector-gemm", "gemm", "run")
SHORT = os.path.join(EVIDENCE, "2026-12-01-h200-subwarp-rows", "torch-all", "65536x17")


class KernelTargetsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        for archive, *folders in (VS_COMPILE, ONE_ROW, REGRET):
            with tarfile.open(os.path.join(EVIDENCE, archive)) as tar:
                members = [m for m in tar.getmembers()
                           if any(m.name.startswith(f + "/") and "/sources" not in m.name
                                  for f in folders)]
                extract_plainly(tar, cls.tmp.name, members)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def judge(self, *runs):
        out = self.path("targets.json")
        if os.path.exists(out):
            os.remove(out)
        r = subprocess.run([sys.executable, SCRIPT, "--json", out, *runs], capture_output=True,
                           text=True)
        self.assertIn(r.returncode, (0, 1), r.stdout + r.stderr)
        with open(out) as f:
            return r, {t["name"].split(":")[0]: t for t in json.load(f)["targets"]}

    def write_run(self, name, doc):
        folder = self.path(name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "results.json"), "w") as f:
            json.dump(doc, f)
        return folder

    def test_compile_ratios_are_the_reports(self):
        run = self.path(VS_COMPILE[1])
        r, targets = self.judge(run)
        self.assertEqual(r.returncode, 1)  # 54 matrix cases not measured, some missed
        with open(os.path.join(run, "results.md")) as f:
            report = {line.split("|")[1].strip(): line.split("|")[3].split()[0]
                      for line in f if "| torch-compile |" in line}
        measured = [t for t in targets["native / torch.compile a call"]["rows"]
                    if t["verdict"] != "not measured"]
        # the run's 17x257 and 8x65536 are in the evidence matrix, its 64x128 and 32x16384 not
        self.assertEqual(len(measured), 6)
        for row in measured:
            op, shape = row["case"].split("/")
            key = f"{op}/{shape}/packed/native" + ("/automatic" if op == "layernorm" else "")
            self.assertEqual(f"{row['value']:.3f}", report[key], row["case"])
            self.assertEqual(row["verdict"], "met" if row["value"] <= 1.0 else "missed")
        self.assertEqual(targets["native / torch.compile a call"]["verdict"], "missed")

    def test_a_rows_floor_is_the_add_of_its_bytes_in_the_same_run(self):
        # without the adds in its run, no row has a floor
        doc = load_results(self.path(ONE_ROW[1]))
        alone = copy.deepcopy(doc)
        alone["cases"] = [c for c in alone["cases"] if c["op"] != "add"]
        _, targets = self.judge(self.write_run("one-row-alone", alone))
        rows = {r["case"]: r for r in targets["one row of 10^6"]["rows"]}
        self.assertTrue(all(r["verdict"] == "not measured" for r in rows.values()))
        self.assertIn("no add of 8000000 bytes in its run", rows["softmax/1x1000000"]["detail"])
        # with them, each row finds the add of its bytes
        _, targets = self.judge(self.path(ONE_ROW[1]))
        rows = {r["case"]: r for r in targets["one row of 10^6"]["rows"]}
        floors = {"softmax": "1x666667", "rmsnorm": "1x1000000", "layernorm": "1x1333334"}
        published = {"softmax": 2.174, "rmsnorm": 1.615, "layernorm": 1.815}  # its notes.md
        for op, shape in floors.items():
            row = rows[f"{op}/1x1000000"]
            self.assertEqual(row["floor_case"], f"add/{shape}/packed/native")
            self.assertAlmostEqual(row["value"], published[op], delta=0.0006)
            self.assertEqual(row["verdict"], "met" if row["value"] <= 2.0 else "missed")
        # a strided add of the same bytes ahead of it: the packed floor still stands (a row is
        # judged against its own view); the packed floor made invalid: the row says so rather
        # than judge against it
        strided = copy.deepcopy(next(c for c in doc["cases"] if c["id"] == "add/1x666667/packed/native"))
        strided.update(id="add/1x666667/strided/native",
                       input_view=dict(strided["input_view"], kind="strided"))
        doc["cases"].insert(0, strided)
        _, targets = self.judge(self.write_run("one-row-strided", doc))
        row = next(r for r in targets["one row of 10^6"]["rows"] if r["case"] == "softmax/1x1000000")
        self.assertEqual(row["floor_case"], "add/1x666667/packed/native")
        for c in doc["cases"]:
            if c["id"] == "add/1x666667/packed/native":
                c["valid"] = False
        _, targets = self.judge(self.write_run("one-row-invalid-floor", doc))
        row = next(r for r in targets["one row of 10^6"]["rows"] if r["case"] == "softmax/1x1000000")
        self.assertEqual(row["verdict"], "invalid")

    def test_copy_fraction_classes(self):
        run = self.path(ONE_ROW[2])
        doc = load_results(run)
        _, targets = self.judge(run)
        few = {r["case"]: r for r in targets["few very long rows"]["rows"]}
        # 2 <= m <= 64 and n >= 10^6: 16x4194304, 3x1000003 and 2x1000000, not 10x500000,
        # 4x200000 nor one row
        self.assertEqual(set(few), {f"{op}/{shape}"
                                    for op in ("sum", "softmax", "rmsnorm", "layernorm")
                                    for shape in ("16x4194304", "3x1000003", "2x1000000")})
        ceiling = doc["run"]["copy_ceiling"]["gbps"]
        case = next(c for c in doc["cases"] if c["id"].startswith("layernorm/16x4194304/packed/native"))
        p50 = case["device"]["throughput"]["gap_free"]["per_call_p50_ns"]
        row = few["layernorm/16x4194304"]
        self.assertAlmostEqual(row["value"], case["minimal_bytes"] / p50 / ceiling)
        self.assertEqual(row["verdict"], "met" if row["value"] >= 0.80 else "missed")
        # the fraction follows the run's ceiling: a ceiling it reaches 0.81 of is met
        doc["run"]["copy_ceiling"]["gbps"] = case["minimal_bytes"] / p50 / 0.81
        _, targets = self.judge(self.write_run("lower-ceiling", doc))
        row = next(r for r in targets["few very long rows"]["rows"]
                   if r["case"] == "layernorm/16x4194304")
        self.assertEqual((round(row["value"], 6), row["verdict"]), (0.81, "met"))
        self.assertEqual(targets["many long rows"]["verdict"], "not measured")

    def test_gemm_bounds_follow_the_issue(self):
        _, targets = self.judge(GEMM)
        bounds = {r["case"]: r["bound"] for r in targets["gemm"]["rows"]}
        self.assertEqual(bounds["gemm/4096x4096x4096/simt"], 0.95)
        self.assertEqual(bounds["gemm/8192x8192x8192/tensor"], 0.95)
        self.assertEqual(bounds["gemm/4096x4096x4096/tensor-3xtf32"], 0.80)
        self.assertEqual(bounds["gemm/1024x1024x1024/simt"], 0.80)
        for small in ("gemm/32x32x32/simt", "gemm/4096x4096x13/tensor", "gemm/1999x2999x37/simt"):
            self.assertEqual(bounds[small], 0.90, small)

    def test_short_rows_must_be_faster(self):
        _, targets = self.judge(SHORT)
        rows = {r["case"]: r for r in targets["very short rows"]["rows"]}
        doc = load_results(SHORT)
        p50 = {c["id"]: c["device"]["throughput"]["gap_free"]["per_call_p50_ns"] for c in doc["cases"]}
        row = rows["softmax/65536x17 vs torch"]
        self.assertAlmostEqual(row["value"], p50["softmax/65536x17/packed/native/automatic"] /
                               p50["softmax/65536x17/packed/torch"])
        self.assertEqual(row["bound_is"], "below")
        # as fast is not faster: torch's time set to native's misses
        for c in doc["cases"]:
            if c["id"] == "softmax/65536x17/packed/torch":
                c["device"]["throughput"]["gap_free"]["per_call_p50_ns"] = \
                    p50["softmax/65536x17/packed/native/automatic"]
        _, targets = self.judge(self.write_run("short-tie", doc))
        row = next(r for r in targets["very short rows"]["rows"]
                   if r["case"] == "softmax/65536x17 vs torch")
        self.assertEqual((row["value"], row["verdict"]), (1.0, "missed"))

    def test_bounds_decide_gemm_verdicts(self):
        doc = load_results(GEMM)
        cublas = next(c for c in doc["cases"] if c["id"] == "gemm/4096x4096x4096/packed/cublas/simt")
        native = next(c for c in doc["cases"] if c["id"] == "gemm/4096x4096x4096/packed/native/simt")
        mine = native["device"]["throughput"]["gap_free"]["per_call_p50_ns"]
        for fraction, verdict in ((0.96, "met"), (0.94, "missed")):
            changed = copy.deepcopy(doc)
            for c in changed["cases"]:
                if c["id"] == cublas["id"]:
                    c["device"]["throughput"]["gap_free"]["per_call_p50_ns"] = fraction * mine
            _, targets = self.judge(self.write_run(f"gemm-{fraction}", changed))
            row = next(r for r in targets["gemm"]["rows"] if r["case"] == "gemm/4096x4096x4096/simt")
            self.assertAlmostEqual(row["value"], fraction)
            self.assertEqual(row["verdict"], verdict)
        # an invalid native case gives no figure: the case is invalid, the target missed
        changed = copy.deepcopy(doc)
        for c in changed["cases"]:
            if c["id"] == native["id"]:
                c["valid"] = False
        _, targets = self.judge(self.write_run("gemm-invalid", changed))
        row = next(r for r in targets["gemm"]["rows"] if r["case"] == "gemm/4096x4096x4096/simt")
        self.assertEqual((row["verdict"], targets["gemm"]["verdict"]), ("invalid", "missed"))
        # a later run: where it has only eager figures the earlier run's graph figure stands;
        # where its case is invalid, that is what the row says, not the earlier figure
        later = copy.deepcopy(doc)
        later["run"]["started_at"] = "2099-01-01T00:00:00Z"
        for c in later["cases"]:
            c["device"]["throughput"]["gap_free"]["mode"] = "eager"
        eager = self.write_run("gemm-later-eager", later)
        _, targets = self.judge(GEMM, eager)
        row = next(r for r in targets["gemm"]["rows"] if r["case"] == "gemm/4096x4096x4096/simt")
        self.assertEqual((row["run"], row["verdict"]), (GEMM, "missed"))
        for c in later["cases"]:
            c["valid"] = c["id"] != native["id"]
        _, targets = self.judge(GEMM, self.write_run("gemm-later-invalid", later))
        row = next(r for r in targets["gemm"]["rows"] if r["case"] == "gemm/4096x4096x4096/simt")
        self.assertEqual(row["verdict"], "invalid")
        self.assertIn("is invalid", row["detail"])
        # the latest by its start, whatever the order given
        _, targets = self.judge(eager, GEMM)
        row = next(r for r in targets["gemm"]["rows"] if r["case"] == "gemm/4096x4096x4096/simt")
        self.assertEqual(row["run"], GEMM)
        # a later run holding only the invalid native case, without cuBLAS beside it
        alone = copy.deepcopy(later)
        alone["cases"] = [c for c in alone["cases"] if c["id"] == native["id"]]
        _, targets = self.judge(GEMM, self.write_run("gemm-later-alone", alone))
        row = next(r for r in targets["gemm"]["rows"] if r["case"] == "gemm/4096x4096x4096/simt")
        self.assertEqual(row["verdict"], "invalid")

    def test_regret_is_planner_regrets(self):
        folder = self.path(REGRET[1])
        runs = sorted(os.path.join(folder, d) for d in os.listdir(folder)
                      if os.path.isdir(os.path.join(folder, d)))
        _, targets = self.judge(*runs)
        regret = targets["planner regret"]
        measured = {r["case"]: r["value"] for r in regret["rows"] if r["value"] is not None}
        with open(os.path.join(folder, "regret.log")) as f:  # planner_regret.py's, on the GPU
            logged = {line.split()[0].replace("/packed", ""): float(line.split("regret")[-1])
                      for line in f if ", regret " in line}
        self.assertEqual(set(measured), set(logged))
        for case, value in measured.items():
            self.assertAlmostEqual(value, logged[case], places=3)
        self.assertAlmostEqual(regret["median"], 1.006, places=3)
        # 8 of the 40 matrix cases: met where measured, the target not yet measured
        self.assertEqual((regret["counts"]["met"], regret["verdict"]), (8, "not measured"))
        # a candidate the plan accepts left out: no regret; a candidate's graph figure taken
        # away: none either (never another scope's figure in its place)
        run = os.path.join(folder, "softmax-64x4096")
        doc = load_results(run)
        accepted = {(c["subgroups"], c["packing"]) for c in next(
            c for c in doc["cases"] if c["variant"] == "automatic")["execution_plans"][0]["candidates"]
            if not c["rejected"]}
        s, p = sorted(accepted)[0]
        dropped = copy.deepcopy(doc)
        dropped["cases"] = [c for c in dropped["cases"] if c["variant"] != f"s{s}p{p}"]
        _, targets = self.judge(self.write_run("regret-dropped", dropped))
        row = next(r for r in targets["planner regret"]["rows"] if r["case"] == "softmax/64x4096")
        self.assertEqual(row["verdict"], "not measured")
        self.assertIn("the planner accepts not measured", row["detail"])
        for c in doc["cases"]:
            if c["variant"] == "s4p1":
                del c["device"]["throughput"]["batch_modes"]["graph"]
        _, targets = self.judge(self.write_run("regret-no-graph", doc))
        row = next(r for r in targets["planner regret"]["rows"] if r["case"] == "softmax/64x4096")
        self.assertEqual(row["verdict"], "not measured")
        self.assertIn("no graph figure for s4p1", row["detail"])

    def test_malformed_runs_exit_2(self):
        def broken(name, change):
            doc = load_results(GEMM)
            change(doc)
            return self.write_run(name, doc)

        def gap_free(doc):
            return doc["cases"][0]["device"]["throughput"]["gap_free"]

        folders = [
            broken("p50-null", lambda d: gap_free(d).update(per_call_p50_ns=None)),
            broken("p50-zero", lambda d: gap_free(d).update(per_call_p50_ns=0)),
            broken("p50-negative", lambda d: gap_free(d).update(per_call_p50_ns=-1.0)),
            broken("p50-text", lambda d: gap_free(d).update(per_call_p50_ns="12")),
            broken("view-empty", lambda d: d["cases"][1].update(input_view={})),
            broken("no-k", lambda d: d["cases"][2].pop("k")),
            broken("no-name", lambda d: d["provenance"]["gpu"]["devices"][0].pop("name")),
            broken("ceiling-text", lambda d: d["run"].update(copy_ceiling="x")),
            broken("gap-free-list", lambda d: d["cases"][0]["device"]["throughput"].update(gap_free=[])),
            broken("samples-number", lambda d: d["cases"][0]["device"]["throughput"]["batch_modes"]
                   ["graph"]["control"].update(per_call_ns=5)),
            broken("bytes-null", lambda d: d["cases"][3].update(minimal_bytes=None)),
            broken("started-number", lambda d: d["run"].update(started_at=5)),
            broken("valid-text", lambda d: d["cases"][0].update(valid="false")),
        ]
        truncated = self.path("truncated")
        os.makedirs(truncated, exist_ok=True)
        with open(os.path.join(GEMM, "results.json.gz"), "rb") as f:
            data = f.read()
        with open(os.path.join(truncated, "results.json.gz"), "wb") as f:
            f.write(data[: len(data) // 2])
        a_folder = self.path("json-is-a-folder")
        os.makedirs(os.path.join(a_folder, "results.json"), exist_ok=True)
        for folder in folders + [truncated, a_folder]:
            r = subprocess.run([sys.executable, SCRIPT, folder], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, f"{folder}: {r.stdout[-300:]} {r.stderr[-500:]}")
            self.assertIn("kernel_targets: ", r.stderr, folder)
            self.assertNotIn("Traceback", r.stderr, folder)
        for args in (["--json", self.path("no", "such", "place.json"), GEMM], [GEMM, GEMM]):
            r = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True)
            self.assertEqual((r.returncode, r.stdout), (2, ""), args)

    def test_bad_input_exits_2(self):
        cpu = load_results(GEMM)
        cpu["run"]["backend"] = "cpu"
        no_op = load_results(GEMM)
        del no_op["cases"][3]["op"]
        cases = ([], ["--json"], [self.path("missing")], [self.path(VS_COMPILE[1]), GEMM],
                 [self.write_run("cpu", cpu)], [self.write_run("no-op", no_op)],
                 [self.write_run("not-results", [1, 2])])
        for args in cases:
            r = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, args)
            self.assertTrue(r.stderr.strip(), args)  # says why
        r = subprocess.run([sys.executable, SCRIPT, self.path(VS_COMPILE[1]), GEMM],
                           capture_output=True, text=True)
        self.assertIn("NVIDIA H100 80GB HBM3", r.stderr)
        self.assertIn("H200", r.stderr)


if __name__ == "__main__":
    unittest.main()
