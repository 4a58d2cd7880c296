"""The programs that read results, against real CPU runs: the independent
audit (passes clean runs and replays, fails naming the field on each planted
corruption), replay refusals and frozen replays (compare: test_compare.py).
Run by CTest with TB_BINARY (the tilebench executable) and TB_AUDIT (the script)."""
import copy
import gzip
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

from results_io import extract_plainly

BINARY = os.environ["TB_BINARY"]
AUDIT = os.environ["TB_AUDIT"]
FAST = ["--samples", "3", "--warmup-ms", "1", "--sample-ms", "1", "--quiet"]


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True)


def audit(*dirs, extra=()):
    return subprocess.run([sys.executable, AUDIT, *dirs, *extra], capture_output=True, text=True)


def audit_module():
    """The audit script loaded as a module, for tests of its functions."""
    spec = importlib.util.spec_from_file_location("tilebench_audit", AUDIT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EVIDENCE_SOURCES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "evidence", "sources")


def copy_run(source, target):
    """A copy of a run directory that audits on its own: committed evidence keeps
    its generated sources gzip-compressed in the shared store evidence/sources/
    (evidence/STORAGE.md), which a copy outside evidence/ no longer has above it; the
    copy gets them back as a run writes them, plain."""
    shutil.copytree(source, target)
    if os.path.isdir(os.path.join(target, "sources")):
        return
    os.mkdir(os.path.join(target, "sources"))
    with open(os.path.join(target, "results.json")) as f:
        for case in json.load(f)["cases"]:
            sha = case.get("source_sha256")
            if sha:
                with gzip.open(os.path.join(EVIDENCE_SOURCES, sha + ".cu.gz")) as src, \
                        open(os.path.join(target, "sources", sha + ".cu"), "wb") as dst:
                    shutil.copyfileobj(src, dst)


def committed_h200_run(tmp):
    """A folder in tmp to write a converted copy into, and the results of a committed H200
    run (held graphs, 17x257, schema 6) to convert."""
    source = os.path.join(os.path.dirname(EVIDENCE_SOURCES), "2026-12-01-h200-held-graphs",
                          "batch", "17x257")
    converted = os.path.join(tmp, "converted")
    os.mkdir(converted)
    with gzip.open(os.path.join(source, "results.json.gz")) as f:
        return converted, json.load(f)


class Corruptions:
    """Plants a change in a copy of a run and expects the audit to name it;
    the test class provides `tmp`."""

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def corrupt(self, source, mutate):
        """A copy of a run whose results.json `mutate` changed."""
        target = tempfile.mkdtemp(dir=self.tmp)
        shutil.rmtree(target)
        copy_run(source, target)
        path = os.path.join(target, "results.json")
        with open(path) as f:
            doc = json.load(f)
        mutate(doc)
        with open(path, "w") as f:
            json.dump(doc, f)
        return target

    def assert_caught(self, source, mutate, field):
        result = audit(self.corrupt(source, mutate))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("DISCREPANCY", result.stderr)
        self.assertIn(field, result.stderr)


