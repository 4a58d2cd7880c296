"""Campaigns past one process (docs/campaigns.md), on the CPU backend: `run --shard I/N`
deals a campaign's cases deterministically and keeps every pair in one shard; `merge`
joins the shards into one results file the audit accepts, and refuses a missing,
duplicated, foreign or incomplete shard (a missing one with its cases and the command
that reruns just it, which the test then runs); the audit rejects a merged file whose
shards were tampered with; `--devices` is refused off the CUDA backend.
Run by CTest with TB_BINARY, TB_AUDIT and TB_SOURCE_DIR."""
import collections
import copy
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BINARY = os.environ["TB_BINARY"]
AUDIT = os.environ["TB_AUDIT"]
SOURCE = os.environ["TB_SOURCE_DIR"]
FAST = ["--samples", "3", "--warmup-ms", "1", "--sample-ms", "1"]
CAMPAIGN = ["run", "--ops", "softmax,add,gemm", "--shapes", "37x769,64x64,16x16x16",
            "--providers", "native", *FAST]
REPLAY = ["replay", "--ops", "softmax,rmsnorm", "--shapes", "37x769,64x258", "--rounds", "2",
          *FAST]


def tilebench(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=120)


def audit(*dirs):
    return subprocess.run([sys.executable, AUDIT, *dirs], capture_output=True, text=True,
                          timeout=120)


def load(run_dir):
    with open(os.path.join(run_dir, "results.json")) as f:
        return json.load(f)


def save(run_dir, doc):
    with open(os.path.join(run_dir, "results.json"), "w") as f:
        json.dump(doc, f)


def ids(doc):
    return [c["id"] for c in doc["cases"]]


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-campaigns-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    @classmethod
    def path(cls, *parts):
        return os.path.join(cls.tmp, *parts)

    @classmethod
    def shards(cls, argv, count, name):
        dirs = []
        for i in range(count):
            d = cls.path(name, f"shard-{i}")
            r = tilebench(*argv, "--shard", f"{i}/{count}", "--out", d, "--quiet")
            assert r.returncode == 0, r.stderr
            dirs.append(d)
        return dirs

    @classmethod
    def merged_shards(cls, argv, count, name):
        """The campaign's shards (their folders), merged into the folder "merged"."""
        dirs = cls.shards(argv, count, name)
        r = tilebench("merge", *dirs, "--out", cls.path("merged"), "--quiet")
        assert r.returncode == 0, r.stderr
        return dirs

    def merge(self, *dirs, out):
        return tilebench("merge", *dirs, "--out", out, "--quiet")

    def assert_refused(self, result, code, *fragments):
        self.assertEqual(result.returncode, code, result.stdout + result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)


