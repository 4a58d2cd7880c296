"""The audit on input the C side never writes (issue 15): every malformed record is a
DISCREPANCY (exit 1) or a MALFORMED line (exit 3), never a traceback or a hang, and it
reads boundedly; ids, validations and incomplete runs are re-derived; hash fields are
file names, never paths. Each test failed on the audit before issue 15.
Run by CTest with TB_BINARY (the tilebench executable) and TB_AUDIT (the script)."""
import copy
import gzip
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

BINARY = os.environ["TB_BINARY"]
AUDIT = os.environ["TB_AUDIT"]
FAST = ["--samples", "3", "--warmup-ms", "1", "--sample-ms", "1", "--quiet"]
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "audit")
MEMORY_LIMIT = 768 * 2 ** 20  # address space for the runs that must read boundedly


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def audit(*args, timeout=120, bounded=False):
    """The audit as a subprocess; a hang fails the test instead of stopping it."""
    try:
        return subprocess.run([sys.executable, AUDIT, *args], capture_output=True, text=True,
                              timeout=timeout, preexec_fn=limit_memory if bounded else None)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the audit of {args} did not finish in {timeout} s") from None


def load(run_dir):
    path = os.path.join(run_dir, "results.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    with gzip.open(path + ".gz") as f:
        return json.load(f)


def as_v2(doc):
    """A schema version 2 document. A version 1 run (the C side before it wrote version 2)
    lacks max_abs_reference: a large one keeps its validations passing."""
    if doc["schema_version"] == 1:
        doc["schema_version"] = 2
        for case in doc["cases"]:
            if case["validation"] is not None:
                case["validation"]["max_abs_reference"] = 1e30
    return doc


class AuditCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tb-audit-malformed-")
        cls.run_dir = os.path.join(cls.tmp, "run")
        cls.replay_dir = os.path.join(cls.tmp, "replay")
        r = subprocess.run([BINARY, "run", "--shapes", "3x5,4x4x4", "--variants", "reference,automatic",
                            "--matrix-realization", "simt,tensor", *FAST, "--out", cls.run_dir],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([BINARY, "replay", "--ops", "softmax", "--shapes", "8x33", "--rounds", "2",
                            *FAST, "--out", cls.replay_dir], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def new_dir(self, parent=None):
        return tempfile.mkdtemp(dir=parent or self.tmp)

    def write_doc(self, doc, target=None):
        target = target or self.new_dir()
        with open(os.path.join(target, "results.json"), "w") as f:
            json.dump(doc, f)
        return target

    def mutated(self, mutate, source=None, v2=False):
        """A copy of a run whose document `mutate` changed."""
        doc = load(source or self.run_dir)
        if v2:
            as_v2(doc)
        mutate(doc)
        return self.write_doc(doc)

    def raw(self, text):
        target = self.new_dir()
        with open(os.path.join(target, "results.json"), "w") as f:
            f.write(text)
        return target

    def expect(self, result, code, *fragments):
        output = result.stdout + result.stderr
        self.assertNotIn("Traceback", output)
        self.assertEqual(result.returncode, code, output)
        word = {0: "checks passed", 1: "DISCREPANCY", 3: "MALFORMED"}.get(code)
        if word:
            self.assertIn(word, output)
        for fragment in fragments:
            self.assertIn(fragment, output)
        return output


class MalformedInputTest(AuditCase):
    def test_deeply_nested_json(self):
        depth = 100000
        run_dir = self.raw('{"schema": "tilebench.results", "schema_version": 2, "run": '
                           + "[" * depth + "]" * depth + "}")
        self.expect(audit(run_dir), 3, "nested too deeply")

    def test_top_level_array(self):
        self.expect(audit(self.raw("[1, 2, 3]")), 3, "the document", "an object")

    def test_device_that_is_not_an_object(self):
        def m(d):
            d["provenance"]["gpu"] = {"available": True, "devices": [5]}
        self.expect(audit(self.mutated(m)), 3, "provenance.gpu.devices[0]")

    def test_not_json_nor_numbers(self):
        self.expect(audit(self.raw('{"schema": NaN}')), 3, "NaN is no JSON number")
        self.expect(audit(self.raw("{" + '"a": 1, ' * 3)), 3, "not a JSON document")

    def test_short_lists(self):
        def p50(d):
            d["replay"]["cases"][0]["metrics"]["host_throughput"]["reference_p50_ns"].pop()
        self.expect(audit(self.mutated(p50, self.replay_dir)), 1,
                    "host_throughput.reference_p50_ns (count)")

        def gain(d):
            d["replay"]["cases"][0]["metrics"]["host_latency"]["gain"].pop()
        self.expect(audit(self.mutated(gain, self.replay_dir)), 1, "host_latency.gain (count)")

        def order(d):
            d["run"]["replay"]["variant_order"][0] = []
        self.expect(audit(self.mutated(order, self.replay_dir)), 1, "position balance")

    def test_zero_divisor(self):
        def zero_candidate(d):
            # every host throughput sample of the candidate's round 0 took no time: each figure
            # of the case re-derives, and its gain (reference / 0) cannot be shown
            case = next(c for c in d["cases"] if c["variant"] == "candidate" and c["round"] == 0)
            phase = case["host"]["throughput"]
            phase["elapsed_ns"] = [0] * len(phase["elapsed_ns"])
            phase["per_call_ns"] = [0.0] * len(phase["per_call_ns"])
            phase["per_call_summary_ns"] = {"p50": 0.0, "min": 0.0, "max": 0.0}
            case["host"]["stopping"].update(noise=None, sampled_s=0.0)  # no positive median
            # no positive p50: no figure for the plausibility gate, as the C side records it
            case["defences"]["plausible"] = {"outcome": "not_run", "detail": "no timed figure"}
            key = case["id"].rsplit("/", 1)[0]
            entry = next(e for e in d["replay"]["cases"] if e["case"] == key)
            entry["metrics"]["host_throughput"]["candidate_p50_ns"][0] = 0.0
        self.expect(audit(self.mutated(zero_candidate, self.replay_dir)), 1,
                    "host_throughput.withheld")

        def empty_rows(d):  # a lane utilisation of n / (width * slots) with no slots
            d["cases"][0]["execution_plans"][0]["n"] = 0
        self.expect(audit(self.mutated(empty_rows)), 3, "execution_plans[0].n", "a whole number >= 1")

    def test_gzip_bomb_is_refused_quickly_with_bounded_memory(self):
        run_dir = self.new_dir()
        member = zlib.compressobj(9, zlib.DEFLATED, 31)  # one gzip member: 16 MiB of zeros
        member = member.compress(bytes(16 * 2 ** 20)) + member.flush()
        with open(os.path.join(run_dir, "results.json.gz"), "wb") as f:
            f.write(member * 192)  # 3 MB inflating to 3 GiB
        self.assertLess(os.path.getsize(os.path.join(run_dir, "results.json.gz")), 4 * 10 ** 6)
        start = time.monotonic()
        self.expect(audit(run_dir, timeout=60, bounded=True), 3, "more than the 512 MiB")
        self.assertLess(time.monotonic() - start, 30)

    def test_results_file_that_is_not_a_regular_file(self):
        run_dir = self.new_dir()
        os.mkfifo(os.path.join(run_dir, "results.json"))
        self.expect(audit(run_dir, timeout=30), 3, "a FIFO, not a regular file")

    def test_dev_zero_artifact(self):
        def m(d):
            d["provenance"]["artifacts"][0]["path"] = "/dev/zero"
        result = audit(self.mutated(m), "--check-current-artifacts", timeout=60, bounded=True)
        self.expect(result, 1, "sha256 (current file)", "/dev/zero is a character device")

    def test_missing_keys_and_wrong_types(self):
        def no_samples(d):
            del d["run"]["measure"]["samples"]
        self.expect(audit(self.mutated(no_samples)), 3, "run.measure.samples: missing")

        def text_bound(d):
            d["cases"][0]["validation"]["atol"] = "small"
        self.expect(audit(self.mutated(text_bound)), 3, "validation.atol", "a finite number")

        def bool_count(d):  # True == 1 in Python: a bool must not pass for a count
            d["cases"][0]["host"]["latency"]["calls_per_sample"] = True
        self.expect(audit(self.mutated(bool_count)), 3, "host.latency.calls_per_sample")


class SourcesTest(AuditCase):
    """source_sha256 names a file of a content-addressed store: the run's sources/, else the
    sources/ of the nearest directory above the run."""
    SOURCE = b"// an elementwise kernel: no barriers\n"

    def with_source(self, parent=None, sha=None):
        """A copy of the run placed under `parent` whose add case names SOURCE by its digest."""
        sha = sha or hashlib.sha256(self.SOURCE).hexdigest()
        doc = load(self.run_dir)
        next(c for c in doc["cases"] if c["op"] == "add")["source_sha256"] = sha
        return self.write_doc(doc, self.new_dir(parent)), sha

    def store(self, directory, sha, content):
        os.makedirs(os.path.join(directory, "sources"), exist_ok=True)
        with open(os.path.join(directory, "sources", sha + ".cu"), "wb") as f:
            f.write(content)

    def test_source_found_in_an_ancestor_store(self):
        root = self.new_dir()
        nested = os.path.join(root, "a", "b")
        os.makedirs(nested)
        run_dir, sha = self.with_source(nested)
        self.expect(audit(run_dir), 1, "no archived source")
        self.store(root, sha, self.SOURCE)
        self.expect(audit(run_dir), 0)
        self.store(run_dir, sha, b"// the run's own copy comes first\n")
        self.expect(audit(run_dir), 1, "hash of the archived file")

    def test_fifo_source_does_not_hang(self):
        run_dir, sha = self.with_source()
        os.makedirs(os.path.join(run_dir, "sources"))
        os.mkfifo(os.path.join(run_dir, "sources", sha + ".cu"))
        self.expect(audit(run_dir, timeout=30), 3, "a FIFO, not a regular file")

    def test_hash_field_is_no_path(self):
        secret_dir = self.new_dir()
        secret = b"not for the audit to read\n"
        with open(os.path.join(secret_dir, "secret.cu"), "wb") as f:
            f.write(secret)
        digest = hashlib.sha256(secret).hexdigest()
        for name in (os.path.join(secret_dir, "secret"),
                     os.path.join("..", "..", os.path.relpath(secret_dir, "/"), "secret"),
                     "AB" * 32, "ab" * 31):
            run_dir, _ = self.with_source(sha=name)
            output = self.expect(audit(run_dir), 3, "source_sha256", "64 lower-case hex digits")
            self.assertNotIn(digest, output)

    def test_labels_recorded_and_rederived(self):
        recorded = "cd" * 32
        run_dir, _ = self.with_source(sha=recorded)
        self.store(run_dir, recorded, self.SOURCE)
        actual = hashlib.sha256(self.SOURCE).hexdigest()
        self.expect(audit(run_dir), 1, f"recorded '{recorded}', re-derived '{actual}'")

        def planted(d):
            d["provenance"]["artifacts"][0]["sha256"] = "00" * 32
        with open(load(self.run_dir)["provenance"]["artifacts"][0]["path"], "rb") as f:
            current = hashlib.sha256(f.read()).hexdigest()
        result = audit(self.mutated(planted), "--check-current-artifacts")
        self.expect(result, 1, f"recorded '{'00' * 32}', re-derived '{current}'")


class IdentityTest(AuditCase):
    def test_swapped_ids(self):
        def rows(d):
            d["cases"][0]["id"], d["cases"][1]["id"] = d["cases"][1]["id"], d["cases"][0]["id"]
        self.expect(audit(self.mutated(rows)), 1, "id (op/dims/view/provider[/suffix]")

        def views(d):  # same realization suffix, other views
            gemm = [c for c in d["cases"] if c["op"] == "gemm" and c["realization"] == "simt"]
            gemm[0]["id"], gemm[1]["id"] = gemm[1]["id"], gemm[0]["id"]
        self.expect(audit(self.mutated(views)), 1, "id (op/dims/view/provider[/suffix]")

    def test_renamed_shape(self):
        def m(d):
            d["cases"][0]["id"] = d["cases"][0]["id"].replace("3x5", "4x5")
        self.expect(audit(self.mutated(m)), 1, "recorded 'sum/4x5/")

    def test_variant_only_on_planned_cases(self):
        def m(d):
            next(c for c in d["cases"] if c["op"] == "add")["variant"] = "reference"
        self.expect(audit(self.mutated(m)), 1, "variant (set exactly on")

    def test_duplicate_id(self):
        def m(d):
            d["cases"].append(copy.deepcopy(d["cases"][0]))
            d["run"]["valid_cases"] += 1
        self.expect(audit(self.mutated(m)), 1, "appears twice")

    def test_replay_repeats_ids_once_per_round(self):
        self.expect(audit(self.replay_dir), 0)

        def m(d):
            d["cases"][0]["round"] = 1 - d["cases"][0]["round"]
        self.expect(audit(self.mutated(m, self.replay_dir)), 1, "appears twice in round")


class ValidationTest(AuditCase):
    def valid_case(self, d):
        return next(c for c in d["cases"] if c["valid"] and c["op"] == "softmax")

    def test_passed_with_an_error_beyond_the_tolerance(self):
        def m(d):
            v = self.valid_case(d)["validation"]
            v["max_abs_error"] = 10 * (v["atol"] + v["rtol"] * v["max_abs_reference"])
        self.expect(audit(self.mutated(m, v2=True)), 1, "validation.max_abs_error",
                    "atol + rtol * max_abs_reference")

    def test_passed_with_a_non_finite_output(self):
        def m(d):
            self.valid_case(d)["validation"]["max_abs_error"] = None
        self.expect(audit(self.mutated(m)), 1, "validation.non_finite_errors")

        def both(d):
            v = self.valid_case(d)["validation"]
            v["max_abs_error"], v["non_finite_errors"] = None, True
        self.expect(audit(self.mutated(both)), 1, "passed with a non-finite output")

    def test_first_failure_iff_failed_elements(self):
        def spurious(d):
            self.valid_case(d)["validation"]["first_failure"] = {"index": 0, "got": 2.0, "expected": 1.0}
        self.expect(audit(self.mutated(spurious)), 1, "first_failure (present iff failed_elements > 0)")

        def within(d):
            case = self.valid_case(d)
            v = case["validation"]
            v.update(passed=False, failed_elements=1, first_failure={"index": 0, "got": 0.5, "expected": 0.5})
            case["valid"] = False
            d["run"]["valid_cases"] -= 1
        self.expect(audit(self.mutated(within)), 1, "within the tolerance")

    def test_more_failed_than_checked(self):
        def m(d):
            case = self.valid_case(d)
            v = case["validation"]
            v.update(passed=False, failed_elements=v["checked_elements"] + 1,
                     first_failure={"index": 0, "got": 9.0, "expected": 0.5})
            case["valid"] = False
            d["run"]["valid_cases"] -= 1
        self.expect(audit(self.mutated(m)), 1, "validation.failed_elements")

    def test_a_failed_defence_makes_the_case_invalid(self):
        # method §8: a valid case whose defence failed, and one that dropped its defences
        def failed(d):
            self.valid_case(d)["defences"]["guard_zones"]["outcome"] = "failed"
        self.expect(audit(self.mutated(failed)), 1, "valid")

        def dropped(d):
            self.valid_case(d)["defences"] = None
        self.expect(audit(self.mutated(dropped)), 1, "defences")

        def unknown(d):
            self.valid_case(d)["defences"]["every_call"]["outcome"] = "skipped"
        self.expect(audit(self.mutated(unknown)), 3, "defences.every_call.outcome")

    def test_version_decides_not_field_presence(self):
        v1 = os.path.join(CORPUS, "v1-run")
        self.expect(audit(v1), 0)

        def beyond(d):  # version 1 records no max_abs_reference: that check is skipped
            v = next(c for c in d["cases"] if c["valid"])["validation"]
            v["max_abs_error"] = 10 * v["atol"]
            v["max_abs_reference"] = 0.0  # not read in a version 1 record
        self.expect(audit(self.mutated(beyond, v1)), 0)

        def lacking(d):
            del d["cases"][0]["validation"]["max_abs_reference"]
        self.expect(audit(self.mutated(lacking, v2=True)), 3, "validation.max_abs_reference: missing")

        def version(d):
            d["schema_version"] = 10  # beyond the newest
        self.expect(audit(self.mutated(version)), 3, "schema_version")


class IncompleteRunTest(AuditCase):
    def interrupted(self, d, dropped=2, signal="SIGINT"):
        missing = [c["id"] for c in d["cases"][-dropped:]]
        d["run"]["valid_cases"] -= sum(c["valid"] for c in d["cases"][-dropped:])
        del d["cases"][-dropped:]
        d["run"].update(complete=False, error=f"interrupted by {signal}: {dropped} case(s) not measured",
                        interrupted={"signal": signal, "missing_cases": missing})

    def assert_labelled(self, result, *fragments):
        output = self.expect(result, 0, "INCOMPLETE run", *fragments)
        for line in output.splitlines():
            if "checks passed" in line:
                self.assertIn("INCOMPLETE", line)

    def test_interrupted_run_labelled(self):
        self.assert_labelled(audit(self.mutated(self.interrupted)), "interrupted by SIGINT, 2 case(s) missing")

    def test_interrupted_runs_of_the_binary(self):
        """Runs the C side stopped by SIGINT (a run) and SIGTERM (a replay) for the corpus."""
        self.assert_labelled(audit(os.path.join(CORPUS, "v2-interrupted")), "interrupted by SIGINT")
        self.assert_labelled(audit(os.path.join(CORPUS, "v2-interrupted-replay")), "interrupted by SIGTERM")

    def test_stopped_early_without_a_reason_is_malformed(self):
        def m(d):
            self.interrupted(d)
            d["run"]["error"] = None
        self.expect(audit(self.mutated(m)), 3, "run.error", "must say why")

        def complete_yet_interrupted(d):
            d["run"]["interrupted"] = {"signal": "SIGINT", "missing_cases": []}
        self.expect(audit(self.mutated(complete_yet_interrupted)), 3, "run.interrupted")

    def test_missing_case_that_was_measured(self):
        def m(d):
            self.interrupted(d)
            d["run"]["interrupted"]["missing_cases"].append(d["cases"][0]["id"])
        self.expect(audit(self.mutated(m)), 1, "run.interrupted.missing_cases")

    def test_figures_of_the_present_cases_still_audited(self):
        def m(d):
            self.interrupted(d)
            d["cases"][0]["host"]["latency"]["per_call_summary_ns"]["p50"] *= 1.5
        self.expect(audit(self.mutated(m)), 1, "host.latency.per_call_summary_ns.p50")


class UsageTest(AuditCase):
    def test_exit_codes(self):
        self.expect(audit(os.path.join(self.tmp, "absent")), 2, "not a directory")
        self.expect(audit(self.new_dir()), 2, "results.json not found")
        self.expect(audit("--no-such-option", self.run_dir), 2)
        helped = audit("--help")
        self.assertEqual(helped.returncode, 0)
        for fragment in ("exit status", "DISCREPANCY", "MALFORMED", "bad usage"):
            self.assertIn(fragment, helped.stdout)

    def test_gzipped_results(self):
        run_dir = self.new_dir()
        with open(os.path.join(self.run_dir, "results.json"), "rb") as f:
            original = f.read()
        with gzip.open(os.path.join(run_dir, "results.json.gz"), "wb") as f:
            f.write(original)
        receipt = os.path.join(self.tmp, "receipt-gz.json")
        self.expect(audit(run_dir, "--receipt", receipt), 0)
        with open(receipt) as f:
            self.assertEqual(json.load(f)["inputs"][0]["results_sha256"], hashlib.sha256(original).hexdigest())


if __name__ == "__main__":
    unittest.main(verbosity=1)