class AuditTest(Corruptions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-audit-")
        cls.run_dir = os.path.join(cls.tmp, "run")
        cls.replay_dir = os.path.join(cls.tmp, "replay")
        r = run("run", "--shapes", "37x769,3x5,200x40000", "--variants", "reference,automatic",
                *FAST, "--out", cls.run_dir)
        assert r.returncode == 0, r.stderr
        r = run("replay", "--shapes", "37x769,64x258", "--rounds", "4", *FAST, "--out", cls.replay_dir)
        assert r.returncode == 0, r.stderr

    def test_clean_run_and_replay_pass(self):
        for d in (self.run_dir, self.replay_dir):
            result = audit(d)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("checks passed", result.stdout)

    def test_replay_is_position_balanced(self):
        with open(os.path.join(self.replay_dir, "results.json")) as f:
            doc = json.load(f)
        orders = doc["run"]["replay"]["variant_order"]
        self.assertEqual([o[0] for o in orders], ["reference", "candidate", "reference", "candidate"])
        self.assertEqual(len(doc["cases"]), 3 * 2 * 2 * 4)  # ops x shapes x variants x rounds

    def test_changed_sample(self):
        def m(d):
            d["cases"][0]["host"]["throughput"]["elapsed_ns"][0] += 1000
        self.assert_caught(self.run_dir, m, "host.throughput.per_call_ns[0]")

    def test_changed_p50(self):
        def m(d):
            d["cases"][1]["host"]["latency"]["per_call_summary_ns"]["p50"] *= 1.01
        self.assert_caught(self.run_dir, m, "host.latency.per_call_summary_ns.p50")

    def test_missing_sample(self):
        def m(d):
            for key in ("elapsed_ns", "per_call_ns"):
                d["cases"][2]["host"]["latency"][key].pop()
        self.assert_caught(self.run_dir, m, "host.latency.elapsed_ns (count)")

    def test_cpu_frequency_change_must_be_flagged(self):
        # schema 7: the host phase's cpufreq reads; the flag follows from the top frequency
        def m(d):
            d["cases"][0]["host"]["cpu_frequency"] = {
                "available": True, "governor": "schedutil", "governor_after": "schedutil",
                "top_khz_before": 3000000, "top_khz_after": 2000000,
                "khz_before": [3000000, 800000], "khz_after": [2000000, 800000], "flags": []}
        self.assert_caught(self.run_dir, m, "host.cpu_frequency.flags (cpu frequency change)")

    def test_changed_plan_fact(self):
        def m(d):
            d["cases"][0]["execution_plans"][0]["candidates"][3]["slots"] += 1
        self.assert_caught(self.run_dir, m, "plan.candidates[3].slots")

    def test_tampered_elementwise_plan(self):
        # add at 3x5 (15 elements) takes one element a thread, 37x769 four: the audit re-derives both
        with open(os.path.join(self.run_dir, "results.json")) as f:
            cases = json.load(f)["cases"]
        small, large = (next(i for i, c in enumerate(cases) if c["id"] == f"add/{shape}/packed/native")
                        for shape in ("3x5", "37x769"))
        self.assertEqual([cases[i]["execution_plans"][0]["elements_per_thread"]
                          for i in (small, large)], [1, 4])

        def four(d):  # the vector walk claimed where the rule by size says one a thread
            plan = d["cases"][small]["execution_plans"][0]
            plan.update(elements_per_thread=4, threads_per_block=256, threads_per_row=4,
                        thread_blocks=1)
        self.assert_caught(self.run_dir, four, "plan.elements_per_thread")

        def threshold(d):
            d["cases"][large]["execution_plans"][0]["scalar_max_elements"] = 1 << 20
        self.assert_caught(self.run_dir, threshold, "plan.scalar_max_elements")

        def before_rule(d):  # without the threshold the record claims the older rule: 4 a thread
            del d["cases"][small]["execution_plans"][0]["scalar_max_elements"]
        self.assert_caught(self.run_dir, before_rule, "plan.elements_per_thread")

        # the flat walk's two groups a thread (a build not kept) re-derived where a record says so:
        # 28453 elements, 8 a thread, 3557 threads, 28 blocks of 128
        def flat_groups(d):
            d["cases"][large]["execution_plans"][0].update(
                groups_per_thread=2, elements_per_thread=8, threads_per_block=128,
                threads_per_row=3557, thread_blocks=28)
        result = audit(self.corrupt(self.run_dir, flat_groups))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

        def strided_groups(d):
            strided = next(i for i, c in enumerate(d["cases"])
                           if c["id"] == "add/37x769/strided/native")
            d["cases"][strided]["execution_plans"][0]["groups_per_thread"] = 2
        self.assert_caught(self.run_dir, strided_groups, "plan.groups_per_thread")

        for bad in ("8192", True, 0):  # not a threshold at all: malformed, not a discrepancy
            def malformed(d, bad=bad):
                d["cases"][small]["execution_plans"][0]["scalar_max_elements"] = bad
            result = audit(self.corrupt(self.run_dir, malformed))
            self.assertEqual(result.returncode, 3, repr(bad) + result.stdout + result.stderr)
            self.assertIn("scalar_max_elements", result.stderr)

    def test_changed_pick(self):
        def m(d):
            for c in d["cases"]:
                if c.get("variant") == "automatic":
                    c["execution_plans"][0]["chosen_candidate"] = 0
                    return
        self.assert_caught(self.run_dir, m, "plan.chosen_candidate")

    def subwarp_plans(self, d):
        return [c["execution_plans"][0] for c in d["cases"] if c.get("execution_plans")
                and c["execution_plans"][0].get("mapping") == "subwarp_rows"]

    def test_subwarp_rows_planned_for_very_short_rows(self):
        with open(os.path.join(self.run_dir, "results.json")) as f:
            plans = self.subwarp_plans(json.load(f))
        # 3x5, automatic, 4 ops x 2 input views: one lane a row (8 >= 5), 256 rows a block
        self.assertEqual(len(plans), 8)
        for plan in plans:
            self.assertEqual((plan["subwarp"]["lanes"], plan["subwarp"]["slots"]), (1, 5))
            self.assertIsNone(plan["selected"])
            self.assertIsNone(plan["stream"])

    def test_changed_subwarp_fact(self):
        def m(d):
            self.subwarp_plans(d)[0]["subwarp"]["lanes"] = 2
        self.assert_caught(self.run_dir, m, "plan.subwarp.lanes")

    def test_subwarp_rows_recorded_as_register_rows(self):
        def m(d):
            plan = self.subwarp_plans(d)[0]
            plan["mapping"], plan["subwarp"] = "register_rows", None
        self.assert_caught(self.run_dir, m, "plan.mapping")

    def test_changed_subwarp_rule_constant(self):
        def m(d):
            self.subwarp_plans(d)[0]["constants"]["subwarp_slots"] = 4
        self.assert_caught(self.run_dir, m, "plan.constants.subwarp_slots")

    def long_row_plans(self, d):
        """The automatic plans of the 200x40000 row reductions that no register candidate
        holds (softmax and layernorm; sum's and rmsnorm's s = 32 fits where no device limits
        apply)."""
        plans = [c["execution_plans"][0] for c in d["cases"] if c.get("execution_plans")]
        return [p for p in plans if p.get("kind") == "row_reduction" and p["n"] == 40000
                and p["variant"] == "automatic" and p["best_register_candidate"] is None]

    def test_long_rows_stream_without_clusters(self):
        # the CPU backend plans for no clusters: rows no candidate holds stream in one block,
        # and the record names the shared-cache constant all the same
        with open(os.path.join(self.run_dir, "results.json")) as f:
            plans = self.long_row_plans(json.load(f))
        self.assertEqual(sorted(p["op"] for p in plans), ["layernorm"] * 2 + ["softmax"] * 2)
        for plan in plans:
            self.assertEqual(plan["mapping"], "block_streaming")
            self.assertEqual(plan["stream"]["cache_shared_bytes"], 0)
            self.assertEqual(plan["constants"]["cluster_shared_bytes"], 98304)

    def test_long_rows_on_a_cluster_device_take_shared_chunks(self):
        # the same records, their device said to have clusters of 16: the audit's own rule puts
        # the rows in clusters with their chunks in shared memory; a norm's row of 2 chunks too
        # where the record's rule takes operations with a weight and has no floor of chunks (the
        # build measured before the floor), not where it leaves them out (the builds before
        # 2bce1c6) or holds them to 3 chunks
        def m(d):
            for plan in self.long_row_plans(d):
                plan["device_limits"]["cluster_blocks"] = 16
        self.assert_caught(self.run_dir, m, "plan.mapping")
        module = audit_module()
        with open(os.path.join(self.run_dir, "results.json")) as f:
            norm = [p for p in self.long_row_plans(json.load(f)) if p["op"] == "layernorm"][0]
        norm["device_limits"]["cluster_blocks"] = 16
        self.assertEqual(norm["constants"]["cluster_shared_weight_min_blocks"], 3)
        for with_weight, floor, mapping in ((True, None, "cluster_row"),
                                            (False, None, "block_streaming"),
                                            (True, 3, "block_streaming")):
            norm["constants"]["cluster_shared_with_weight"] = with_weight
            norm["constants"].pop("cluster_shared_weight_min_blocks", None)
            if floor is not None:
                norm["constants"]["cluster_shared_weight_min_blocks"] = floor
            derived = module.expected_plan(norm)  # the audit's own re-derivation
            self.assertEqual(derived["mapping"], mapping, (with_weight, floor))
        # three chunks (1024x65536) meet the floor
        derived = module.expected_plan(dict(norm, m=1024, n=65536))
        self.assertEqual((derived["mapping"], derived["stream"]["blocks_per_row"]), ("cluster_row", 3))

    def test_changed_shared_cache_record(self):
        # each of the rule's recorded constants and the plan's cache fact, changed alone
        for where, key, value in (("constants", "cluster_shared_bytes", 65536),
                                  ("constants", "cluster_shared_with_weight", "yes"),
                                  ("constants", "cluster_shared_weight_min_blocks", 2),
                                  ("stream", "cache_shared_bytes", 160000)):
            with self.subTest(key=key):
                def m(d):
                    self.long_row_plans(d)[0][where][key] = value
                self.assert_caught(self.run_dir, m, "plan.%s.%s" % (where, key))

    def test_persistent_rows_rederived(self):
        # the audit's own rule for few rows too long for a cluster's chunks, on a record of this
        # run said to be of such a shape on a device with clusters of 16 and 132 SMs: the same
        # facts as the planner's (tests/test_planner.c few_very_long_rows_persistent)
        module = audit_module()
        with open(os.path.join(self.run_dir, "results.json")) as f:
            base = self.long_row_plans(json.load(f))[0]
        base["device_limits"].update(cluster_blocks=16, shared_bytes_per_multiprocessor=228 << 10)
        for op, m, n, groups, per_row, chunk in (("rmsnorm", 16, 4194304, 1, 264, 15888),
                                                 ("layernorm", 1, 4194304, 1, 264, 15888),
                                                 ("softmax", 1, 1000000, 1, 264, 3788),
                                                 ("rmsnorm", 10, 500000, 10, 26, 19232),
                                                 ("softmax", 16, 524288, 8, 33, 15888)):
            with self.subTest(op=op, m=m, n=n):
                record = dict(base, op=op, m=m, n=n)
                plan = module.expected_plan(record)
                self.assertEqual(plan["mapping"], "persistent_row")
                stream = plan["stream"]
                self.assertEqual((stream["row_groups"], stream["blocks_per_row"],
                                  stream["chunk_elements"], stream["thread_blocks"]),
                                 (groups, per_row, chunk, groups * per_row))
                self.assertEqual((stream["cache_shared_bytes"], stream["memory_passes"],
                                  stream["launches"], stream["barrier_sites"]),
                                 (110592, 1, 1, 3))
        # layernorm's 32 MiB of weight and bias over 16 turns: cluster rows
        record = dict(base, op="layernorm", m=16, n=4194304)
        self.assertEqual(module.expected_plan(record)["mapping"], "cluster_row")
        # a device whose multiprocessors hold no two blocks of the ring (sm_120's 100 KiB)
        small = copy.deepcopy(base)
        small["device_limits"]["shared_bytes_per_multiprocessor"] = 100 << 10
        record = dict(small, op="softmax", m=16, n=4194304)
        self.assertEqual(module.expected_plan(record)["mapping"], "cluster_row")
        # without the rule's constant (a record made before it): cluster rows
        record = dict(base, op="softmax", m=16, n=4194304,
                      constants={k: v for k, v in base["constants"].items()
                                 if k != "persistent_blocks_per_sm"})
        self.assertEqual(module.expected_plan(record)["mapping"], "cluster_row")

    def test_split_sum_rows_rederived(self):
        # sum's few long rows on a device whose clusters leave them split: one launch since the
        # row's last block merges (the record's constant), two in the records before it; a row
        # output keeps two launches either way
        module = audit_module()
        with open(os.path.join(self.run_dir, "results.json")) as f:
            base = self.long_row_plans(json.load(f))[0]
        self.assertIs(base["constants"]["split_last_block_merges"], True)
        before = {k: v for k, v in base["constants"].items() if k != "split_last_block_merges"}
        for op, constants, launches, sites, shared in (("sum", base["constants"], 1, 3, 68),
                                                       ("sum", before, 2, 1, 32),
                                                       ("softmax", base["constants"], 2, 1, 64)):
            with self.subTest(op=op, launches=launches):
                stream = module.expected_plan(dict(base, op=op, m=2, n=1000000,
                                                   constants=constants))["stream"]
                self.assertEqual((stream["blocks_per_row"], stream["launches"],
                                  stream["barrier_sites"], stream["shared_bytes"]),
                                 (132, launches, sites, shared))

    def test_changed_split_constant(self):
        def m(d):
            self.long_row_plans(d)[0]["constants"]["split_last_block_merges"] = False
        self.assert_caught(self.run_dir, m, "plan.constants.split_last_block_merges")

    def test_changed_persistent_constants(self):
        for key, value in (("persistent_blocks_per_sm", 3), ("persistent_shared_bytes", 98304),
                           ("persistent_param_bytes", 1 << 30)):
            with self.subTest(key=key):
                def m(d):
                    self.long_row_plans(d)[0]["constants"][key] = value
                self.assert_caught(self.run_dir, m, "plan.constants." + key)

    def test_plan_under_another_profile(self):
        def m(d):  # the run says analytic, its plans were made under calibrated
            d["run"]["planner_profile"] = "analytic"
        self.assert_caught(self.run_dir, m, "plan.profile (the run's planner_profile)")

    def test_changed_block_weight(self):
        def m(d):
            d["cases"][0]["execution_plans"][0]["constants"]["block_weight"] = 16
        self.assert_caught(self.run_dir, m, "plan.constants.block_weight")

    def test_validity_flag_on_a_wrong_output(self):
        def m(d):
            v = d["cases"][0]["validation"]
            v["failed_elements"] = 3
            v["unwritten_elements"] = 0
        self.assert_caught(self.run_dir, m, "validation.passed")

    def test_wrong_source_hash(self):
        def m(d):
            d["cases"][0]["source_sha256"] = "ab" * 32
        self.assert_caught(self.run_dir, m, "source_sha256")

    def test_source_file_changed(self):
        target = self.corrupt(self.run_dir, lambda d: d["cases"][0].__setitem__("source_sha256", "cd" * 32))
        os.makedirs(os.path.join(target, "sources"), exist_ok=True)
        with open(os.path.join(target, "sources", "cd" * 32 + ".cu"), "w") as f:
            f.write("// not the kernel that ran\n")
        result = audit(target)
        self.assertEqual(result.returncode, 1)
        self.assertIn("hash of the archived file", result.stderr)

    def test_unbalanced_order(self):
        def m(d):
            d["run"]["replay"]["variant_order"][1] = ["reference", "candidate"]
        self.assert_caught(self.replay_dir, m, "position balance")

    def test_duplicated_round(self):
        def m(d):
            d["cases"].append(copy.deepcopy(d["cases"][0]))
        self.assert_caught(self.replay_dir, m, "appears twice")

    def test_dropped_pair(self):
        def m(d):
            d["cases"] = [c for c in d["cases"] if not (c["round"] == 2 and c["variant"] == "candidate")]
        self.assert_caught(self.replay_dir, m, "round 2 is missing")

    def test_changed_gain_and_verdict(self):
        def gain(d):
            d["replay"]["cases"][0]["metrics"]["host_throughput"]["gain"][1] *= 1.5
        self.assert_caught(self.replay_dir, gain, "host_throughput.gain[1]")

        def verdict(d):
            rec = d["replay"]["cases"][1]["metrics"]["host_latency"]
            rec["verdict"] = "faster in all pairs" if rec["verdict"] != "faster in all pairs" else "inconclusive"
        self.assert_caught(self.replay_dir, verdict, "host_latency.verdict")

    def test_changed_summary_count(self):
        def m(d):
            d["replay"]["counts"]["host_throughput"]["cases"] += 1
        self.assert_caught(self.replay_dir, m, "counts.host_throughput.cases")

    def test_withheld_gpu_figures_shown(self):
        def m(d):
            rec = d["replay"]["cases"][0]["metrics"]["gpu_throughput"]
            rec["withheld"] = None
        self.assert_caught(self.replay_dir, m, "gpu_throughput.withheld")

    def test_mismatched_environments(self):
        other = self.corrupt(self.run_dir, lambda d: d["provenance"]["host"].__setitem__("cpu_model", "another CPU"))
        result = audit(self.run_dir, other)
        self.assertEqual(result.returncode, 1)
        self.assertIn("environments", result.stderr)

    def test_receipt_created_once(self):
        receipt = os.path.join(self.tmp, "receipt.json")
        result = audit(self.run_dir, extra=("--receipt", receipt))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(receipt) as f:
            self.assertGreater(json.load(f)["checks"], 1000)
        again = audit(self.run_dir, extra=("--receipt", receipt))
        self.assertEqual(again.returncode, 2)
        self.assertIn("never overwritten", again.stderr)

    def test_audit_through_the_cli(self):
        result = subprocess.run([BINARY, "audit", self.replay_dir], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)


class FixedVariantTest(Corruptions, unittest.TestCase):
    """Fixed register-rows candidates named sSpP (docs/planner.md): measured beside
    automatic in one call, planned by the fixed variants' path (a rejected one streams
    each row, as a rejected reference does), re-derived by the audit from the name."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-fixed-")
        cls.run_dir = os.path.join(cls.tmp, "run")
        cls.replay_dir = os.path.join(cls.tmp, "replay")
        # s1p8 is the reference itself; s4p32 (4096 threads) is rejected
        r = run("run", "--ops", "softmax,sum", "--shapes", "37x769", "--input-views", "packed",
                "--variants", "automatic,s4p2,s1p8,s4p32", *FAST, "--out", cls.run_dir)
        assert r.returncode == 0, r.stderr
        r = run("replay", "--ops", "softmax", "--shapes", "37x769", "--input-views", "packed",
                "--variants", "automatic,s4p2", "--rounds", "2", *FAST, "--out", cls.replay_dir)
        assert r.returncode == 0, r.stderr
        with open(os.path.join(cls.run_dir, "results.json")) as f:
            cls.doc = json.load(f)

    def case(self, doc, op, variant):
        return next(c for c in doc["cases"] if c["op"] == op and c.get("variant") == variant)

    def index(self, doc, op, variant):
        return next(i for i, c in enumerate(doc["cases"])
                    if c["op"] == op and c.get("variant") == variant)

    def test_variants_recorded(self):
        self.assertEqual(self.doc["run"]["variants"], ["automatic", "s4p2", "reference", "s4p32"])
        c = self.case(self.doc, "softmax", "s4p2")
        self.assertEqual(c["id"], "softmax/37x769/packed/native/s4p2")
        plan = c["execution_plans"][0]
        self.assertEqual(plan["variant"], "s4p2")
        self.assertEqual(plan["mapping"], "register_rows")
        self.assertEqual((plan["selected"]["subgroups"], plan["selected"]["packing"]), (4, 2))
        self.assertEqual(plan["fixed_variant"]["threads"], 256)
        self.assertIsNone(plan["chosen_candidate"])  # (4, 2) is not among the 39
        ref = self.case(self.doc, "softmax", "reference")["execution_plans"][0]
        self.assertEqual((ref["selected"]["subgroups"], ref["selected"]["packing"]), (1, 8))
        rejected = self.case(self.doc, "softmax", "s4p32")["execution_plans"][0]
        self.assertTrue(rejected["fixed_variant"]["rejected"])
        self.assertEqual(rejected["mapping"], "block_streaming")
        self.assertIsNone(rejected["selected"])
        # the CPU backend's loops follow the plan's lane count (what it records)
        self.assertEqual(c["provider_details"]["lanes"], 4 * 32)
        self.assertEqual(self.case(self.doc, "softmax", "s4p32")["provider_details"]["lanes"], 512)
        # two ops x four variants, each its own case
        self.assertEqual(len([c for c in self.doc["cases"] if c.get("variant")]), 2 * 4)

    def test_clean_run_and_replay_pass(self):
        for d in (self.run_dir, self.replay_dir):
            result = audit(d)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with open(os.path.join(self.replay_dir, "results.json")) as f:
            replay = json.load(f)["run"]["replay"]
        self.assertEqual((replay["reference"], replay["candidate"]), ("automatic", "s4p2"))

    def test_report_and_compare(self):
        md = run("report", self.run_dir, "--format", "md", "--output",
                 os.path.join(self.tmp, "r.md"))
        self.assertEqual(md.returncode, 0, md.stderr)
        with open(os.path.join(self.tmp, "r.md")) as f:
            self.assertIn("s4p2", f.read())
        same = run("compare", self.run_dir, self.run_dir)
        self.assertEqual(same.returncode, 0, same.stdout + same.stderr)

    def test_tampered_fixed_plan(self):
        i = self.index(self.doc, "softmax", "s4p2")

        def m(d):
            d["cases"][i]["execution_plans"][0]["fixed_variant"]["packing"] = 4
        self.assert_caught(self.run_dir, m, "plan.fixed_variant.packing")

        def renamed(d):  # the name, the id and the plan's copy agree, the facts do not
            c = d["cases"][i]
            c["variant"] = c["execution_plans"][0]["variant"] = "s4p3"
            c["id"] = c["id"].replace("/s4p2", "/s4p3")
        self.assert_caught(self.run_dir, renamed, ".packing: recorded 2, re-derived 3")
        j = self.index(self.doc, "softmax", "s4p32")

        def accepted(d):  # a rejected candidate claimed register rows
            d["cases"][j]["execution_plans"][0]["mapping"] = "register_rows"
        self.assert_caught(self.run_dir, accepted, "plan.mapping")

    def test_malformed_variant_names(self):
        i = self.index(self.doc, "softmax", "s4p2")
        for bad in ("s1p8", "s0p1", "s4", "s33p1", "s04p2"):
            def m(d, bad=bad):
                d["cases"][i]["variant"] = bad
            result = audit(self.corrupt(self.run_dir, m))
            self.assertEqual(result.returncode, 3, bad + result.stdout + result.stderr)
            self.assertIn("sSpP", result.stderr)

    def test_plan_command(self):
        r = run("plan", "--op", "softmax", "--shape", "4096x1024", "--variant", "s4p2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("variant s4p2", r.stdout)
        self.assertIn("fixed variant (s 4, p 2): threads 256", r.stdout)
        r = run("plan", "--op", "softmax", "--shape", "4096x1024", "--variant", "s4p2", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        plan = json.loads(r.stdout)
        self.assertEqual(plan["variant"], "s4p2")
        self.assertEqual(plan["selected"]["subgroups"], 4)
        r = run("plan", "--op", "softmax", "--shape", "4096x1024", "--variant", "s1p8", "--json")
        self.assertEqual(json.loads(r.stdout)["variant"], "reference")

    def test_malformed_variants_refused(self):
        for bad in ("s0p1", "s4", "x4p2", "s4p2q", "s99999999999p1", "s1p33", "s01p2"):
            for args in (["plan", "--op", "softmax", "--shape", "4096x1024", "--variant", bad],
                         ["run", "--variants", "automatic," + bad, "--out", tempfile.mktemp()],
                         ["replay", "--variants", "automatic," + bad, "--out", tempfile.mktemp()]):
                r = run(*args)
                self.assertEqual(r.returncode, 2, f"{args}: {r.stderr}")
                self.assertIn("sSpP", r.stderr)
        r = run("run", "--variants", "reference,s1p8", "--out", tempfile.mktemp())
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("twice", r.stderr)
        many = ",".join(f"s{s}p1" for s in range(1, 33)) + "," + \
            ",".join(f"s1p{p}" for p in range(9, 33)) + ",s3p2,s3p3,s3p4,s3p5,s3p6,s3p7,s3p8,s3p9,s3p10"
        r = run("run", "--variants", many, "--out", tempfile.mktemp())
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("more than 64", r.stderr)


class ReplayCliTest(unittest.TestCase):
    def expect_usage(self, args, fragment):
        r = run(*args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(fragment, r.stderr)

    def test_refusals(self):
        self.expect_usage(["replay", "--rounds", "3"], "even")
        self.expect_usage(["replay", "--variants", "reference,candidate,automatic"], "exactly two")
        self.expect_usage(["replay", "--ops", "add"], "row reductions")
        self.expect_usage(["run", "--rounds", "4"], "belongs to `tilebench replay`")
        self.expect_usage(["replay", "--frozen", "/nonexistent/pilot", "--out", tempfile.mktemp()],
                          "has no results.json")

    def test_frozen_replay(self):
        tmp = tempfile.mkdtemp(prefix="tb-frozen-")
        try:
            pilot = os.path.join(tmp, "pilot")
            self.assertEqual(run("run", "--ops", "softmax", "--shapes", "8x33", *FAST, "--out", pilot).returncode, 0)
            ok = run("replay", "--ops", "softmax", "--shapes", "8x33", "--rounds", "2", *FAST,
                     "--frozen", pilot, "--out", os.path.join(tmp, "frozen"))
            self.assertEqual(ok.returncode, 0, ok.stderr)
            with open(os.path.join(tmp, "frozen", "results.json")) as f:
                frozen = json.load(f)["run"]["frozen"]
            self.assertEqual(frozen["pilot_dir"], pilot)
            self.assertTrue(frozen["pilot_artifacts"])
            path = os.path.join(pilot, "results.json")
            with open(path) as f:
                doc = json.load(f)
            doc["provenance"]["artifacts"][0]["sha256"] = "00" * 32  # "another binary"
            with open(path, "w") as f:
                json.dump(doc, f)
            out = os.path.join(tmp, "refused")
            bad = run("replay", "--ops", "softmax", "--shapes", "8x33", "--rounds", "2", *FAST,
                      "--frozen", pilot, "--out", out)
            self.assertEqual(bad.returncode, 2)
            self.assertIn("differs from the pilot", bad.stderr)
            self.assertFalse(os.path.exists(os.path.join(out, "results.json")))
        finally:
            shutil.rmtree(tmp)


class Calibrated2AuditTest(Corruptions, unittest.TestCase):
    """The default profile's two preferences (docs/planner.md), re-derived by the audit: softmax
    64x4096 takes the whole groups of (s 16, p 1) over calibrated's (s 11, p 1), index 22 for
    17; at 2048x1024 (s 8, p 1) reads 16 B a thread on a grid of 524288 threads, more than the
    132 x 2048 resident, so the fed (s 4, p 1) wins, index 10 for 14."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-calibrated-2-")
        cls.run_dir = os.path.join(cls.tmp, "run")
        r = run("run", "--ops", "softmax", "--shapes", "64x4096,2048x1024", "--input-views", "packed",
                *FAST, "--out", cls.run_dir)
        assert r.returncode == 0, r.stderr

    def plans(self, d):
        return {(c["m"], c["n"]): c["execution_plans"][0] for c in d["cases"]}

    def test_preferences_pick_and_audit(self):
        with open(os.path.join(self.run_dir, "results.json")) as f:
            plans = self.plans(json.load(f))
        self.assertEqual(plans[(64, 4096)]["chosen_candidate"], 22)
        self.assertEqual(plans[(2048, 1024)]["chosen_candidate"], 10)
        self.assertEqual(plans[(2048, 1024)]["candidates"][14]["thread_read_bytes"], 16)
        self.assertEqual(audit(self.run_dir).returncode, 0)

    def test_calibrated_pick_recorded_under_calibrated_2(self):
        def m(d):
            plan = self.plans(d)[(64, 4096)]
            plan["chosen_candidate"] = plan["best_register_candidate"] = 17
            plan["selected"] = plan["candidates"][17]
        self.assert_caught(self.run_dir, m, "plan.best_register_candidate: recorded 17, re-derived 22")

    def test_changed_preference_fact(self):
        def m(d):
            self.plans(d)[(64, 4096)]["candidates"][17]["whole_groups"] = True
        self.assert_caught(self.run_dir, m, "plan.candidates[17].whole_groups")

    def test_changed_preference_constant(self):
        def m(d):
            self.plans(d)[(2048, 1024)]["constants"]["min_thread_read"] = 0
        self.assert_caught(self.run_dir, m, "plan.constants.min_thread_read")

    def test_preference_constants_left_out(self):
        def m(d):
            del self.plans(d)[(2048, 1024)]["constants"]["min_thread_read"]
        self.assert_caught(self.run_dir, m, "plan.constants.min_thread_read")

    def test_facts_kept_with_their_constants_left_out(self):
        # under calibrated too: a record carrying the facts is audited on them, whatever its
        # constants say (only a record with none of them reads as one made before them)
        def m(d):
            d["run"]["planner_profile"] = "calibrated"
            for plan in self.plans(d).values():
                plan["profile"] = "calibrated"
                for key in ("whole_groups_first", "min_thread_read", "sm_threads"):
                    del plan["constants"][key]
                plan["candidates"][3]["grid_threads"] = -5
        self.assert_caught(self.run_dir, m, "plan.constants.whole_groups_first")