class ShardsTest(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = tilebench(*CAMPAIGN, "--out", cls.path("whole"), "--quiet")
        assert r.returncode == 0, r.stderr
        cls.whole = load(cls.path("whole"))
        cls.dirs = cls.merged_shards(CAMPAIGN, 3, "three")
        cls.docs = [load(d) for d in cls.dirs]
        cls.merged = load(cls.path("merged"))

    def test_shards_partition_the_campaign(self):
        every = sorted(i for doc in self.docs for i in ids(doc))
        self.assertEqual(every, sorted(ids(self.whole)))
        self.assertEqual(len(set(every)), len(every))
        # balanced: the expected cost here is nearly the same for every case
        sizes = [len(doc["cases"]) for doc in self.docs]
        self.assertLessEqual(max(sizes) - min(sizes), 1, sizes)

    def test_each_shard_records_the_whole_campaign(self):
        units = self.docs[0]["run"]["shard"]["units"]
        for i, doc in enumerate(self.docs):
            record = doc["run"]["shard"]
            self.assertEqual((record["index"], record["count"]), (i, 3))
            self.assertEqual(record["units"], units)
            self.assertEqual(record["campaign_argv"], CAMPAIGN)  # no --shard, --out, --quiet
            mine = {r for u in units if u["shard"] == i for r in u["records"]}
            self.assertEqual(set(ids(doc)), mine)
        self.assertEqual([u["key"] for u in units],
                         list(dict.fromkeys("/".join(i.split("/")[:3]) for i in ids(self.whole))))

    def test_dealing_is_deterministic(self):
        again = self.path("again")
        r = tilebench(*CAMPAIGN, "--shard", "1/3", "--out", again, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = load(again)
        self.assertEqual(ids(doc), ids(self.docs[1]))
        self.assertEqual(doc["run"]["shard"]["campaign_sha256"],
                         self.docs[1]["run"]["shard"]["campaign_sha256"])

    def test_provider_order_as_in_the_whole_campaign(self):
        """A case's providers go in the order they go in the whole campaign (it alternates
        case by case): a shard counts the cases of the others too."""
        example = self.path("user-kernel")
        shutil.copytree(os.path.join(SOURCE, "examples", "user-kernel"), example)
        subprocess.run(["make", "-s", "-C", example,
                        f"TILEBENCH_INCLUDE={os.path.join(SOURCE, 'include')}",
                        f"CC={os.environ.get('CC', 'cc')}"], check=True)
        argv = ["run", "--ops", "softmax,rmsnorm", "--shapes", "37x769,64x64", "--backend", "cpu",
                "--providers", "native,user", "--kernel", os.path.join(example, "libmykernel.so"),
                *FAST]
        whole = self.path("order-whole")
        r = tilebench(*argv, "--out", whole, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        positions = {c["id"]: c["provider_position"] for c in load(whole)["cases"]}
        self.assertIn(0, positions.values())
        for d in self.shards(argv, 3, "order"):
            for case in load(d)["cases"]:
                self.assertEqual(case["provider_position"], positions[case["id"]], case["id"])

    def test_merged_run_audits(self):
        r = audit(self.path("merged"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("MERGED", r.stdout)
        for d in self.dirs:
            r = audit(d)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("SHARD", r.stdout)

    def test_merged_document(self):
        m = self.merged
        self.assertEqual(ids(m), ids(self.whole))  # the whole campaign's order
        merge = m["run"]["merge"]
        self.assertEqual(merge["shard_count"], 3)
        self.assertEqual(m["run"]["argv"], CAMPAIGN)
        self.assertNotIn("shard", m["run"])
        for entry, d in zip(merge["shards"], self.dirs):
            with open(os.path.join(d, "results.json"), "rb") as f:
                raw = f.read()
            self.assertEqual(entry["results_sha256"], hashlib.sha256(raw).hexdigest())
            with open(self.path("merged", entry["file"]), "rb") as f:
                self.assertEqual(f.read(), raw)  # each shard's file kept as it is
        for case in m["cases"]:
            self.assertIn(case["id"], ids(self.docs[case["shard"]]))
            self.assertEqual(case["measured_on"]["backend"], "cpu")
            self.assertIsNone(case["measured_on"]["gpu"])
        self.assertEqual(m["run"]["valid_cases"], len(m["cases"]))
        self.assertFalse(os.path.exists(self.path("merged", ".tilebench-claim")))
        with open(self.path("merged", "results.md")) as f:
            self.assertIn("- merged from 3 shard(s) of campaign", f.read())
        with open(os.path.join(self.dirs[1], "results.md")) as f:
            self.assertIn("- shard 1 of 3 (0-based) of campaign", f.read())

    def test_report_and_compare_read_a_merged_run(self):
        r = tilebench("report", self.path("merged"), "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.strip().splitlines()), 1 + len(self.merged["cases"]))
        r = tilebench("compare", self.path("whole"), self.path("merged"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_merge_refusals(self):
        out = self.path("refused")
        # a shard given twice
        self.assert_refused(self.merge(self.dirs[0], self.dirs[1], self.dirs[1], self.dirs[2],
                                       out=out), 2, "given twice")
        # another campaign's shard (another command line)
        other = self.path("other")
        r = tilebench("run", "--ops", "softmax", "--shapes", "37x769,64x64,16x16", *FAST,
                      "--shard", "1/3", "--out", other, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_refused(self.merge(self.dirs[0], other, self.dirs[2], out=out), 2,
                            "is not a shard of the campaign", "campaign_argv")
        # not a shard at all
        self.assert_refused(self.merge(self.path("whole"), out=out), 2, "not a shard")
        # an existing --out: nothing touched
        keep = self.path("keep")
        os.mkdir(keep)
        self.assert_refused(self.merge(*self.dirs, out=keep), 2, "exists")
        self.assertEqual(os.listdir(keep), [])
        self.assertFalse(os.path.exists(out))

    def tampered(self, name, mutate):
        """A copy of shard 1 changed by mutate."""
        d = self.path(name)
        shutil.copytree(self.dirs[1], d)
        doc = load(d)
        mutate(doc)
        save(d, doc)
        return d

    def test_merge_refuses_a_shard_that_is_not_its_share(self):
        out = self.path("refused-share")
        d = self.tampered("lacking", lambda doc: doc["cases"].pop())
        self.assert_refused(self.merge(self.dirs[0], d, self.dirs[2], out=out), 2, "lacks")
        foreign = copy.deepcopy(self.docs[0]["cases"][0])
        d = self.tampered("extra", lambda doc: doc["cases"].append(foreign))
        self.assert_refused(self.merge(self.dirs[0], d, self.dirs[2], out=out), 2,
                            "not shard 1's share")

        def redeal(doc):
            for unit in doc["run"]["shard"]["units"]:
                unit["shard"] = 0
        d = self.tampered("redealt", redeal)
        self.assert_refused(self.merge(d, out=out), 2, "the rule deals it to")
        d = self.tampered("edited", lambda doc: doc["run"]["shard"]["units"].pop())
        self.assert_refused(self.merge(d, out=out), 2, "not the digest of its units")
        self.assertFalse(os.path.exists(out))

    def test_missing_shard_then_its_rerun(self):
        out = self.path("re run's", "merged")  # quoted in the printed commands
        absent = self.path("re run's", "shard-2")  # never ran: no results.json
        os.makedirs(absent)
        r = self.merge(absent, self.dirs[0], self.dirs[1], out=out)  # a rerun goes beside the first
        self.assert_refused(r, 1, "1 of 3 shard(s) missing", "holds no results.json",
                            "missing cases")
        missing = {u_rec for u in self.docs[0]["run"]["shard"]["units"] if u["shard"] == 2
                   for u_rec in u["records"]}
        for case_id in missing:
            self.assertIn(f"  {case_id} (shard 2)", r.stderr)
        self.assertFalse(os.path.exists(out))
        lines = r.stderr.splitlines()
        rerun = lines[lines.index("rerun just those (a rerun writes a new directory; nothing is "
                                  "replaced):") + 1]
        merge = lines[lines.index("then merge:") + 1]
        self.assertIn("--shard 2/3 --out", rerun)
        rerun_dir = shlex.split(rerun)[-1]
        self.assertEqual(os.path.dirname(rerun_dir), self.path("re run's"))
        self.assertFalse(os.path.exists(rerun_dir))
        # the printed commands, as they are
        done = subprocess.run(shlex.split(rerun) + ["--quiet"], capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(sorted(ids(load(rerun_dir))), sorted(ids(self.docs[2])))
        done = subprocess.run(shlex.split(merge) + ["--quiet"], capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(sorted(ids(load(out))), sorted(ids(self.whole)))
        self.assertEqual(audit(out).returncode, 0)
        # a rerun into a directory that holds results replaces nothing
        r = tilebench(*CAMPAIGN, "--shard", "2/3", "--out", rerun_dir, "--quiet")
        self.assertEqual(r.returncode, 2)
        self.assertIn("not empty", r.stderr)

    def test_interrupted_shard_refuses_the_merge(self):
        d = self.path("interrupted")
        argv = ["run", "--ops", "softmax,add", "--shapes", "37x769,64x64,128x128,256x64",
                "--samples", "3", "--warmup-ms", "200", "--sample-ms", "1"]
        p = subprocess.Popen([BINARY, *argv, "--shard", "0/2", "--out", d, "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
        doc = load(d)
        if doc["run"]["complete"]:
            self.skipTest("the shard finished before the signal")
        self.assertEqual(audit(d).returncode, 0)  # an incomplete shard audits as far as it got
        other = self.path("interrupted-1")
        r = tilebench(*argv, "--warmup-ms", "1", "--shard", "1/2", "--out", other, "--quiet")
        # --warmup-ms given twice is another command line: a foreign shard
        self.assert_refused(self.merge(d, other, out=self.path("m-int")), 2, "campaign_argv")
        shutil.rmtree(other)
        r = tilebench(*argv, "--shard", "1/2", "--out", other, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.merge(d, other, out=self.path("m-int"))
        self.assert_refused(r, 1, "is incomplete: interrupted by SIGTERM", "--shard 0/2 --out")
        self.assertFalse(os.path.exists(self.path("m-int")))

    def test_shard_option_refusals(self):
        out = self.path("never")
        for bad, fragment in (("1/0", "--shard's N"), ("3/3", "below N"), ("a/3", "--shard's I"),
                              ("1", "I/N"), ("0/5000", "--shard's N"), ("/3", "I/N"),
                              ("0/11", "nothing to measure")):
            r = tilebench(*CAMPAIGN, "--shard", bad, "--out", out)
            self.assert_refused(r, 2, fragment)
        r = tilebench(*CAMPAIGN, "--shard", "0/2", "--devices", "0", "--out", out)
        self.assert_refused(r, 2, "exclude each other")
        self.assertFalse(os.path.exists(out))

    def test_devices_off_the_gpu(self):
        out = self.path("never-devices")
        r = tilebench(*CAMPAIGN, "--devices", "0,1", "--backend", "cpu", "--out", out)
        self.assert_refused(r, 2, "one measurement process per GPU", "--shard I/N")
        r = tilebench(*CAMPAIGN, "--devices", "all", "--out", self.path("devices-all"))
        if r.returncode != 0 or "backend is cpu" in r.stderr:  # a machine without a usable GPU
            self.assert_refused(r, 2, "one measurement process per GPU")
            self.assertFalse(os.path.exists(self.path("devices-all")))
        for bad, fragment in (("0,0", "twice"), ("zero", "ordinal"), ("", "--devices"),
                              ("GPU-xyz", "UUID")):
            self.assert_refused(tilebench(*CAMPAIGN, "--devices", bad, "--out", out), 2, fragment)
        self.assertFalse(os.path.exists(out))


class MergedAuditTest(Base):
    """The audit of a merged run against planted changes of its shards."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dirs = cls.merged_shards(CAMPAIGN, 3, "shards")
        r = tilebench("run", "--ops", "softmax,add,gemm", "--shapes", "37x769,64x64,16x16x16",
                      *FAST, "--seed", "2", "--shard", "1/3", "--out", cls.path("foreign"),
                      "--quiet")
        assert r.returncode == 0, r.stderr

    def planted(self, mutate, shard_file=None):
        d = tempfile.mkdtemp(dir=self.tmp)
        shutil.rmtree(d)
        shutil.copytree(self.path("merged"), d)
        doc = load(d)
        mutate(doc)
        save(d, doc)
        if shard_file is not None:
            shard_file(d)
        return d

    def assert_caught(self, d, *fragments):
        r = audit(d)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("DISCREPANCY", r.stderr)
        for fragment in fragments:
            self.assertIn(fragment, r.stderr)

    def test_clean(self):
        self.assertEqual(audit(self.path("merged")).returncode, 0)

    def test_missing_shard(self):
        def m(doc):
            doc["run"]["merge"]["shards"].pop(1)
            doc["cases"] = [c for c in doc["cases"] if c["shard"] != 1]
            doc["run"]["valid_cases"] = len(doc["cases"])
        self.assert_caught(self.planted(m), "every shard exactly once")

    def test_missing_cases(self):
        def m(doc):
            doc["cases"] = [c for c in doc["cases"] if c["shard"] != 1]
            doc["run"]["valid_cases"] = len(doc["cases"])
        self.assert_caught(self.planted(m), "missing cases")

    def test_duplicated_shard(self):
        def m(doc):
            shards = doc["run"]["merge"]["shards"]
            shards.append(copy.deepcopy(shards[2]))
        self.assert_caught(self.planted(m), "every shard exactly once")

    def test_duplicated_case(self):
        def m(doc):
            doc["cases"].append(copy.deepcopy(doc["cases"][0]))
        r = audit(self.planted(m))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("appears twice", r.stderr)

    def test_foreign_shard_file(self):
        def swap(d):
            target = os.path.join(d, "shards", "1", "results.json")
            os.chmod(target, 0o644)
            shutil.copy(os.path.join(self.path("foreign"), "results.json"), target)
        self.assert_caught(self.planted(lambda doc: None, swap), "results_sha256")

    def test_foreign_shard_recorded_as_its_own(self):
        """The foreign file and its digest both planted: the campaign gives it away."""
        with open(os.path.join(self.path("foreign"), "results.json"), "rb") as f:
            raw = f.read()

        def m(doc):
            doc["run"]["merge"]["shards"][1]["results_sha256"] = hashlib.sha256(raw).hexdigest()

        def swap(d):
            target = os.path.join(d, "shards", "1", "results.json")
            os.chmod(target, 0o644)
            with open(target, "wb") as f:
                f.write(raw)
        self.assert_caught(self.planted(m, swap), "one campaign")

    def test_missing_shard_file(self):
        def remove(d):
            os.remove(os.path.join(d, "shards", "0", "results.json"))
        self.assert_caught(self.planted(lambda doc: None, remove), "is missing")

    def test_case_moved_to_another_shard(self):
        def m(doc):
            doc["cases"][0]["shard"] = (doc["cases"][0]["shard"] + 1) % 3
        self.assert_caught(self.planted(m), "shard (its unit's)")

    def test_changed_device(self):
        def m(doc):
            doc["cases"][0]["measured_on"]["hostname"] = "elsewhere"
        self.assert_caught(self.planted(m), "measured_on")

    def test_changed_record(self):
        def m(doc):
            doc["cases"][0]["device_unavailable_reason"] = "edited"  # no per-case check reads it
        self.assert_caught(self.planted(m), "differs from the shard's")

    def test_redealt_units(self):
        def m(doc):
            units = doc["run"]["merge"]["units"]
            other = next(u for u in units if u["shard"] != units[0]["shard"])
            units[0]["shard"], other["shard"] = other["shard"], units[0]["shard"]
        d = self.planted(m)
        r = audit(d)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertTrue("the rule's" in r.stderr or "shard (its unit's)" in r.stderr, r.stderr)

    def test_changed_cost(self):
        def m(doc):
            doc["run"]["merge"]["units"][0]["cost"] += 1
        self.assert_caught(self.planted(m), "campaign_sha256")


class ReplayShardsTest(Base):
    """A replay's pairs (its two variants, every round) stay in one shard; the merged
    replay's summary covers every case and audits."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dirs = cls.merged_shards(REPLAY, 3, "replay")

    def test_pairs_stay_together(self):
        where = {}
        for i, d in enumerate(self.dirs):
            doc = load(d)
            self.assertIn("replay", doc)  # each shard summarises its own share
            for case in doc["cases"]:
                pair = case["id"].rsplit("/", 1)[0]  # without the variant
                where.setdefault(pair, set()).add(i)
                self.assertEqual(case["provider"], "native")
            rounds = collections.Counter((c["id"], c["round"]) for c in doc["cases"])
            self.assertTrue(all(n == 1 for n in rounds.values()))
            per_id = collections.Counter(c["id"] for c in doc["cases"])
            self.assertTrue(all(n == 2 for n in per_id.values()))  # both rounds
        self.assertTrue(all(len(s) == 1 for s in where.values()), where)
        self.assertEqual(len(where), 2 * 2 * 1)  # ops x shapes x views

    def test_merged_replay(self):
        doc = load(self.path("merged"))
        self.assertEqual(len(doc["replay"]["cases"]), 4)
        self.assertEqual(len(doc["cases"]), 4 * 2 * 2)  # pairs x variants x rounds
        self.assertEqual([c["round"] for c in doc["cases"]], sorted(c["round"] for c in doc["cases"]))
        r = audit(self.path("merged"))
        self.assertEqual(r.returncode, 0, r.stderr)


class FixedVariantShardsTest(Base):
    """Fixed register-rows candidates (sSpP) deal, merge and audit like the named variants;
    a replay of automatic against one of them too."""
    FIXED = ["run", "--ops", "softmax,sum", "--shapes", "37x769,64x258",
             "--variants", "automatic,s4p2,s2p1", *FAST]

    def test_shards_merge_and_audit(self):
        r = tilebench(*self.FIXED, "--out", self.path("whole"), "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        dirs = self.shards(self.FIXED, 2, "fixed")
        r = self.merge(*dirs, out=self.path("merged"))
        self.assertEqual(r.returncode, 0, r.stderr)
        merged = load(self.path("merged"))
        self.assertEqual(sorted(ids(merged)), sorted(ids(load(self.path("whole")))))
        self.assertIn("softmax/64x258/strided/native/s4p2", ids(merged))
        self.assertEqual(merged["run"]["variants"], ["automatic", "s4p2", "s2p1"])
        result = audit(self.path("merged"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_replay_shards(self):
        argv = ["replay", "--ops", "softmax", "--shapes", "37x769,64x258", "--rounds", "2",
                "--variants", "automatic,s4p2", *FAST]
        dirs = self.shards(argv, 2, "fixed-replay")
        r = self.merge(*dirs, out=self.path("fixed-replay-merged"))
        self.assertEqual(r.returncode, 0, r.stderr)
        result = audit(self.path("fixed-replay-merged"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        replay = load(self.path("fixed-replay-merged"))["run"]["replay"]
        self.assertEqual((replay["reference"], replay["candidate"]), ("automatic", "s4p2"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