def audit_archived_source(module, text, case, plan):
    """The audit's source checks of `case` (op, n) under `plan` against `text`, archived in a
    run folder's sources/ by its SHA-256 as tilebench archives a generated kernel."""
    sha = hashlib.sha256(text).hexdigest()
    with tempfile.TemporaryDirectory() as run_dir:
        os.makedirs(os.path.join(run_dir, "sources"))
        with open(os.path.join(run_dir, "sources", sha + ".cu"), "wb") as f:
            f.write(text)
        module.audit_source(module.Audit(), run_dir, dict(case, source_sha256=sha), plan)


class ClusterSourceAuditTest(unittest.TestCase):
    """The audit's checks of a cluster row's source against its record: EVEN_COUNTS (merges
    that take every count equal) only where every thread holds full groups of its row, and the
    statistics pushed (st.async) as the record's facts say."""

    @classmethod
    def setUpClass(cls):
        cls.module = audit_module()

    def audit_source(self, n, chunk, even, generation="fetch", pushes=False):
        # the lines of a layernorm cluster row's source the audit reads, 16 blocks of 256 a row;
        # the exchange's facts: the fetch's (2 barrier sites, the block's and the row's 16
        # statistics in shared memory), the push's (1 site, the row's and an mbarrier) or the
        # first kernel's read (1 site, the block's alone)
        combine = 3 * 8 * 4
        sites, shared = {"fetch": (2, combine + 12 * 17), "push": (1, combine + 8 + 12 * 16),
                         "read": (1, combine + 12)}[generation]
        text = ("#define ITERS 4\n" + ("#define EVEN_COUNTS 1\n" if even else "") +
                "__cluster_dims__(16, 1, 1)\n" + "__syncthreads();\n" * sites +
                "__shfl_xor_sync\n" + ("st.async\n" if pushes else "")).encode()
        plan = {"mapping": "cluster_row",
                "stream": {"barrier_sites": sites, "shared_bytes": shared,
                           "cluster_blocks": 16, "blocks_per_row": 16,
                           "chunk_elements": chunk, "threads_per_block": 256,
                           "memory_passes": 1, "cache_shared_bytes": 0}}
        audit_archived_source(self.module, text, {"op": "layernorm", "n": n}, plan)

    def test_full_shares(self):
        self.audit_source(65536, 4096, even=True)
        self.audit_source(65536, 4096, even=False)  # a source from before the define
        self.audit_source(65000, 4064, even=False)

    def test_exchange_as_the_facts_say(self):
        self.audit_source(65536, 4096, even=True, generation="push", pushes=True)
        self.audit_source(65536, 4096, even=False, generation="read", pushes=False)
        for pushes in (False, True):  # 0eef128 pushed with the fetch's facts
            self.audit_source(65536, 4096, even=False, generation="fetch", pushes=pushes)
        for generation, pushes in (("push", False), ("read", True)):
            with self.subTest(generation=generation), \
                    self.assertRaisesRegex(self.module.Discrepancy, "st.async"):
                self.audit_source(65536, 4096, even=False, generation=generation, pushes=pushes)

    def test_claimed_on_a_partial_share(self):
        for n, chunk in ((65000, 4064), (65520, 4096)):  # a ragged chunk; a short last chunk
            with self.subTest(n=n), self.assertRaisesRegex(self.module.Discrepancy, "EVEN_COUNTS"):
                self.audit_source(n, chunk, even=True)


class PersistentSourceAuditTest(unittest.TestCase):
    """The audit holds a persistent row's source to the exchange its record's facts say: the
    counter (three barrier sites, atomicAdd) or the tagged words tried in 1655874 (two sites,
    relaxed 64-bit stores and loads)."""

    @classmethod
    def setUpClass(cls):
        cls.module = audit_module()

    def audit_source(self, sites, tagged):
        # the lines of an rmsnorm persistent row's source the audit reads: one group of 264 blocks
        exchange = "st.relaxed.gpu.global.u64\n" if tagged else "atomicAdd(arrived, 1u);\n"
        text = ("#define ROW_GROUPS 1LL\n" + "__syncthreads();\n" * sites + "__shfl_xor_sync\n" +
                exchange).encode()
        plan = {"mapping": "persistent_row",
                "stream": {"barrier_sites": sites, "row_groups": 1, "blocks_per_row": 264,
                           "chunk_elements": 3788, "threads_per_block": 256,
                           "memory_passes": 1, "cache_shared_bytes": 4 * 3788}}
        audit_archived_source(self.module, text, {"op": "rmsnorm", "n": 1000000}, plan)

    def test_exchange_as_the_facts_say(self):
        self.audit_source(3, tagged=False)
        self.audit_source(2, tagged=True)
        for sites, tagged in ((3, True), (2, False)):
            with self.subTest(sites=sites), \
                    self.assertRaisesRegex(self.module.Discrepancy, "tagged words"):
                self.audit_source(sites, tagged)


class SplitRowSourceAuditTest(unittest.TestCase):
    """The audit holds a split row's source to the launches its record plans: ROW_OUTPUT 0 (the
    row's last block merges, one launch) or 1 (a second launch merges)."""

    @classmethod
    def setUpClass(cls):
        cls.module = audit_module()

    def audit_source(self, row_output, launches, sites):
        text = (f"#define ROW_OUTPUT {row_output}\n" + "__syncthreads();\n" * sites +
                "__shfl_xor_sync\n").encode()
        plan = {"mapping": "split_row",
                "stream": {"barrier_sites": sites, "launches": launches, "blocks_per_row": 132,
                           "chunk_elements": 7576, "threads_per_block": 256,
                           "memory_passes": 1, "cache_shared_bytes": 0}}
        audit_archived_source(self.module, text, {"op": "sum", "n": 1000000}, plan)

    def test_launches_as_planned(self):
        self.audit_source(0, launches=1, sites=3)
        self.audit_source(1, launches=2, sites=1)
        for row_output, launches in ((1, 1), (0, 2)):
            with self.subTest(row_output=row_output), \
                    self.assertRaisesRegex(self.module.Discrepancy, "split row's launches"):
                self.audit_source(row_output, launches, 3 if launches == 1 else 1)


class EvidenceTest(unittest.TestCase):
    """Every committed H200 run folder with a results file stays re-derivable by the
    audit, its generated sources found in the shared store evidence/sources/
    (evidence/STORAGE.md; runs that left the tree are listed in evidence/INDEX.md)."""

    def test_committed_gpu_evidence_audits(self):
        root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "evidence")
        ab = ("ab/A1", "ab/B1", "ab/B2", "ab/A2")
        shapes = ("17x257", "37x769", "64x4096", "1024x1024", "4096x1024", "16384x257", "8x65536",
                  "32768x8192")
        runs = [os.path.join("2026-12-01-h200-held-graphs/batch", s) for s in shapes]
        runs += [os.path.join("2026-12-01-h200-subwarp-rows", r)
                 for r in ("validation", "torch-all/65536x17", "torch-all/65536x32") + ab]
        runs += [os.path.join("2026-12-01-h200-subwarp-rows/sanitizer", "run-%s-%s" % (tool, case))
                 for tool in ("memcheck", "racecheck")
                 for case in ("softmax-65536x17-automatic", "layernorm-65537x16-automatic",
                              "rmsnorm-4096x17-automatic", "sum-100x1-automatic")]
        runs += [os.path.join("2026-12-01-h200-stopping-clocks/stopping", r)
                 for r in ("run", "clock-checks-on-1", "clock-checks-off-1", "clock-checks-on-2",
                           "clock-checks-off-2")]
        runs += [os.path.join("2026-12-01-h200-user-kernels-all-ways", r)
                 for r in ("devices/run", "devices/run/shards/0")]
        runs += [os.path.join("2026-12-01-h200-user-kernels-all-ways/user-kernels", r)
                 for r in ("example-17x257", "example-4096x1024", "example-32768x8192",
                           "nvrtc-4096x1024", "python-softmax", "python-softmax_triton",
                           "side_stream", "no_kernel")]
        runs += [os.path.join("2026-12-01-h200-param-prefetch-cluster", r)
                 for r in ab + ("torch-all/4096x1024",)]
        runs += [os.path.join("2026-12-01-h200-planner-calibrated-2", r)
                 for r in ("ab/" + x for x in ab)]
        runs += [os.path.join("2026-12-01-h200-planner-calibrated-2/ab-rmsnorm-8192x32768", r)
                 for r in ab]
        small_k = "2026-12-02-h200-gemm-small-k"
        runs += [os.path.join(small_k, "call3", r) for r in ab + ("gemm/strided",)]
        runs += [os.path.join(small_k, r) for r in ("call4/gemm/run", "call5/gemm/run")]
        runs += [os.path.join(small_k, "call3/sanitizer", "run-%s-gemm-%s-automatic-%s" % (t, s, r))
                 for t in ("memcheck", "racecheck")
                 for s, r in (("1536x1536x13", "simt"), ("1536x1536x13", "tensor"),
                              ("1536x1536x40", "simt"))]
        few_warps = "2026-12-02-h200-gemm-small-k-few-warps/call2"
        runs += [os.path.join(few_warps, r) for r in ab + ("gemm/run", "gemm/strided")]
        runs += [os.path.join(few_warps, "sanitizer", "run-%s-gemm-%s-automatic-%s" % (t, s, r))
                 for t in ("memcheck", "racecheck")
                 for s, r in (("1999x2999x37", "tensor"), ("1999x2999x37", "tensor-3xtf32"),
                              ("2048x1536x40", "tensor-3xtf32"))]
        gemv = "2026-12-02-h200-matrix-vector-gemm"
        runs += [os.path.join(gemv, r)
                 for r in ("gemm/run", "gemm/strided", "gemm/gemv", "gemm/gemv-tiled", "ncu/run-1",
                           "ncu/run-2") + ab]
        runs += [os.path.join(gemv, "sanitizer", "run-%s-gemm-%s" % (tool, case))
                 for tool in ("memcheck", "racecheck")
                 for case in ("1x300x257-automatic-simt", "257x1x300-automatic-simt",
                              "1x4096x4096-automatic-tensor-3xtf32",
                              "4096x1x4096-automatic-tensor-3xtf32")]
        runs += [os.path.join("2026-11-29-h200-final-5", r)
                 for r in ("gemm/run", "gemm/strided", "gemm/block-128,128,32", "gemm/block-128,256,16",
                           "gemm/block-128,128,16", "gemm/block-128,64,32") + ab]
        runs += [os.path.join("2026-11-29-h200-final-5/sanitizer", "run-%s-%s" % (tool, shape))
                 for tool in ("memcheck", "racecheck") for shape in ("2048x1536x40", "2048x2048x100")]
        runs += [os.path.join("2026-11-29-h200-simt-tiles", "%d-%s" % (rep, tile))
                 for rep in (1, 2) for tile in ("128x256x32", "128x128x32", "rule")]
        runs += [os.path.join("2026-11-29-h200-param-prefetch", r) for r in ab + ("ncu/run-1", "ncu/run-2")]
        runs += [os.path.join("2026-11-29-h200-wgmma-register-staged", r)
                 for r in ("gemm/run", "gemm/strided", "gemm/block-128,128,32", "gemm/block-128,256,32",
                           "ncu/run-1")]
        runs += [os.path.join("2026-11-29-h200-gemm", r)
                 for r in ("run", "strided", "block-128,128,16", "block-128,64,16")]
        runs += [os.path.join("2026-11-29-h200-gemm/tile-experiment-call4", r)
                 for r in ("block-128,128,16", "block-128,128,8", "block-128,64,16", "block-64,128,16",
                           "block-64,64,16")]
        # every committed folder with a results file is in the list (add new runs above)
        committed = sorted(os.path.relpath(d, root) for d, _, files in os.walk(root)
                           if "results.json" in files or "results.json.gz" in files)
        self.assertEqual(sorted(runs), committed)
        for run_dir in runs:
            result = audit(os.path.join(root, run_dir))
            self.assertEqual(result.returncode, 0, f"{run_dir}: {result.stderr}")

    def test_committed_bundles_audit(self):
        """Every solid archive of a campaign (evidence/STORAGE.md, `evidence-add.sh --bundle`)
        extracts safely to the runs listed here, each re-derivable by the audit from the
        sources the archive holds."""
        root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "evidence")
        planner = "2026-12-01-h200-planner-calibrated-2"

        def regret(shapes, ops):
            return ["regret/%s-%s" % (op, shape) for shape in shapes for op in ops]

        norms = ("softmax", "rmsnorm", "layernorm")
        bundles = {
            os.path.join(planner, "regret-calibrated-a.tar.xz"): regret(("4096x1024", "16384x257"), norms),
            os.path.join(planner, "regret-calibrated-b.tar.xz"): regret(
                ("1024x1024", "64x4096", "37x769", "17x257"), ("sum",) + norms),
            os.path.join(planner, "regret-calibrated-2.tar.xz"): regret(
                ("4096x1024", "64x4096"), ("sum",) + norms),
        }
        small_k = "2026-12-02-h200-gemm-small-k"
        blocks = ["simt-rule", "simt-128,128,32", "simt-128,128,16", "simt-64,64,16", "tensor-rule",
                  "tensor-128,128,32", "tensor-128,128,16", "tensor-64,128,16", "tensor-64,64,16"]
        bundles[os.path.join(small_k, "call2-before/gemm-blocks.tar.xz")] = blocks + [
            "simt-128,128,8", "simt-128,64,16", "simt-64,128,16", "simt-64,64,32", "simt-32,32,32",
            "tensor-128,64,16", "tensor-64,64,32"]
        bundles[os.path.join(small_k, "call4/gemm-blocks.tar.xz")] = [
            "simt-rule", "simt-128,128,32", "simt-128,128,16", "simt-128,64,16", "simt-64,64,16",
            "tensor-rule", "tensor-128,128,32", "tensor-64,64,16", "tensor-128,64,16"]
        probe_off = "2026-12-02-h200-replay-probe-off"
        bundles[os.path.join(probe_off, "call1/replay-dumps.tar.xz")] = ["run", "run-probe-off"]
        for call in ("call2", "call3", "call4"):
            bundles[os.path.join(probe_off, call, "replay-dumps.tar.xz")] = ["run"]
        bundles["2026-12-02-h200-gemm-small-k-few-warps/call1/gemm-blocks.tar.xz"] = [
            "tensor-rule", "tensor-64,64,16", "tensor-128,64,16", "tensor-64,128,16",
            "tensor-64,64,32", "tensor-3xtf32-rule", "tensor-3xtf32-64,64,16",
            "tensor-3xtf32-128,64,16"]
        one_launch = "2026-12-02-h200-wgmma-one-launch"
        ab = ["ab/A1", "ab/A2", "ab/B1", "ab/B2"]
        # runs of two builds (A B B A) are audited a build at a time: one audit of several runs
        # also asks that they share an environment
        builds = {}
        for call in ("call2", "call4"):
            bundles[os.path.join(one_launch, call + ".tar.xz")] = ab + ["gemm/run"]
            builds[os.path.join(one_launch, call + ".tar.xz")] = [
                ["ab/A1", "ab/A2"], ["ab/B1", "ab/B2", "gemm/run"]]
        bundles[os.path.join(one_launch, "call3.tar.xz")] = ["gemm/run", "gemm/strided"] + [
            "sanitizer/run-%s-gemm-%s-automatic-tensor" % (t, s)
            for t in ("memcheck", "racecheck") for s in ("1536x1536x64", "2052x1540x516")]
        shared = "2026-12-06-h100-shared-chunks"
        rows_ab = ["rows/ab/A1", "rows/ab/A2", "rows/ab/B1", "rows/ab/B2"]
        bundles[os.path.join(shared, "call1.tar.xz")] = rows_ab
        bundles[os.path.join(shared, "call2.tar.xz")] = rows_ab + [
            "rows/validation", "rows/ncu/run-1", "rows/ncu/run-2"] + [
            "rows/sanitizer/run-%s-%s-automatic" % (t, c) for t in ("memcheck", "racecheck")
            for c in ("softmax-200x40000", "layernorm-150x100003", "rmsnorm-8x262144")]
        bundles[os.path.join(shared, "call3.tar.xz")] = rows_ab + [
            "gemm/ab/A1", "gemm/ab/A2", "gemm/ab/B1", "gemm/ab/B2", "g8/run"]
        for call in ("call1", "call2", "call3"):
            builds[os.path.join(shared, call + ".tar.xz")] = [
                ["rows/ab/A1", "rows/ab/A2"], ["rows/ab/B1", "rows/ab/B2"]]
        builds[os.path.join(shared, "call2.tar.xz")] += [
            [r] for r in bundles[os.path.join(shared, "call2.tar.xz")] if r not in rows_ab]
        builds[os.path.join(shared, "call3.tar.xz")] += [
            ["gemm/ab/A1", "gemm/ab/A2"], ["gemm/ab/B1", "gemm/ab/B2"], ["g8/run"]]
        persistent = "2026-12-06-h100-persistent-rows"
        san = ["san/sanitizer/run-%s-%s-automatic" % (t, c) for t in ("memcheck", "racecheck")
               for c in ("softmax-16x524288", "layernorm-3x1000003", "rmsnorm-100x393220")]
        v2ab = ["v2ab/V1", "v2ab/V2", "v2ab/B1", "v2ab/B2"]
        bundles[os.path.join(persistent, "call3.tar.xz")] = ab + v2ab + san + [
            "validation", "ncu/run-1", "ncu/run-2"]
        builds[os.path.join(persistent, "call3.tar.xz")] = [
            ["ab/A1", "ab/A2"], ["ab/B1", "ab/B2"], ["v2ab/V1", "v2ab/V2"], ["v2ab/B1", "v2ab/B2"]] + [
            [r] for r in san + ["validation", "ncu/run-1", "ncu/run-2"]]
        shapes = ("1x1000000", "16x4194304", "2x1000000", "10x500000", "16x524288", "3x1000003",
                  "100x393220", "1x4194304", "8x262144", "200x40000", "8x65536")
        san = ["san/sanitizer/run-%s-%s-automatic" % (t, c) for t in ("memcheck", "racecheck")
               for c in ("rmsnorm-1x1000000", "layernorm-1x1000000", "layernorm-16x524288")]
        checks = san + ["validation/" + s for s in shapes]
        bundles[os.path.join(persistent, "call4.tar.xz")] = ab + checks
        builds[os.path.join(persistent, "call4.tar.xz")] = [
            ["ab/A1", "ab/A2"], ["ab/B1", "ab/B2"]] + [[r] for r in checks]
        final = ["validation/" + s for s in ("1x1000000", "16x4194304", "10x500000", "16x524288",
                                              "3x1000003", "100x393220")]
        bundles[os.path.join(persistent, "call5.tar.xz")] = final
        builds[os.path.join(persistent, "call5.tar.xz")] = [[r] for r in final]
        regime = "2026-12-06-h100-graph-regime"
        for call in ("call6", "call12"):  # the worker before and after its graphs' own stream
            bundles[os.path.join(regime, call + ".tar.xz")] = ["b37"]
        for experiments in ("regime", "call13"):  # graph_regime*.py and a check: no run to audit
            bundles[os.path.join(regime, experiments + ".tar.xz")] = []
            builds[os.path.join(regime, experiments + ".tar.xz")] = []
        campaign = "2026-12-06-h100-batch-campaign"  # issue 18's eight shapes in two calls
        for call, call_shapes in (("call1", ("37x769", "17x257", "64x4096", "1024x1024", "8x65536")),
                                  ("call2", ("4096x1024", "16384x257", "32768x8192"))):
            bundles[os.path.join(campaign, call + ".tar.xz")] = ["batch/" + s for s in call_shapes]
            builds[os.path.join(campaign, call + ".tar.xz")] = [["batch/" + s] for s in call_shapes]
        elementwise = "2026-12-06-h100-elementwise-tree-merge"
        user_widths = ["ew%d-b%d" % (e, b) for e, b in ((4, 256), (4, 32), (8, 32), (4, 64), (8, 64),
                                                        (1, 32), (1, 128), (16, 32))]
        bundles[os.path.join(elementwise, "call1.tar.xz")] = ab + ["ew-ref"] + user_widths
        builds[os.path.join(elementwise, "call1.tar.xz")] = [["ab/A1", "ab/A2"], ["ab/B1", "ab/B2"]] + [
            [r] for r in ["ew-ref"] + user_widths]
        # the rule by size (e1f587c) against 192d966, the lean user kernels, validation, sanitizers
        sanitized = ["s2/sanitizer/run-%s-%s-automatic" % (t, c)
                     for t, cases in (("memcheck", ("add-17x257", "gelu_add-37x769",
                                                    "layernorm-8x65536", "softmax-200x40000")),
                                      ("racecheck", ("add-17x257", "gelu_add-37x769")))
                     for c in cases]
        lean = ["lean1-b128", "lean2-b128", "lean4-b128", "lean4-b256"]
        singles = ["ew-ref"] + lean + ["s2/validation"] + sanitized
        bundles[os.path.join(elementwise, "call2.tar.xz")] = ["s1/" + r for r in ab] + singles
        builds[os.path.join(elementwise, "call2.tar.xz")] = [
            ["s1/ab/A1", "s1/ab/A2"], ["s1/ab/B1", "s1/ab/B2"]] + [[r] for r in singles]
        # the landed build: native against torch.compile, calibrated-2's four shapes validated, ncu
        landed = ["vs-compile", "s3/validation", "s2/ncu/run-1", "s2/ncu/run-2"]
        bundles[os.path.join(elementwise, "call3.tar.xz")] = landed
        builds[os.path.join(elementwise, "call3.tar.xz")] = [[r] for r in landed]
        # issue 18's scope-order runs (A B C D D C B A, one build), its schema-9 batch runs, the
        # gelu_add walk survey (user kernels beside native) and the H100 planner regret
        order = "2026-12-06-h100-scope-order"
        calls = {
            "call1": ["s1/scope-order/run-%s" % r for r in ("A1", "A3", "B1", "B3", "C1", "C3", "D1", "D3")],
            "call2": ["s1/batch/" + s for s in ("17x257", "64x128", "65536x17")],
            "call3": ["ew/%d-v%s" % (k + 1, v) for k, v in enumerate(
                ("4b256", "2b128", "2b256", "4b128", "1b128", "1b128", "4b128", "2b256", "2b128", "4b256"))],
            "call4": ["r/regret/%s-%s" % (op, shape) for op in norms
                      for shape in ("4096x1024", "16384x257", "2048x4096")],
        }
        for call, runs_of_call in calls.items():
            bundles[os.path.join(order, call + ".tar.xz")] = runs_of_call
            builds[os.path.join(order, call + ".tar.xz")] = [[r] for r in runs_of_call]
        # issue 19's validation matrix (stored loose until 2026-12-06, now one archive)
        validation = ["validation-%d" % i for i in (1, 2, 3)]
        bundles["2026-12-01-h200-validation-defences/calls.tar.xz"] = validation
        builds["2026-12-01-h200-validation-defences/calls.tar.xz"] = [[r] for r in validation]
        # issue 21's cluster rows: the merges and the spread policy (H200), the push (H100)
        exchange = "2026-12-06-h200-h100-cluster-exchange"
        call1 = ["ab/" + r for r in ("A1", "A2", "M1", "M2", "S1", "S2")] + [
            "compile", "ncu/run-1", "ncu/run-2", "ncu/run-3"]
        bundles[os.path.join(exchange, "call1.tar.xz")] = call1
        builds[os.path.join(exchange, "call1.tar.xz")] = [
            ["ab/A1", "ab/A2"], ["ab/M1", "ab/M2"], ["ab/S1", "ab/S2"]] + [[r] for r in call1[6:]]
        sanitized = ["s/sanitizer/run-%s-%s-automatic" % (tool, case)
                     for tool in ("memcheck", "racecheck")
                     for case in ("layernorm-8x65536", "rmsnorm-100x8195", "softmax-200x40000",
                                  "sum-10x500000")]
        singles = ["compile", "ncu-run-baseline", "ncu-run-bin", "validate"] + sanitized
        bundles[os.path.join(exchange, "call2.tar.xz")] = ["ab/" + r for r in ab] + singles
        builds[os.path.join(exchange, "call2.tar.xz")] = [
            ["ab/ab/A1", "ab/ab/A2"], ["ab/ab/B1", "ab/ab/B2"]] + [[r] for r in singles]
        singles = ["validate"] + ["s/sanitizer/run-%s-%s-automatic" % (tool, case)
                                  for tool in ("memcheck", "racecheck")
                                  for case in ("layernorm-8x65536", "softmax-200x40000")]
        bundles[os.path.join(exchange, "call3.tar.xz")] = ["ab/" + r for r in ab] + singles
        builds[os.path.join(exchange, "call3.tar.xz")] = [
            ["ab/ab/A1", "ab/ab/A2"], ["ab/ab/B1", "ab/ab/B2"]] + [[r] for r in singles]
        def one_run_each(bundle, runs):  # a bundle whose runs are audited one at a time
            bundles[bundle] = runs
            builds[bundle] = [[r] for r in runs]

        # runs of a rejected rule this audit does not derive: each refused, naming the fact
        refused = {}

        def ab_then_singles(bundle, singles, letters="AB"):
            # ab/A1 A2 B1 B2 ... (a chain of builds), each build's two runs audited together
            ab = ["ab/%s%d" % (build, run) for build in letters for run in (1, 2)]
            bundles[bundle] = ab + singles
            builds[bundle] = [ab[i:i + 2] for i in range(0, len(ab), 2)] + [[r] for r in singles]

        # issue 21's chain of row-kernel changes, each build against the one before it (F, the
        # shifted register rows, rejected), and Nsight Compute on native and torch.compile kernels
        chain = "2026-12-07-h100-row-kernel-chain"
        ab_then_singles(os.path.join(chain, "call1.tar.xz"), ["validation"], "ABCDEF")
        one_run_each(os.path.join(chain, "call2.tar.xz"), ["ncu/run-%d" % i for i in (1, 2, 3)])
        one_run_each(os.path.join(chain, "call3.tar.xz"),
                     ["ncu/run-%d" % i for i in (1, 2, 3, 4)])
        # issue 21 at 6bc063d (H100): Nsight Compute's SASS source pages on softmax's persistent
        # rows and the scoreboard against torch.compile (call1), the planner's regret (call2)
        sass = "2026-12-07-h100-sass-compile-regret"
        one_run_each(os.path.join(sass, "call1.tar.xz"), ["ncu/run-1", "ncu/run-2"] + [
            "targets/compile-%s" % shape for shape in (
                "1024x1024", "16384x257", "17x257", "32768x8192", "37x769", "4096x1024",
                "64x4096", "8192x32768")])
        one_run_each(os.path.join(sass, "call2.tar.xz"), [
            "regret/%s-%s" % (op, shape) for op in ("sum", "softmax", "rmsnorm", "layernorm")
            for shape in ("1024x1024", "16384x257", "37x769", "4096x1024", "64x4096")] + [
            "regret/softmax-17x257"])
        # issue 21's persistent-row chain (A main, B whole groups, C the counter never put
        # back, D the merge ahead, rejected) with D's validation, sanitizers and one-row
        # targets (call1); the scoreboard's last two shapes and the regret at two more (call2)
        chain2 = "2026-12-07-h100-persistent-chain-scoreboard"
        ab_then_singles(os.path.join(chain2, "call1.tar.xz"), ["validation", "targets/one-row"] + [
            "sanitizer/run-%s-%s-automatic" % (tool, case) for tool in ("memcheck", "racecheck")
            for case in ("layernorm-10x500000", "rmsnorm-20x500000", "softmax-3x1000003")],
            "ABCD")
        one_run_each(os.path.join(chain2, "call2.tar.xz"), [
            "targets/compile-262144x257", "targets/compile-8x65536"] + [
            "regret/%s-%s" % (op, shape) for op, shape in (
                ("layernorm", "17x257"), ("rmsnorm", "17x257"), ("softmax", "17x257"),
                ("sum", "17x257"), ("rmsnorm", "262144x257"), ("softmax", "262144x257"))])
        # issue 21 (H100): the wgmma kernel's 64x128 tile against main (call1; B's gemm runs and
        # its sanitizer runs record that rejected rule, which this audit does not derive, so
        # only main's runs and the row kernels profiled there are audited); the group barrier's
        # release arrival (B, rejected) and softmax's 8-byte partials (C) with C's validation,
        # sanitizers and one-row targets (call2)
        partials = "2026-12-08-h100-gemm-64-rows-barrier-partials"
        one_run_each(os.path.join(partials, "call1.tar.xz"),
                     ["ab/A1", "ab/A2", "ncu/run-1", "ncu/run-2"])
        refused[os.path.join(partials, "call1.tar.xz")] = {
            run: "plan.instruction: recorded 'wgmma.m64n64k8', re-derived 'wgmma.m64n128k8'"
            for run in ["ab/B1", "ab/B2"] + [
                "sanitizer/run-%s-gemm-1024x1024x1024-automatic-tensor" % tool
                for tool in ("memcheck", "racecheck")]}
        ab_then_singles(os.path.join(partials, "call2.tar.xz"),
                        ["validation", "targets/one-row", "ncu/run-1"] + [
                            "sanitizer/run-%s-%s-automatic" % (tool, case)
                            for tool in ("memcheck", "racecheck")
                            for case in ("layernorm-10x500000", "softmax-1x1000000",
                                         "softmax-4x200000")], "ABC")
        # issue 21's register rows whose misaligned rows are cached lane-contiguously (B)
        # against the build before it (A)
        ab_then_singles(os.path.join("2026-12-07-h100-register-rows-lane-contiguous",
                                     "call1.tar.xz"), ["validation"])
        # issue 21's long-row, short-row, one-row and gemm targets at main (H100)
        one_run_each(os.path.join("2026-12-07-h100-targets-rows-gemm", "call1.tar.xz"),
                     ["ncu/run-%d" % i for i in range(1, 6)] + [
                         "targets/" + part for part in ("gemm", "long-rows", "one-row",
                                                        "short-rows")])
        # issue 21's matrix-vector plans under every realization (B) against the first rule (A)
        ab_then_singles(os.path.join("2026-12-07-h100-gemv-every-realization", "call1.tar.xz"),
                        ["sanitizer/run-%s-gemm-%s-automatic-tensor" % (tool, shape)
                         for tool in ("memcheck", "racecheck")
                         for shape in ("1x4096x4096", "257x1x300")])
        # issue 21's wgmma 128x128 from a quarter of a wave (B) against a whole wave (A), and the
        # tile runs below it
        ab_then_singles(os.path.join("2026-12-07-h100-gemm-wgmma-quarter-wave", "call1.tar.xz"),
                        ["gemm-blocks/tensor-" + b for b in ("rule", "128,128,32", "128,64,32")])
        # and whatever the grid (B) against from a quarter (A)
        ab_then_singles(os.path.join("2026-12-07-h100-gemm-wgmma-any-grid", "call1.tar.xz"), [])
        # issue 21's split of k under a wave (B) against k whole (A), and the batched row passes
        # (C) after it; C's validation and the sanitizers of both changes' kernels
        ab_then_singles(os.path.join("2026-12-07-h100-gemm-wgmma-split-k", "call1.tar.xz"),
                        ["validation"] + ["sanitizer/run-%s-%s-automatic%s" % (tool, case, tensor)
                                          for tool in ("memcheck", "racecheck")
                                          for case, tensor in (
                                              ("gemm-128x128x1024", "-tensor"),
                                              ("gemm-640x640x1024", "-tensor"),
                                              ("layernorm-100x8195", ""),
                                              ("layernorm-200x40000", ""),
                                              ("sum-10x500000", ""), ("sum-2x1000000", ""))],
                        "ABC")
        # the same three builds over the rows the batched passes touch, and Nsight Compute on C
        ab_then_singles(os.path.join("2026-12-07-h100-row-passes-batched", "call1.tar.xz"),
                        ["ncu/run-%d" % i for i in (1, 2, 3, 4)], "ABC")
        # the norms' shared chunks (B) against block streaming (A), sum's split rows in one launch
        # (C) after them; C's validation, sanitizers and one-row targets, then Nsight Compute and
        # the long-row targets on C
        chunks = "2026-12-07-h100-norm-chunks-sum-one-launch"
        ab_then_singles(os.path.join(chunks, "call1.tar.xz"),
                        ["validation", "targets/one-row"] + [
                            "sanitizer/run-%s-%s-automatic" % (tool, case)
                            for tool in ("memcheck", "racecheck")
                            for case in ("layernorm-200x40000", "rmsnorm-200x40000",
                                         "sum-2x1000000", "sum-3x1000003")], "ABC")
        one_run_each(os.path.join(chunks, "call2.tar.xz"), ["ncu/run-1", "ncu/run-2"])
        one_run_each(os.path.join(chunks, "call3.tar.xz"), ["targets/long-rows"])
        committed = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, files in os.walk(root)
                           for f in files if f.endswith(".tar.xz"))
        self.assertEqual(sorted(bundles), committed)
        for bundle, inner in bundles.items():
            with tempfile.TemporaryDirectory() as tmp, tarfile.open(os.path.join(root, bundle)) as tar:
                extract_plainly(tar, tmp)
                top = os.path.join(tmp, os.path.basename(bundle)[:-len(".tar.xz")])
                found = sorted(os.path.relpath(d, top) for d, _, files in os.walk(top)
                               if "results.json" in files or "results.json.gz" in files)
                self.assertEqual(found, sorted(inner + list(refused.get(bundle, {}))), bundle)
                for group in builds.get(bundle, [inner]):
                    result = audit(*(os.path.join(top, r) for r in group))
                    self.assertEqual(result.returncode, 0, f"{bundle}: {result.stderr}")
                for run, why in refused.get(bundle, {}).items():
                    result = audit(os.path.join(top, run))
                    self.assertEqual(result.returncode, 1, f"{bundle} {run}: {result.stderr}")
                    self.assertIn(why, result.stderr, f"{bundle} {run}")


class CompressedEvidenceTest(unittest.TestCase):
    """Large committed runs are stored as results.json.gz: the audit reads them, and its
    receipt names the digest of the file as written (the decompressed bytes)."""

    def test_gzipped_results_audit_with_the_original_digest(self):
        root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "evidence")
        run = os.path.join(root, "2026-11-29-h200-final-5", "gemm", "block-128,64,32")
        tmp = tempfile.mkdtemp()
        try:
            copy = os.path.join(tmp, "run")
            copy_run(run, copy)
            with open(os.path.join(copy, "results.json"), "rb") as f:
                original = f.read()
            with gzip.open(os.path.join(copy, "results.json.gz"), "wb") as f:
                f.write(original)
            os.remove(os.path.join(copy, "results.json"))
            receipt = os.path.join(tmp, "receipt.json")
            result = subprocess.run([sys.executable, AUDIT, copy, "--receipt", receipt],
                                    capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(receipt) as f:
                inputs = json.load(f)["inputs"]
            self.assertEqual(inputs[0]["results_sha256"], hashlib.sha256(original).hexdigest())
            # a truncated .gz is a malformed record (exit 3, MALFORMED), not a traceback
            with open(os.path.join(copy, "results.json.gz"), "r+b") as f:
                f.truncate(100)
            result = subprocess.run([sys.executable, AUDIT, copy], capture_output=True, text=True)
            self.assertEqual(result.returncode, 3)
            self.assertIn("not a complete gzip file", result.stderr)
            self.assertNotIn("Traceback", result.stderr)
        finally:
            shutil.rmtree(tmp)


class GemmAuditTest(Corruptions, unittest.TestCase):
    """The audit's gemm checks on a real H200 run (committed evidence): the
    precision label, the realization's tolerance and the tile rule."""
    RUN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "evidence",
                       "2026-11-29-h200-gemm", "run")

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-audit-gemm-")

    def case(self, doc, provider, realization, m=4096):
        return next(c for c in doc["cases"] if c["provider"] == provider
                    and c["realization"] == realization and c["m"] == m)

    def test_clean_run_passes(self):
        self.assertEqual(audit(self.RUN).returncode, 0)

    def test_precision_label(self):
        self.assert_caught(self.RUN, lambda d: self.case(d, "cublas", "tensor").update(precision="fp32"),
                           "precision")

    def test_tf32_tolerance_on_an_fp32_realization(self):
        def m(d):
            simt = self.case(d, "native", "simt")
            simt["validation"]["atol"] = self.case(d, "native", "tensor")["validation"]["atol"]
        self.assert_caught(self.RUN, m, "validation.atol")

    def test_tile_not_the_rule(self):
        def m(d):
            self.case(d, "native", "simt")["execution_plans"][0]["tile"]["block_n"] = 128
        self.assert_caught(self.RUN, m, "plan.tile")

    def test_report_pairs_like_with_like(self):
        """Native / frameworks: each native gemm case once against cublas and
        once against torch, never across realizations."""
        report = os.path.join(self.tmp, "report.md")
        r = run("report", self.RUN, "--output", report)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(report) as f:
            text = f.read()
        section = text.split("## Native / frameworks")[1].split("\n## ")[0]
        rows = [line.split(" | ")[:2] for line in section.splitlines() if line.startswith("| gemm/")]
        self.assertEqual(len(rows), 5 * 3 * 2)  # shapes x realizations x (cublas, torch)
        self.assertEqual(len({tuple(r) for r in rows}), len(rows))

    def test_cublas_math_mode(self):
        def m(d):
            self.case(d, "cublas", "simt")["provider_details"]["cublas"]["math_mode"] = \
                "CUBLAS_TF32_TENSOR_OP_MATH"
        self.assert_caught(self.RUN, m, "provider_details.cublas.math_mode")

    def test_torch_tf32_not_matched(self):
        def m(d):
            c = self.case(d, "torch", "tensor-3xtf32")
            c["provider_details"]["implementation"] = "torch.matmul(out=), allow_tf32=True"
        self.assert_caught(self.RUN, m, "allow_tf32")

    def test_vector_width(self):
        def m(d):
            self.case(d, "native", "tensor")["execution_plans"][0]["vector_width"] = 1
        self.assert_caught(self.RUN, m, "plan.vector_width")


class GemmPlanRecords:
    """The audit's gemm plan checks on the plans `tilebench plan --json` writes (no GPU
    here, and the CPU backend plans no gemm)."""

    @classmethod
    def setUpClass(cls):
        cls.audit = audit_module()

    def plan(self, shape, realization="simt"):
        r = run("plan", "--op", "gemm", "--shape", shape, "--matrix-realization", realization,
                "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def check(self, record, realization="simt", view="packed", kernels=None):
        case = {"realization": realization, "input_view": {"kind": view}}
        if kernels is not None:
            case["provider_details"] = {"kernels": kernels}
        a = self.audit.Audit()
        self.audit.check_plan(a, record, "plan")
        return self.audit.audit_gemm_plan(a, record, case, "9.0")

    def assert_caught(self, record, field, **kw):
        with self.assertRaises(self.audit.Discrepancy) as caught:
            self.check(record, **kw)
        self.assertIn(field, str(caught.exception))


class GemvPlanAuditTest(GemmPlanRecords, unittest.TestCase):
    """The audit's matrix-vector rule (docs/gemm.md): every fact re-derived, a changed one
    named, and records of the tiled rule told apart."""

    def test_rule_passes(self):
        for shape, kind, splits in (("1x4096x4096", "columns", 128), ("4096x1x4096", "rows", 1),
                                    ("1x300x257", "columns", 17), ("257x1x300", "rows", 1),
                                    ("1x1x64", "rows", 1), ("1x1x4096", "rows", 8)):
            for realization in ("simt", "tensor", "tensor-3xtf32"):
                record = self.plan(shape, realization)
                self.assertEqual((record["gemv"], record["k_splits"]), (kind, splits), shape)
                self.assertEqual(self.check(record, realization)["barriers"], 0)
        # k % 4 != 0: 1-float loads, as on a strided view
        self.check(self.plan("1x300x257"), view="strided")

    def test_user_blocks_and_the_first_rule_stay_tiled(self):
        # records of the first matrix-vector rule (no gemv_realizations) planned tensor tiled
        record = self.plan("1x4096x4096", "tensor")
        self.assertEqual(record["gemv_realizations"], ["simt", "tensor", "tensor-3xtf32"])
        first = dict(record)
        del first["gemv_realizations"]
        self.assert_caught(first, "plan.gemv", realization="tensor")
        record["gemv_realizations"] = ["simt", "tensor-3xtf32"]  # a list no build recorded
        self.assert_caught(record, "plan.gemv_realizations", realization="tensor")
        r = run("plan", "--op", "gemm", "--shape", "1x4096x4096", "--gemm-block", "64,64,16",
                "--json")
        tiled = json.loads(r.stdout)
        self.assertIsNone(tiled["gemv"])
        self.check(tiled)
        tiled["k_splits"] = 2
        self.assert_caught(tiled, "plan.k_splits")

    def test_every_fact_tampered_is_caught(self):
        changes = (("k_splits", 64), ("k_chunk", 64), ("combine_blocks", 8),
                   ("workspace_floats", 4096), ("launches", 1), ("thread_blocks", 256),
                   ("waves", 2), ("vector_width", 1), ("threads", 128), ("barrier_sites", 1),
                   ("shared_bytes", 1024), ("stages", 3), ("instruction", "mma.sync.m16n8k8"),
                   ("blocks_per_multiprocessor", 2), ("grid_n", 8), ("gemv", None))
        for key, value in changes:
            record = self.plan("1x4096x4096")
            record[key] = value
            self.assert_caught(record, f"plan.{key}")
        for key, value in (("block_n", 512), ("block_k", 64), ("thread_n", 1)):
            record = self.plan("1x4096x4096")
            record["tile"][key] = value
            self.assert_caught(record, "plan.tile")
        record = self.plan("4096x1x4096")
        record["gemv"] = "columns"
        self.assert_caught(record, "plan.gemv")
        record = self.plan("257x1x300")
        self.assert_caught(record, "plan.vector_width", view="strided")
        record = self.plan("1x4096x4096")
        record["rule"] = "simt: 128x256x32 when its blocks fill at least 90 % of its waves"
        self.assert_caught(record, "plan.rule")

    def test_launched_kernels(self):
        record = self.plan("1x4096x4096")
        kernels = [{"name": "tb_main", "threads_per_block": 256, "blocks": 512},
                   {"name": "tb_combine", "threads_per_block": 256, "blocks": 16}]
        self.check(record, kernels=kernels)
        self.assert_caught(record, "provider_details.kernels", kernels=kernels[:1])
        kernels[1]["blocks"] = 15
        self.assert_caught(record, "provider_details.kernels", kernels=kernels)
        single = [{"name": "tb_main", "threads_per_block": 256, "blocks": 512}]
        self.check(self.plan("4096x1x4096"), kernels=single)


class SmallKPlanAuditTest(GemmPlanRecords, unittest.TestCase):
    """The audit's small-k tile rule and per-operand load widths (docs/gemm.md), with
    records from before either told apart."""

    def test_small_k_tiles_re_derive(self):
        for shape, realization, tile in (("4096x4096x13", "simt", (128, 128, 16)),
                                         ("4096x4096x37", "simt", (128, 128, 8)),
                                         ("4096x4096x64", "simt", (128, 128, 32)),
                                         ("4096x4096x65", "simt", (128, 256, 32)),
                                         ("4096x4096x13", "tensor", (64, 64, 16)),
                                         ("4096x4096x32", "tensor", (128, 128, 16)),
                                         ("4096x4096x48", "tensor", (128, 128, 16)),
                                         ("1999x2999x37", "tensor", (64, 64, 16)),
                                         ("4096x4096x32", "tensor-3xtf32", (64, 64, 16)),
                                         ("4096x4096x49", "tensor-3xtf32", (128, 128, 32)),
                                         ("4096x4096x49", "tensor", (128, 256, 32)),
                                         ("4096x4096x64", "tensor", (256, 128, 32)),
                                         ("2048x1536x512", "tensor", (128, 128, 32)),
                                         ("1000x1000x40", "tensor-3xtf32", (64, 64, 16))):
            record = self.plan(shape, realization)
            t = record["tile"]
            self.assertEqual((t["block_m"], t["block_n"], t["block_k"]), tile, shape)
            self.check(record, realization)

    def test_tensor_map_plans_tampered_are_caught(self):
        # the single-launch wgmma kernel (aligned rows, tensor maps): one launch, 384 threads
        record = self.plan("4096x4096x4096", "tensor")
        self.assertTrue(record["tensor_maps"])
        self.assertEqual((record["launches"], record["threads"]), (1, 384))
        self.check(record, "tensor")
        for key, value in (("tensor_maps", False), ("shared_bytes", record["shared_bytes"] - 16),
                           ("stages", 6), ("launches", 2), ("instruction", "wgmma.m64n128k8")):
            tampered = json.loads(json.dumps(record))
            tampered[key] = value
            self.assert_caught(tampered, f"plan.{key}", realization="tensor")
        # a rule text from before the single-launch kernel re-derives the packed one's tile
        old = json.loads(json.dumps(record))
        old["rule"] = old["rule"].replace("tensor maps", "bulk copies")
        self.assert_caught(old, "plan.tensor_maps", realization="tensor")

    def test_wgmma_below_a_wave_re_derives(self):
        # 1024^3 (64 blocks of 128x128) and 640x640x1024 (25): the single-launch wgmma kernel's
        # 128x128 whatever the grid
        for shape in ("1024x1024x1024", "640x640x1024"):
            record = self.plan(shape, "tensor")
            t = record["tile"]
            self.assertEqual((t["block_m"], t["block_n"], record["instruction"]),
                             (128, 128, "wgmma.m64n128k8"), shape)
            self.check(record, "tensor")
        # the rules before: from a quarter of a wave (33 blocks), then from a whole one;
        # records of each re-derive mma.sync 64x64 below it (first difference: no tensor maps)
        quarter = "else 128x128 when theirs has at least a quarter of one, else mma.sync 64x64;"
        whole = "else 128x128 (same test), else mma.sync 64x64;"
        for shape, rule in (("640x640x1024", quarter), ("1024x1024x1024", whole)):
            old = self.plan(shape, "tensor")
            old["rule"] = old["rule"].replace("else 128x128 whatever the grid;", rule)
            self.assertIn(rule, old["rule"])
            self.assert_caught(old, "plan.tensor_maps", realization="tensor")
        old = self.plan("1024x1024x1024", "tensor")
        old["rule"] = old["rule"].replace("else 128x128 whatever the grid;", quarter)
        self.check(old, "tensor")

    def test_split_k_re_derives(self):
        # under a wave the single-launch kernel splits k: 1024x1024x4096 in 2 chunks of 2048,
        # 128x128x1024 in 8 of 128, 1024^3 not (two chunks of 16 k tiles); each fact
        # re-derived, the kernels the provider launched too
        for shape, splits, chunk in (("1024x1024x4096", 2, 2048), ("128x128x1024", 8, 128),
                                     ("640x640x1024", 5, 224), ("2048x1024x512", 1, 512),
                                     ("1024x1024x1024", 1, 1024)):
            record = self.plan(shape, "tensor")
            self.assertEqual((record["k_splits"], record["k_chunk"]), (splits, chunk), shape)
            self.check(record, "tensor")
        record = self.plan("1024x1024x4096", "tensor")
        kernels = [{"name": "tb_main", "threads_per_block": 384, "blocks": 128},
                   {"name": "tb_combine", "threads_per_block": 256, "blocks": 4096}]
        self.check(record, "tensor", kernels=kernels)
        self.assert_caught(record, "provider_details.kernels", realization="tensor",
                           kernels=kernels[:1])
        for key, value in (("k_splits", 4), ("k_chunk", 1024), ("combine_blocks", 0),
                           ("workspace_floats", 0), ("launches", 1), ("thread_blocks", 64)):
            tampered = json.loads(json.dumps(record))
            tampered[key] = value
            self.assert_caught(tampered, f"plan.{key}", realization="tensor")
        # a rule text from before the split keeps k whole
        old = json.loads(json.dumps(record))
        old["rule"] = old["rule"].replace(
            " under a wave, k split in chunks of whole k tiles (at least 4) as the wave allows, "
            "two only of at least 64, partial tiles added in chunk order by a second launch;", "")
        self.assertNotIn("k split", old["rule"])
        self.assert_caught(old, "plan.k_splits", realization="tensor")
        # the first split's text (no "two only") split 1024^3 in two chunks of 512: a record of
        # it re-derives so, and this build's record of 1024^3 (k whole) under it is caught
        first = self.plan("1024x1024x1024", "tensor")
        first["rule"] = first["rule"].replace(" two only of at least 64,", "")
        self.assertIn("k split in chunks", first["rule"])
        self.assertNotIn("two only", first["rule"])
        self.assert_caught(first, "plan.k_splits", realization="tensor")
        split = json.loads(json.dumps(first))
        split.update(k_splits=2, k_chunk=512, thread_blocks=128, waves=1, launches=2,
                     workspace_floats=2 * 1024 * 1024, combine_blocks=4096)
        self.check(split, "tensor", kernels=kernels)

    def test_small_k_facts_tampered_are_caught(self):
        record = self.plan("4096x4096x13")
        record["tile"]["block_k"] = 32
        self.assert_caught(record, "plan.tile")
        tensor = self.plan("4096x4096x13", "tensor")
        self.assertEqual(tensor["instruction"], "mma.sync.m16n8k8")
        tensor["instruction"] = "wgmma.m64n256k8"
        self.assert_caught(tensor, "plan.instruction", realization="tensor")
        # a record without "small k" in its rule is re-derived by the rule before it:
        # 128x256x32, one block an SM
        old = self.plan("4096x4096x13")
        old["rule"] = old["rule"].replace("small k", "short k")
        self.assert_caught(old, "plan.blocks_per_multiprocessor")
        # four warps at small k (3xTF32, a scalar load): a rule text without that part is
        # re-derived at 128x128, and a 128x128 tile under the rule that has it is caught
        few = self.plan("4096x4096x13", "tensor")
        few["rule"] = few["rule"].replace(", 64x64 with 3xTF32 or a scalar load", "")
        self.assert_caught(few, "plan.tile", realization="tensor")
        # a record of the rule before it (no such words; 128x128x16 with A loaded one float at
        # a time) still re-derives: the user block's plan under that rule's profile and text
        r = run("plan", "--op", "gemm", "--shape", "4096x4096x13", "--matrix-realization",
                "tensor", "--gemm-block", "128,128,16", "--json")
        before = json.loads(r.stdout)
        self.assertEqual(before["a_vector_width"], 1)
        before["profile"], before["rule"] = "rule", few["rule"]
        self.check(before, realization="tensor")
        wide = self.plan("4096x4096x32", "tensor-3xtf32")
        wide["tile"].update(block_m=128, block_n=128, thread_m=64, thread_n=32, warps_n=4)
        self.assert_caught(wide, "plan.tile", realization="tensor-3xtf32")

    def test_operand_widths(self):
        record = self.plan("4096x4096x13")  # A's rows 13 floats: A scalar, B and the output wide
        self.assertEqual((record["a_vector_width"], record["vector_width"]), (1, 4))
        self.check(record)
        # a strided view's rows are aligned for neither: k = 16 plans A at 4 on a packed view
        strided = self.plan("4096x4096x16")
        self.assertEqual((strided["a_vector_width"], strided["vector_width"]), (4, 4))
        self.assert_caught(strided, "plan.a_vector_width", view="strided")
        strided["a_vector_width"] = 1
        self.assert_caught(strided, "plan.vector_width", view="strided")
        record["a_vector_width"] = 4
        self.assert_caught(record, "plan.a_vector_width")
        # without a_vector_width, the one width of before: 4 only where k and n both are
        legacy = self.plan("4096x4096x13")
        del legacy["a_vector_width"]
        self.assert_caught(legacy, "plan.vector_width")
        legacy["vector_width"] = 1
        self.check(legacy)


# compare has its own file: tests/test_compare.py.


class ReplayIntervalTest(Corruptions, unittest.TestCase):
    """A replay's intervals of the median gain, noise, band and decision (schema 4,
    docs/method.md §3.2): shown on the terminal, re-derived by the audit, and a tampered
    figure caught."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-replay-interval-")
        cls.replay_dir = os.path.join(cls.tmp, "replay")
        r = run("replay", "--ops", "softmax,rmsnorm", "--shapes", "37x769", "--rounds", "6",
                "--samples", "5", "--warmup-ms", "1", "--sample-ms", "1", "--out", cls.replay_dir)
        assert r.returncode == 0, r.stderr
        cls.stdout = r.stdout
        with open(os.path.join(cls.replay_dir, "results.json")) as f:
            cls.doc = json.load(f)

    def test_terminal_gives_each_case_its_range_and_decision(self):
        for entry in self.doc["replay"]["cases"]:
            block = self.stdout.split(entry["case"] + "\n", 1)[1]
            rec = entry["metrics"]["host_throughput"]
            line = next(l for l in block.splitlines() if l.startswith("  host throughput"))
            self.assertIn(f"{rec['median']:.3f} [{rec['min']:.3f}, {rec['max']:.3f}]", line)
            self.assertIn(f"96.9% interval [{rec['interval']['lo']:.3f}, "
                          f"{rec['interval']['hi']:.3f}], band ±{100 * rec['band']:.1f}%: "
                          f"{rec['decision']}", line)
            self.assertIn(rec["decision"], ("SAME", "FASTER", "SLOWER", "INCONCLUSIVE"))
        # the CPU backend: said once per case, not as a missing round
        self.assertIn("  GPU              no GPU: device statistics not measured", self.stdout)
        self.assertNotIn("lacks a complete", self.stdout)
        gpu = self.doc["replay"]["cases"][0]["metrics"]["gpu_throughput"]
        self.assertEqual(gpu["withheld"], "no GPU: device statistics not measured")

    def test_recorded_method_and_exact_coverage(self):
        self.assertEqual(self.doc["schema_version"], 9)
        self.assertEqual(self.doc["replay"]["method"]["level"], 0.95)
        self.assertIsNone(self.doc["replay"]["method"]["seed"])
        rec = self.doc["replay"]["cases"][0]["metrics"]["host_latency"]
        # 6 rounds: k = 1, P(U = 0) = 1/64, coverage 1 - 2/64
        self.assertEqual(rec["interval"]["rank"], 1)
        self.assertAlmostEqual(rec["interval"]["coverage"], 1 - 2 / 64)
        self.assertEqual(rec["interval"]["lo"], min(rec["gain"]))
        self.assertGreaterEqual(rec["band"], 0.02)

    def test_clean_replay_audits(self):
        result = audit(self.replay_dir)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_tampered_decision(self):
        def m(d):
            rec = d["replay"]["cases"][0]["metrics"]["host_throughput"]
            rec["decision"] = "SAME" if rec["decision"] != "SAME" else "FASTER"
        self.assert_caught(self.replay_dir, m, "host_throughput.decision")

    def test_tampered_interval(self):
        def m(d):
            d["replay"]["cases"][1]["metrics"]["host_latency"]["interval"]["lo"] *= 0.99
        self.assert_caught(self.replay_dir, m, "host_latency.interval.lo")

    def test_tampered_band_and_noise(self):
        def band(d):
            d["replay"]["cases"][0]["metrics"]["host_throughput"]["band"] = 0.5
        self.assert_caught(self.replay_dir, band, "host_throughput.band")

        def noise(d):
            d["replay"]["cases"][0]["metrics"]["host_throughput"]["noise"]["second"] = 0.001
        self.assert_caught(self.replay_dir, noise, "host_throughput.noise.second")

    def test_tampered_method(self):
        def m(d):
            d["replay"]["method"]["seed"] = 7
        self.assert_caught(self.replay_dir, m, "method")


def torch_python():
    """The python that has PyTorch for the torch provider, or None."""
    python = os.environ.get("TILEBENCH_PYTHON", "python3")
    probe = subprocess.run([python, "-c", "import torch"], capture_output=True)
    return python if probe.returncode == 0 else None


@unittest.skipIf(torch_python() is None, "PyTorch not installed")
class ReplayPerCallTest(Corruptions, unittest.TestCase):
    """native / framework per call in the best scope both sides measured (schema 4): on the
    CPU backend host E2E, re-derived by the audit, a tampered ratio or scope caught."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-replay-per-call-")
        cls.replay_dir = os.path.join(cls.tmp, "replay")
        r = subprocess.run([BINARY, "replay", "--ops", "softmax", "--shapes", "37x769",
                            "--providers", "native,torch", "--rounds", "4", *FAST,
                            "--out", cls.replay_dir], capture_output=True, text=True,
                           env={**os.environ, "TILEBENCH_PYTHON": torch_python()})
        assert r.returncode == 0, r.stderr
        cls.stdout = r.stdout
        with open(os.path.join(cls.replay_dir, "results.json")) as f:
            cls.doc = json.load(f)

    def per_call(self, doc, variant="reference"):
        return doc["replay"]["cases"][0]["native_over_framework"]["torch"][variant]["per_call"]

    def test_host_scope_on_the_cpu_and_audited(self):
        rec = self.per_call(self.doc)
        self.assertEqual(rec["scope"], "host")
        self.assertIsNone(rec["withheld"])
        self.assertIn(rec["decision"], ("SAME", "FASTER", "SLOWER", "INCONCLUSIVE"))
        self.assertIn("native / torch (reference), per call (host): ", self.stdout)
        result = audit(self.replay_dir)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_tampered_ratio_and_scope(self):
        def ratio(d):
            self.per_call(d)["ratio"][0] *= 1.01
        self.assert_caught(self.replay_dir, ratio, "per_call.ratio[0]")

        def scope(d):
            self.per_call(d, "candidate")["scope"] = "graph"
        self.assert_caught(self.replay_dir, scope, "candidate.per_call.scope")


class OnStreamAuditTest(Corruptions, unittest.TestCase):
    """docs/method.md §8 launches_on_stream, re-derived by the audit from the probe
    samples: a committed H200 run (native, torch, torch.compile; no kernel off the timed
    stream) given the defence records of schema 5, then probe samples planted with a
    side-stream kernel or a sample that saw no kernel; and a CPU case, which has no
    probe, claiming the defence passed."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-on-stream-")
        converted, doc = committed_h200_run(cls.tmp)
        doc["schema_version"] = 5
        for case in doc["cases"]:
            case["defences"] = None if case["validation"] is None else cls.defences("passed")
        with open(os.path.join(converted, "results.json"), "w") as f:
            json.dump(doc, f)
        cls.gpu_run = os.path.join(cls.tmp, "gpu")
        copy_run(converted, cls.gpu_run)  # with the sources of its cases
        cls.cpu_run = os.path.join(cls.tmp, "cpu")
        r = run("run", "--backend", "cpu", "--ops", "softmax", "--shapes", "37x769", *FAST,
                "--out", cls.cpu_run)
        assert r.returncode == 0, r.stderr

    @staticmethod
    def defences(on_stream):
        not_run = {"outcome": "not_run", "detail": "the provider cannot (as recorded on a GPU)"}
        return {"inputs_unchanged": not_run, "guard_zones": not_run, "fresh_inputs": not_run,
                "every_call": {"outcome": "passed", "detail": "3 calls"},
                "launches_on_stream": {"outcome": on_stream, "detail": "as the C side"}}

    def test_the_converted_run_audits(self):
        result = audit(self.gpu_run)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_side_stream_kernel_must_fail_the_defence(self):
        def m(d):
            d["cases"][0]["device"]["throughput"]["probe"]["side_stream_kernels"][2] = 4
        self.assert_caught(self.gpu_run, m, "launches_on_stream.outcome: recorded 'passed', "
                           "re-derived 'failed'")

    def test_graph_probe_counts_too(self):
        def m(d):
            case = next(c for c in d["cases"] if "batch_modes" in c["device"]["throughput"])
            case["device"]["throughput"]["batch_modes"]["graph"]["probe"]["side_stream_kernels"][0] = 1
        self.assert_caught(self.gpu_run, m, "launches_on_stream.outcome")

    def test_probe_sample_without_kernels_must_fail_the_defence(self):
        def m(d):
            d["cases"][1]["device"]["probe_samples_without_kernels"] = 1
        self.assert_caught(self.gpu_run, m, "re-derived 'failed'")

    def test_probe_off_is_not_run(self):
        def m(d):  # a probe that took no sample: nothing was counted
            device = d["cases"][0]["device"]
            device["throughput"]["probe"] = device["latency"]["probe"] = None
            for mode in device["throughput"].get("batch_modes", {}).values():
                mode["probe"] = None
        self.assert_caught(self.gpu_run, m, "re-derived 'not_run'")

    def test_cpu_case_cannot_claim_it_passed(self):
        def m(d):
            d["cases"][0]["defences"]["launches_on_stream"]["outcome"] = "passed"
        self.assert_caught(self.cpu_run, m, "recorded 'passed', re-derived 'not_run'")


class ClockChecksAuditTest(unittest.TestCase):
    """Schema 7's per-sample clock checks re-derived by the audit's own rule: a CPU run has
    no device record, so its functions are driven with records of the writer's shape."""

    @classmethod
    def setUpClass(cls):
        cls.audit = audit_module()

    RULE = {"tolerance": 0.05, "reason_mask": 0xEC, "recovery_ms": 50, "discard_budget": 3}

    def record(self, kept_throttled=(False, False, False), discarded=(), after=(1980, 1980, 1980),
               reasons=(0, 0, 0)):
        return {"clock_checks": {
            "checked": True, "reference_sm_clock_mhz": 1980, "rule": dict(self.RULE),
            "sm_clock_before_mhz": [1980, 1980, 1980], "sm_clock_after_mhz": list(after),
            "clocks_event_reasons": list(reasons), "kept_throttled": list(kept_throttled),
            "discarded": list(discarded)}}

    def check(self, metric_record, flags=()):
        a = self.audit.Audit()
        self.audit.audit_clock_checks(a, {"flags": list(flags)}, "throughput", metric_record, 3, 3)
        return a.checks

    def test_the_rule(self):
        throttled = self.audit.clock_throttled
        self.assertFalse(throttled(self.RULE, 1980, 1980, 1950, 0x1))  # idle is not throttling
        self.assertTrue(throttled(self.RULE, 1980, 1980, 1980, 0x4))   # power cap
        self.assertTrue(throttled(self.RULE, 1980, 1980, 1800, 0))     # 9 % below
        self.assertFalse(throttled(self.RULE, 1980, 1900, 1900, 0))    # 4 % below

    def test_steady_samples_pass(self):
        self.assertGreater(self.check(self.record()), 0)

    def test_a_kept_throttled_sample_is_caught(self):
        with self.assertRaisesRegex(self.audit.Discrepancy, r"kept_throttled\[1\]"):
            self.check(self.record(after=(1980, 1700, 1980)))

    def test_a_discard_that_passes_the_rule_is_caught(self):
        ok = {"sample": 0, "reason": "x", "sm_clock_before_mhz": 1980, "sm_clock_after_mhz": 1980,
              "clocks_event_reasons": 0}
        with self.assertRaisesRegex(self.audit.Discrepancy, r"discarded\[0\]"):
            self.check(self.record(discarded=[ok]))

    def test_kept_throttled_needs_the_spent_budget_and_the_flag(self):
        bad = {"sample": 0, "reason": "x", "sm_clock_before_mhz": 1980, "sm_clock_after_mhz": 1500,
               "clocks_event_reasons": 0}
        record = self.record(kept_throttled=(True, False, False), after=(1500, 1980, 1980),
                             discarded=[bad])
        with self.assertRaisesRegex(self.audit.Discrepancy, "while the budget lasted"):
            self.check(record)
        record["clock_checks"]["discarded"] = [bad] * 3
        with self.assertRaisesRegex(self.audit.Discrepancy, r"flags \(throttling"):
            self.check(record)
        self.check(record, flags=["throttling (throughput): 3 samples discarded, ..."])


class DefenceRecordsAuditTest(Corruptions, unittest.TestCase):
    """Schema 7's defences re-derived by the audit (docs/method.md §8): timed_outputs from
    its own validation record, plausible from the raw samples and the host copies of a
    CPU run, and from the run's device copy ceiling for a committed H200 run given the
    records a schema 7 run would carry."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-defence-records-")
        cls.cpu_run = os.path.join(cls.tmp, "cpu")
        r = run("run", "--backend", "cpu", "--ops", "softmax,gemm", "--shapes", "37x769,8x8x8",
                "--input-views", "packed", *FAST, "--out", cls.cpu_run)
        assert r.returncode == 0, r.stderr
        cls.gpu_run = cls.converted_gpu_run()

    @classmethod
    def converted_gpu_run(cls):
        tool = audit_module()
        converted, doc = committed_h200_run(cls.tmp)
        doc["schema_version"] = 8
        doc["run"]["tolerance_scale"] = 1.0
        samples = doc["run"]["measure"]["samples"]
        doc["run"]["measure"]["stopping"] = {"rule": "fixed", "samples": samples}

        def stopping(phase):  # schema 6's record of the fixed rule, from the phase's samples
            return {"rule": "fixed", "samples": samples, "samples_taken": samples,
                    "noise": tool.robust_cv(phase["per_call_ns"]), "reason": "fixed_count",
                    "sampled_s": sum(phase["elapsed_ns"]) / 1e9,
                    "wall_s": sum(phase["elapsed_ns"]) / 1e9 + 1, "flags": []}
        ceiling = doc["run"]["copy_ceiling"]["gbps"]
        not_run = {"outcome": "not_run", "detail": "the provider cannot (as recorded on a GPU)"}
        for case in doc["cases"]:
            if case["validation"] is None:
                case["defences"] = None
                continue
            case["validation"]["tolerance_scale"] = 1.0
            unread = {"checked": False, "why_unchecked": "not read (converted from schema 6)"}
            if case["host"] is not None:
                case["host"]["stopping"] = stopping(case["host"]["throughput"])
                case["host"]["cpu_frequency"] = {"available": False,
                                                 "why_unavailable": "converted from schema 6"}
            if case["device"] is not None:
                throughput = case["device"]["throughput"]
                throughput["stopping"] = stopping(throughput["control"])
                case["device"]["clock_warmup"] = dict(unread)
                for metric in ("throughput", "latency"):
                    case["device"][metric]["clock_checks"] = dict(unread)
            figures = [{"scope": scope, "per_call_p50_ns": p50,
                        "gbps": case["minimal_bytes"] / p50, "gflops": None}
                       for scope, p50 in tool.plausible_figures(case)]
            case["defences"] = {
                "inputs_unchanged": not_run, "guard_zones": not_run, "fresh_inputs": not_run,
                "timed_outputs": not_run, "every_call": {"outcome": "passed", "detail": "3 calls"},
                "launches_on_stream": {"outcome": tool.on_stream_outcome(case["device"]),
                                       "detail": "as the C side"},
                "plausible": {"outcome": "passed", "detail": "as the C side", "figures": figures,
                              "bytes_model": "minimal", "margin": 4.0, "flop_margin": 1.05,
                              "ceiling_source": "device_copy", "ceiling_gbps": ceiling,
                              "peak_gflops": None, "peak_basis": None, "worker_clock": False}}
        with open(os.path.join(converted, "results.json"), "w") as f:
            json.dump(doc, f)
        target = os.path.join(cls.tmp, "gpu")
        copy_run(converted, target)
        return target

    def test_runs_audit(self):
        for d in (self.cpu_run, self.gpu_run):
            result = audit(d)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_cpu_records(self):
        with open(os.path.join(self.cpu_run, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema_version"], 9)
        for case in doc["cases"]:
            timed, gate = case["defences"]["timed_outputs"], case["defences"]["plausible"]
            self.assertEqual((timed["outcome"], timed["sets"], timed["sets_checked"]),
                             ("passed", 1, 1), case["id"])
            self.assertTrue(timed["decoy_before_batches"])
            self.assertEqual(gate["outcome"], "passed", gate["detail"])
            self.assertEqual(gate["ceiling_source"], "host_copy")
            if case["op"] == "gemm":  # no FLOP peak on the CPU: the bandwidth alone
                self.assertIsNone(gate["peak_gflops"])
                self.assertIn("no FLOP peak on the CPU backend", gate["detail"])

    def test_timed_outputs_outcome_follows_its_validation(self):
        def m(d):
            d["cases"][0]["defences"]["timed_outputs"]["outcome"] = "failed"
        self.assert_caught(self.cpu_run, m, "timed_outputs.outcome (its validation)")

        def widened(d):
            d["cases"][0]["defences"]["timed_outputs"]["validation"]["atol"] *= 2
        self.assert_caught(self.cpu_run, widened, "timed_outputs.validation.atol")

    def test_plausible_figure_and_ceiling(self):
        def figure(d):
            d["cases"][0]["defences"]["plausible"]["figures"][0]["gbps"] *= 10
        self.assert_caught(self.cpu_run, figure, "plausible.figures[0].gbps")

        def copy(d):  # a faster copy than its samples show
            d["cases"][0]["defences"]["plausible"]["host_copies"][0]["elapsed_ns"][0] //= 100
        self.assert_caught(self.cpu_run, copy, "plausible.host_copies[0].gbps")

        def margin(d):
            d["cases"][0]["defences"]["plausible"]["margin"] = 40.0
        self.assert_caught(self.cpu_run, margin, "plausible.margin")

        def outcome(d):
            d["cases"][0]["defences"]["plausible"]["outcome"] = "failed"
        self.assert_caught(self.cpu_run, outcome, "plausible.outcome")

    def test_gpu_figures_against_the_copy_ceiling(self):
        def lower(d):  # a ceiling the recorded figures exceed four times over
            d["run"]["copy_ceiling"]["gbps"] = 1.0
            for case in d["cases"]:
                if case["defences"] is not None:
                    case["defences"]["plausible"]["ceiling_gbps"] = 1.0
        self.assert_caught(self.gpu_run, lower, "re-derived 'failed'")

        def skipped(d):
            case = next(c for c in d["cases"] if c["defences"] is not None)
            case["defences"]["plausible"] = {"outcome": "not_run", "detail": "?"}
        self.assert_caught(self.gpu_run, skipped, "plausible.outcome: not run, though")

    def test_control_samples_within_the_host_time_around_them(self):
        """Schema 9: each control sample's GPU time lies within the host's time around it;
        the audit finds a sample beyond it by more than 1 us, and asks for the flag that
        counts such samples exactly then."""
        def schema9(d):
            d["schema_version"] = 9
            for case in (c for c in d["cases"] if c["device"] is not None):
                for metric in ("throughput", "latency"):
                    m = case["device"][metric]
                    controls = [m["control"]] + [r["control"] for r in m.get("batch_modes", {}).values()
                                                 if r["control"] is not None]
                    for control in controls:
                        control["host_elapsed_ns"] = [g + 3000.0 for g in control["elapsed_ns"]]
        result = audit(self.corrupt(self.gpu_run, schema9))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

        def first_eager(d):
            return next(c for c in d["cases"] if c["device"] is not None)["device"]

        def beyond(d):  # one eager sample's GPU time 5 us past the host's time around it
            schema9(d)
            control = first_eager(d)["throughput"]["control"]
            control["host_elapsed_ns"][0] = control["elapsed_ns"][0] - 5000.0
        self.assert_caught(self.gpu_run, beyond, "GPU control beyond the host, eager")

        def flagged(d):
            beyond(d)
            device = first_eager(d)
            samples = len(device["throughput"]["control"]["elapsed_ns"])
            device["flags"].append("scope order: GPU control of a batch exceeds the host's time "
                                   f"around the same batch in 1 of {samples} eager samples (6 against "
                                   "1 ns): the GPU's and the host's clocks disagree")
        result = audit(self.corrupt(self.gpu_run, flagged))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

        def unmeasured(d):  # schema 9 without the host's time around a graph control
            schema9(d)
            del first_eager(d)["throughput"]["batch_modes"]["graph"]["control"]["host_elapsed_ns"]
        result = audit(self.corrupt(self.gpu_run, unmeasured))
        self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
        self.assertIn("batch_modes.graph.control.host_elapsed_ns", result.stderr)


class ToleranceScaleTest(Corruptions, unittest.TestCase):
    """--tolerance-scale F (docs/tolerances.md): strictly parsed, F >= 1, recorded in the
    run and in every validation record, shown in both reports, and re-derived by the
    audit, which refuses a scale below 1 and a case whose tolerance is not op x scale."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-tolerance-scale-")
        cls.run_dir = os.path.join(cls.tmp, "run")
        cls.result = run("run", "--backend", "cpu", "--ops", "softmax,sum", "--shapes", "37x769",
                         "--input-views", "packed", "--tolerance-scale", "4", *FAST,
                         "--out", cls.run_dir)
        assert cls.result.returncode == 0, cls.result.stderr

    def test_recorded_shown_and_audited(self):
        with open(os.path.join(self.run_dir, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["run"]["tolerance_scale"], 4.0)
        documented = {"softmax": (1e-8, 5e-5), "sum": (2e-5 * 769 ** 0.5, 1e-5)}
        for case in doc["cases"]:
            v = case["validation"]
            self.assertEqual(v["tolerance_scale"], 4.0)
            atol, rtol = documented[case["op"]]
            self.assertAlmostEqual(v["atol"], 4 * atol, delta=1e-15)
            self.assertAlmostEqual(v["rtol"], 4 * rtol, delta=1e-15)
            self.assertEqual(case["defences"]["timed_outputs"]["validation"]["atol"], v["atol"])
        note = "TOLERANCES WIDENED: atol and rtol of docs/tolerances.md x 4"
        self.assertIn(note, self.result.stdout)
        with open(os.path.join(self.run_dir, "results.md")) as f:
            self.assertIn(note, f.read())
        self.assertEqual(audit(self.run_dir).returncode, 0)

    def test_default_changes_nothing(self):
        out = os.path.join(self.tmp, "default")
        r = run("run", "--backend", "cpu", "--ops", "softmax", "--shapes", "37x769",
                "--input-views", "packed", *FAST, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("WIDENED", r.stdout)
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["run"]["tolerance_scale"], 1.0)
        self.assertEqual(doc["cases"][0]["validation"]["atol"], 1e-8)

    def test_bad_scales_exit_2(self):
        for text, fragment in [("0.5", "is below 1"), ("0.999", "is below 1"),
                               ("abc", "is not a number"), ("", "is not a number"),
                               ("-1", "is not a number"), ("1e7", "outside"),
                               ("2x", "is not a number"), ("inf", "is not a number")]:
            with self.subTest(text=text):
                out = os.path.join(self.tmp, "never")
                r = run("run", "--backend", "cpu", "--ops", "softmax", "--shapes", "3x5",
                        "--tolerance-scale", text, *FAST, "--out", out)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("--tolerance-scale", r.stderr)
                self.assertIn(fragment, r.stderr)
                self.assertFalse(os.path.exists(out))

    def test_audit_refuses_a_scale_below_1(self):
        def m(d):
            d["run"]["tolerance_scale"] = 0.5
        result = audit(self.corrupt(self.run_dir, m))
        self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
        self.assertIn("run.tolerance_scale", result.stderr)

    def test_audit_needs_op_tolerance_times_scale(self):
        def case_scale(d):  # one case claims another scale than the run's
            d["cases"][0]["validation"]["tolerance_scale"] = 8.0
        self.assert_caught(self.run_dir, case_scale, "validation.tolerance_scale (run.tolerance_scale)")

        def unscaled(d):  # the run says 4, the tolerances are the documented ones
            for case in d["cases"]:
                case["validation"]["atol"] /= 4
        self.assert_caught(self.run_dir, unscaled, "validation.atol (docs/tolerances.md x the scale)")


if __name__ == "__main__":
    unittest.main(verbosity=1)
